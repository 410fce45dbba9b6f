"""Drawing joint limits: triangle fans of the allowed swing directions, on plain numpy arrays.

No VTK here: ``fabrik3d_web.scene_view`` turns the fans into translucent actors. Angles
in degrees as in ``fabrik3d.constraints``; positions ``(n, 3)`` in scene units and
rotations ``(n, 4)`` world frames (x, y, z, w), both in skeleton order.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.model.skeleton import Skeleton


def limit_fans(
    skeleton: Skeleton,
    positions: np.ndarray,
    rotations: np.ndarray,
    size: float,
    joints: Collection[str] = (),
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Triangle fans that show the swing limits of ``skeleton`` at a pose.

    A cone (``Cone``, ``EllipticalCone``) is a fan from the joint around the directions its
    bone may take; a hinge is a flat fan from ``min_deg`` to ``max_deg`` in its plane. Both
    move with the parent's frame (``fabrik3d.constraints``: limits are relative to it).

    Args:
        skeleton: the skeleton; its ``constraints`` are drawn.
        positions: ``(n, 3)`` joint positions; rotations: ``(n, 4)`` world frames.
        size: the skeleton's length scale (scene units), for the fans' minimum length.
        joints: names of the joints to draw (empty: every constrained joint).

    Returns:
        ``((cone_points (p, 3), cone_triangles (t, 3)), (hinge_points, hinge_triangles))``.
    """
    out: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {"cone": ([], []), "hinge": ([], [])}
    rest = skeleton.rest_positions
    for name, limits in skeleton.constraints.items():
        if joints and name not in joints:
            continue
        j = skeleton.index(name)
        child = skeleton.first_child(j)
        if child < 0:
            continue
        bone = rest[child] - rest[j]
        bone = bone / np.linalg.norm(bone)
        p = skeleton.parents[j]
        moved = rot.mul(tuple(rotations[p]), rot.conj(tuple(skeleton.rest_frames[p]))) if p >= 0 else rot.IDENTITY
        length = max(0.6 * float(skeleton.bone_lengths[child]), 0.04 * size)
        for limit in limits:
            fan = _swing_fan(limit, bone)
            if fan is None:
                continue
            kind, directions = fan
            world = np.array([rot.rotate(moved, tuple(d)) for d in directions])
            points, triangles = out[kind]
            base = sum(len(x) for x in points)
            points.append(np.vstack([positions[j], positions[j] + length * world]))
            k = np.arange(1, len(world))
            triangles.append(np.column_stack([np.zeros_like(k), k, k + 1]) + base)
    result = []
    for kind in ("cone", "hinge"):
        points, triangles = out[kind]
        result.append(
            (
                np.vstack(points) if points else np.zeros((0, 3)),
                np.vstack(triangles) if triangles else np.zeros((0, 3), dtype=int),
            )
        )
    return result[0], result[1]


def _swing_fan(limit: Any, bone: np.ndarray) -> tuple[str, np.ndarray] | None:
    """``(kind, (m, 3) unit directions)`` on the rim of a swing limit around the rest ``bone``, in rest world axes."""
    kind = type(limit).__name__
    if kind in ("Cone", "EllipticalCone"):
        if kind == "Cone":
            left = right = up = down = float(limit.max_deg)
            axis = np.array([1.0, 0.0, 0.0]) if abs(bone[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
        else:
            left, right, up, down = limit.left_deg, limit.right_deg, limit.up_deg, limit.down_deg
            axis = np.array(limit.right_axis, dtype=float)
        r = axis - bone * float(axis @ bone)
        if np.linalg.norm(r) < 1e-9:
            return None
        r = r / np.linalg.norm(r)
        u = np.cross(r, bone)
        phi = np.linspace(0.0, 2.0 * math.pi, 49)
        x, z = np.cos(phi), np.sin(phi)
        a = np.where(x >= 0, right, left)
        b = np.where(z >= 0, up, down)
        theta = np.radians(1.0 / np.sqrt((x / a) ** 2 + (z / b) ** 2))
        return "cone", np.cos(theta)[:, None] * bone + np.sin(theta)[:, None] * (x[:, None] * r + z[:, None] * u)
    if kind == "Hinge":
        axis = np.array(limit.axis, dtype=float)
        axis = axis / np.linalg.norm(axis)
        d0 = bone - axis * float(bone @ axis)
        if np.linalg.norm(d0) < 1e-9:
            return None
        d0 = d0 / np.linalg.norm(d0)
        t = np.radians(np.linspace(limit.min_deg, limit.max_deg, max(3, int(abs(limit.max_deg - limit.min_deg) / 5))))
        return "hinge", np.cos(t)[:, None] * d0 + np.sin(t)[:, None] * np.cross(axis, d0)
    return None
