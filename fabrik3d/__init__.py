"""fabrik3d: FABRIK inverse kinematics for skeletons (Aristidou & Lasenby 2011).

Conventions: Y up, scene units (metres in the presets), joint limits in degrees,
quaternions as (x, y, z, w). Pure Python on numpy.
"""

from fabrik3d.batch import BatchResult, solve_batch
from fabrik3d.chain import ChainResult, solve_chain
from fabrik3d.constraints import Cone, EllipticalCone, Hinge, Rigid, Twist
from fabrik3d.scene import Scene, load_scene, save_scene
from fabrik3d.skeleton import Skeleton
from fabrik3d.solver import SolveResult, solve
from fabrik3d.targets import Target

__all__ = [
    "BatchResult",
    "ChainResult",
    "Cone",
    "EllipticalCone",
    "Hinge",
    "Rigid",
    "Scene",
    "Skeleton",
    "SolveResult",
    "Target",
    "Twist",
    "load_scene",
    "save_scene",
    "solve",
    "solve_batch",
    "solve_chain",
]
__version__ = "0.1.0"
