"""The course's formulas: the only home of every number the notebooks, plots and the planner
estimate from sizes.

Read in this order:

1. :mod:`labs.formulas.memory` -- bytes of model states (parameters, gradients, optimizer
   states; split over TP x PP, sharded by ZeRO), of a transformer layer (12·h²) and of
   activations, estimated and measured;
2. :mod:`labs.formulas.fit` -- "does it fit?": one decision type (:class:`FitDecision`) for one
   card (2.1), the tensor-parallel degree (2.2) and the pipeline stages (2.3);
3. :mod:`labs.formulas.cost` -- bytes on the wire, bubbles, time on a link, FLOPs (and the fit
   decisions, offered there too, where the notebooks call them).

``from labs.formulas import cost, memory`` is how notebooks, plots and the planner use them.

Owns: this map. Must not: import its modules at import time (``memory`` imports torch), hold a
formula of its own, or import a parallelism package, the planner or the grader.
"""

__all__ = ["cost", "fit", "memory"]
