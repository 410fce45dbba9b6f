"""fabrik3d: FABRIK inverse kinematics for skeletons (Aristidou & Lasenby 2011).

Conventions: Y up, scene units (metres in the presets), joint limits in degrees,
quaternions as (x, y, z, w). Pure Python on numpy.
"""

from fabrik3d.chain import ChainResult, solve_chain
from fabrik3d.skeleton import Skeleton
from fabrik3d.solver import SolveResult, solve

__all__ = ["ChainResult", "Skeleton", "SolveResult", "solve", "solve_chain"]
__version__ = "0.1.0"
