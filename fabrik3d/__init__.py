"""fabrik3d: FABRIK inverse kinematics for skeletons (Aristidou & Lasenby 2011).

Conventions: Y up, scene units (metres in the presets), joint limits in degrees,
quaternions as (x, y, z, w). Pure Python on numpy.

The layers (docs/architecture.md): ``model`` (skeleton, constraints, rest frames, presets,
targets) -> ``solver`` (chain, tree, rig, limits, the constrained solve) -> ``batch`` (the
vectorised twins) -> ``io`` (scene, take, glTF files) -> ``display`` and the front ends (``cli``,
``notebook``; the web app is the package ``fabrik3d_web``). Submodules are reachable as attributes
(``fabrik3d.presets.get("humanoid")``), imported on first use.
"""

import importlib
from typing import Any

from fabrik3d.batch.solve import BatchResult, solve_batch
from fabrik3d.io.pose_library import delete_pose, load_library, save_pose, starter_poses
from fabrik3d.io.scene import Scene, load_scene, save_scene
from fabrik3d.io.stage import Stage, load_stage, save_stage
from fabrik3d.model.constraints import Cone, EllipticalCone, Hinge, Rigid, Twist
from fabrik3d.model.mass import center_of_mass, support_area
from fabrik3d.model.mirror import mirror_goals
from fabrik3d.model.pose_library import Pose
from fabrik3d.model.posing import Posing, Swivel
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import Target, free, pin
from fabrik3d.solver.chain import ChainResult, solve_chain
from fabrik3d.solver.hands import shape_hand
from fabrik3d.solver.look import face_axis, look_at
from fabrik3d.solver.pose_apply import apply_pose, capture_pose
from fabrik3d.solver.tree import SolveResult, solve

__all__ = [
    "BatchResult",
    "ChainResult",
    "Cone",
    "EllipticalCone",
    "Hinge",
    "Pose",
    "Posing",
    "Rigid",
    "Scene",
    "Skeleton",
    "SolveResult",
    "Stage",
    "Swivel",
    "Target",
    "Twist",
    "apply_pose",
    "capture_pose",
    "center_of_mass",
    "delete_pose",
    "face_axis",
    "free",
    "load_library",
    "load_scene",
    "load_stage",
    "look_at",
    "mirror_goals",
    "pin",
    "save_pose",
    "save_scene",
    "save_stage",
    "shape_hand",
    "solve",
    "solve_batch",
    "solve_chain",
    "starter_poses",
    "support_area",
]
__version__ = "0.1.0"

# Submodules and subpackages reachable as attributes, imported on first use (so ``import fabrik3d``
# stays cheap and the notebook's and the CLI's dependencies load only when asked for).
_SUBMODULES = frozenset(
    {
        "animation", "batch", "checks", "cli", "display", "io", "model", "notebook", "pictures", "rotations", "solver",
        "stage",
        # the old paths (thin re-exports of the layers' modules)
        "chain", "constraints", "frames", "gltf", "presets", "scene", "skeleton", "take", "targets",
    }
)  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"fabrik3d.{name}")
    raise AttributeError(f"module 'fabrik3d' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})
