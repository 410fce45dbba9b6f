"""Batches: ``solve_batch`` (``solve``) and the vectorised twins of the solver's modules, each
beside the scalar code it mirrors (``twins.TWINS`` maps every pair).

``fabrik3d.batch`` is also the old path of ``solve_batch`` and ``BatchResult``.
"""

from fabrik3d.batch.solve import BatchResult, solve_batch

__all__ = ["BatchResult", "solve_batch"]
