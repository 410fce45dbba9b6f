"""The constrained solve vectorised over a batch: the twins of ``fabrik3d.solver.constrained``."""
