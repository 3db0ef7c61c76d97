"""The course's grader: ``python -m grader PATH`` scores a class's submitted notebooks.

A package of its own, beside the course library: it imports ``labs`` (the checks it judges with,
the messages it speaks in), ``labs`` never imports it, and the student's kernel sees only what
the grader injects there (:mod:`grader.recorder` and :mod:`grader.record`).

- :mod:`grader.cli` -- the command line and the run over a class (jobs, progress, resume);
- :mod:`grader.sources` -- which source a submission answers, which cells run (the plan);
- :mod:`grader.submission` -- one submission: its worker and its records;
- :mod:`grader.verdicts` -- its exercises scored: verdicts, the reasons lost, flags, notes;
- :mod:`grader.runner` -- the worker process: the kernel, its cells, its time limits
  (:mod:`grader.limits`), in the sandbox of :mod:`grader.sandbox`;
- :mod:`grader.recorder` (in the student's kernel) and :mod:`grader.record` (the records'
  format and codec); :mod:`grader.judge` -- the verdict, decided in the grader's process;
- :mod:`grader.copying` -- the copy and tampering flags of the report (for review only);
- :mod:`grader.results` -- results, ``grades.csv``/``grades.json``, the summary table;
- :mod:`grader.bench` -- ``python -m grader.bench``: the grader's throughput on a class.

Importing this package imports nothing else (the kernel imports :mod:`grader.recorder` at start).

Owns: the package's map only. Must not: import its submodules or ``labs`` at import time (the kernel
imports grader.recorder alone), and ``labs`` must never import ``grader``.
"""

__all__: list[str] = []
