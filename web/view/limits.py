"""Joint limits as triangle fans for the VTK scene: ``fabrik3d.display.limit_rims``, each rim a fan
from its joint.

No VTK here: ``fabrik3d_web.view.scene_view`` turns the fans into translucent actors. Positions
``(n, 3)`` in scene units and rotations ``(n, 4)`` world frames (x, y, z, w), in skeleton order.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from fabrik3d.display import limit_rims
from fabrik3d.model.skeleton import Skeleton

# Segments of a fan's rim or arc.
FAN_SEGMENTS = 48


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
    move with the parent's frame. A fan is 0.6 × the limited bone long, at least 0.04 × ``size``.

    Args:
        skeleton: the skeleton; its ``constraints`` are drawn.
        positions: ``(n, 3)`` joint positions; rotations: ``(n, 4)`` world frames.
        size: the skeleton's length scale (scene units), for the fans' minimum length.
        joints: names of the joints to draw (empty: every constrained joint).

    Returns:
        ``((cone_points (p, 3), cone_triangles (t, 3)), (hinge_points, hinge_triangles))``.
    """
    out: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {"cone": ([], []), "hinge": ([], [])}
    for rim in limit_rims(skeleton, rotations, joints, FAN_SEGMENTS):
        length = max(0.6 * rim.bone_length, 0.04 * size)
        points, triangles = out[rim.kind]
        base = sum(len(x) for x in points)
        points.append(np.vstack([positions[rim.joint], positions[rim.joint] + length * rim.directions]))
        k = np.arange(1, len(rim.directions))
        triangles.append(np.column_stack([np.zeros_like(k), k, k + 1]) + base)
    cones, hinges = (
        (
            np.vstack(points) if points else np.zeros((0, 3)),
            np.vstack(triangles) if triangles else np.zeros((0, 3), dtype=int),
        )
        for points, triangles in (out["cone"], out["hinge"])
    )
    return cones, hinges
