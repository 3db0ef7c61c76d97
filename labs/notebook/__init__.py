"""What the notebooks need around the course's code: figures, fonts, timelines, the cell clock and
the hosted bootstrap.

Read in this order:

1. :mod:`labs.notebook.timeline` -- the one timeline type (what each rank did and when),
   produced by layer-wise model parallelism, the pipeline schedules and the hybrid steps;
2. :mod:`labs.notebook.plots` -- the figure style (size, dpi, colours, number format), labels in
   the notebook's language, the figures several notebooks share and the one timeline plot;
3. :mod:`labs.notebook.fonts` -- the CJK font for Chinese labels, or English labels without it;
4. :mod:`labs.notebook.cell_clock` -- how long a notebook's cells ran (the closing cell's line);
5. :mod:`labs.notebook.hosted` -- what the first cell of every notebook calls on Google Colab
   or Kaggle (the bootstrap cell imports ``labs.notebook.hosted`` by that name).

``from labs.notebook import plots`` imports matplotlib; the package itself imports nothing, so
``labs.notebook.hosted`` and ``labs.notebook.timeline`` stay free of torch and matplotlib.

Owns: this map. Must not: import its modules at import time, hold logic of its own, or import a
parallelism package, the checks or the grader.
"""

__all__ = ["cell_clock", "fonts", "hosted", "plots", "timeline"]
