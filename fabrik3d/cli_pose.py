"""The command line's pose options: ``--target``, ``--turn``, ``--look`` and ``--hand`` read and applied
to a scene (``fabrik3d.cli``)."""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.io.scene import Scene
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.targets import Target
from fabrik3d.model.workspace import check_floor
from fabrik3d.solver.hands import shape_hand
from fabrik3d.solver.tree import SolveResult, solve


def parse_target(text: str) -> tuple[str, np.ndarray]:
    """``NAME=X,Y,Z`` -> ``(name, point)``; ``ValueError`` if malformed."""
    name, sep, coords = text.partition("=")
    parts = coords.split(",")
    try:
        if not sep or not name or len(parts) != 3:
            raise ValueError
        point = np.array([float(p) for p in parts])
    except ValueError:
        raise ValueError(f"--target {checks.quoted(text)}: expected NAME=X,Y,Z") from None
    return name, point


def parse_turn(text: str) -> tuple[str, tuple[float, float, float]]:
    """``NAME=RX,RY,RZ`` (degrees) -> ``(name, angles)``; ``ValueError`` if malformed."""
    name, sep, angles = text.partition("=")
    parts = angles.split(",")
    try:
        if not sep or not name or len(parts) != 3:
            raise ValueError
        xyz = tuple(float(p) for p in parts)
        if not all(math.isfinite(a) and abs(a) <= 360.0 for a in xyz):
            raise ValueError
    except ValueError:
        raise ValueError(f"--turn {text[:60]!r}: expected NAME=RX,RY,RZ in degrees (each within ±360)") from None
    return name, xyz  # type: ignore[return-value]


def parse_look(text: str) -> np.ndarray:
    """``X,Y,Z`` -> ``(3,)``; ``ValueError`` if malformed."""
    try:
        point = np.array([float(p) for p in text.split(",")])
        if point.shape != (3,) or not np.all(np.isfinite(point)):
            raise ValueError
    except ValueError:
        raise ValueError(f"--look {text[:60]!r}: expected X,Y,Z") from None
    return point


def turned_goals(skeleton: Skeleton, targets: dict[str, Any], specs: Sequence[str]) -> dict[str, Any]:
    """``targets`` with the ``--turn`` orientations: each named effector's rest orientation turned by
    its Euler angles (Blender's XYZ, degrees, about the world axes); it needs a target."""
    goals = dict(targets)
    for spec in specs:
        name, xyz = parse_turn(spec)
        if name not in skeleton.names:
            raise ValueError(f"--turn {checks.quoted(name)}: not a joint of the skeleton")
        if name not in goals:
            raise ValueError(f"--turn {name}: give {name} a --target too (its orientation turns it where it is put)")
        rest = tuple(skeleton.rest_frames[skeleton.index(name)].tolist())
        goals[name] = Target(goals[name], rot.mul(rot.from_euler_xyz(xyz), rest))  # type: ignore[arg-type]
    return goals


def parse_floor(text: str | None, default: float | None, skeleton: Skeleton) -> float | None:
    """``--floor Y`` (a height within the skeleton's workspace, or ``none``); ``default`` (the
    scene's) without it."""
    if text is None:
        return default
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ValueError(f"--floor {text[:60]!r}: expected a height or none")
    return check_floor(value, skeleton, "--floor")


def _solve_scene(scene: Scene, args: argparse.Namespace, head: str = "head") -> SolveResult:
    """The scene solved with its targets, ``--turn`` orientations and ``--look``, its hands shaped by
    ``--hand SIDE=SHAPE`` (``fabrik3d.solver.hands.shape_hand``)."""
    look = None if args.look is None else {head: parse_look(args.look)}
    result = solve(
        scene.skeleton,
        turned_goals(scene.skeleton, scene.targets, args.turn),
        root_target=scene.root_target,
        weights=scene.weights,
        tolerance=scene.tolerance,
        max_iterations=scene.max_iterations,
        look_at=look,
        floor=parse_floor(getattr(args, "floor", None), scene.floor, scene.skeleton),
        balance=scene.balance or bool(getattr(args, "balance", False)),
    )
    for spec in getattr(args, "hand", []):
        side, _, shape = spec.partition("=")
        try:
            p, q = shape_hand(scene.skeleton, result.positions, result.rotations, side.strip(), shape.strip())
        except ValueError as exc:
            raise ValueError(f"--hand {spec[:60]!r}: {exc}") from None
        result = dataclasses.replace(result, positions=p, rotations=q)
    return result


def apply_targets(scene: Scene, specs: Sequence[str]) -> Scene:
    """The scene with ``--target`` values added (they replace the scene's own)."""
    targets = dict(scene.targets)
    for spec in specs:
        name, point = parse_target(spec)
        if not scene.skeleton.is_effector(name):
            valid = checks.names_list(scene.skeleton.end_effectors)
            raise ValueError(f"--target {checks.cut(name)}: not an end effector; valid names are {valid}")
        targets[name] = point
    return dataclasses.replace(scene, targets=targets)
