"""The solver: one chain (``chain``), a tree of chains (``tree``, its plan ``plan``), the rig every solve runs on
(``rig``), the joint limits' projections (``limits``) and the constrained solve (``constrained``).

``fabrik3d.solver`` is also the old path of ``solve`` and ``SolveResult``.
"""

from fabrik3d.solver.tree import SolveResult, solve

__all__ = ["SolveResult", "solve"]
