"""What every view draws, on plain numpy arrays: limit rims, pole chains and homes, a skeleton's size,
bone tubes and limit outlines.

The web UI (``fabrik3d_web.view.scene_view``) and the notebook view (``fabrik3d.notebook``) turn these
into their own geometry (VTK polygons, pythreejs line segments); the rules live here once. No
graphics library is imported. Conventions as everywhere: positions in scene units, ``(n, 3)``;
world frames ``(n, 4)`` quaternions (x, y, z, w); joint limits in degrees, their axes in world
coordinates of the rest pose, carried by the parent's frame (``fabrik3d.model.constraints``).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any, NamedTuple

import numpy as np

from fabrik3d.model.constraints import Cone, EllipticalCone, Hinge, Rigid
from fabrik3d.model.posing import hinge_above
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.model.workspace import skeleton_size as skeleton_size  # (re-export: it moved to the model)
from fabrik3d.rotations import quat_to_matrix
from fabrik3d.solver.constrained.poles import pole_chain

# Sides of a bone tube, and segments of a limit outline (``bone_tubes``, ``limit_outlines``).
TUBE_SIDES = 6
ARC_SEGMENTS = 24
# The share of the skeleton's size that a pole handle without a pole sits away from its chain.
POLE_HOME_OUT = 0.2


class LimitRim(NamedTuple):
    """The rim of one joint's swing limit in a pose.

    Attributes:
        joint: the limited joint's index.
        kind: ``"cone"`` (a ``Cone`` or an ``EllipticalCone``: a closed rim, first point repeated
            last) or ``"hinge"`` (a ``Hinge``: the arc from ``min_deg`` to ``max_deg``).
        directions: ``(segments + 1, 3)`` unit world directions from the joint, in the pose.
        bone_length: the limited bone's rest length (to the joint's first child), scene units.
    """

    joint: int
    kind: str
    directions: np.ndarray
    bone_length: float


def rim_directions(limit: Any, bone: np.ndarray, segments: int) -> tuple[str, np.ndarray] | None:
    """``(kind, (segments + 1, 3) unit directions)`` on the rim of a swing limit, or ``None``.

    Directions are in the rest pose's world axes, around the unit rest ``bone``. A cone's rim
    follows the constraint's definition: the swing of angle θ toward the direction (x, z) of
    the (right, up) basis lies on the rim where (θx/a)² + (θz/b)² = 1, a and b that quadrant's
    angles (a plain ``Cone``: all four equal; its "right" is world +X made perpendicular to the
    bone, +Z for a bone near ±X). A hinge's arc turns the bone, made perpendicular to the axis,
    right-handedly about the axis from ``min_deg`` to ``max_deg``. Other constraints (``Twist``,
    ``Rigid``) and degenerate axes give ``None``.
    """
    if isinstance(limit, (Cone, EllipticalCone)):
        if isinstance(limit, Cone):
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
        phi = np.linspace(0.0, 2.0 * math.pi, segments + 1)
        x, z = np.cos(phi), np.sin(phi)
        a = np.where(x >= 0, right, left)
        b = np.where(z >= 0, up, down)
        theta = np.radians(1.0 / np.sqrt((x / a) ** 2 + (z / b) ** 2))
        return "cone", np.cos(theta)[:, None] * bone + np.sin(theta)[:, None] * (x[:, None] * r + z[:, None] * u)
    if isinstance(limit, Hinge):
        axis = np.array(limit.axis, dtype=float)
        axis = axis / np.linalg.norm(axis)
        d0 = bone - axis * float(bone @ axis)
        if np.linalg.norm(d0) < 1e-9:
            return None
        d0 = d0 / np.linalg.norm(d0)
        t = np.radians(np.linspace(limit.min_deg, limit.max_deg, segments + 1))
        return "hinge", np.cos(t)[:, None] * d0 + np.sin(t)[:, None] * np.cross(axis, d0)
    return None


def limit_rims(
    skeleton: Skeleton,
    rotations: np.ndarray,
    joints: Collection[str] = (),
    segments: int = 48,
) -> list[LimitRim]:
    """The rims of the swing limits of ``skeleton`` in a pose, each carried by its parent's frame.

    Args:
        skeleton: the skeleton; its ``constraints`` are drawn.
        rotations: ``(n, 4)`` world frames of the pose (``SolveResult.rotations``).
        joints: names of the joints to draw (empty: every limited joint).
        segments: segments per rim or arc.

    Returns:
        One ``LimitRim`` per swing limit, in the order of ``skeleton.constraints``.
    """
    frames, rest_frames = quat_to_matrix(np.asarray(rotations, dtype=float)), quat_to_matrix(skeleton.rest_frames)
    rest = skeleton.rest_positions
    out = []
    for name, limits in skeleton.constraints.items():
        if joints and name not in joints:
            continue
        j = skeleton.index(name)
        child = skeleton.first_child(j)
        if child < 0:
            continue
        bone = rest[child] - rest[j]
        bone = bone / np.linalg.norm(bone)
        p = int(skeleton.parents[j])
        carry = frames[p] @ rest_frames[p].T if p >= 0 else np.eye(3)
        for limit in limits:
            rim = rim_directions(limit, bone, segments)
            if rim is not None:
                out.append(LimitRim(j, rim[0], rim[1] @ carry.T, float(skeleton.bone_lengths[child])))
    return out


def effector_chain(skeleton: Skeleton, effector: str) -> list[int]:
    """The joints a pole on ``effector`` bends: from its chain's start (the nearest sub-base, or the
    root) to the effector, as the solver's pole turns take them (``solver.constrained.poles``)."""
    e = skeleton.index(effector)
    return pole_chain(skeleton.parents, [skeleton.bone_children(j) for j in range(len(skeleton))], e)


def movable_effectors(skeleton: Skeleton) -> list[str]:
    """The effectors a view offers a target handle for: those with a joint on their path that can
    turn. The root stays where it is (it moves with the root target) and a rigid root keeps its
    frame, so an effector hanging from a rigid root alone (the octopus's mantle) cannot move."""
    rigid_root = any(isinstance(c, Rigid) for c in skeleton.constraints.get(skeleton.names[skeleton.root], ()))
    # (path_to_root runs from the root to the effector: more than two joints means a joint can turn)
    return [e for e in skeleton.end_effectors if len(skeleton.path_to_root(skeleton.index(e))) > 2 or not rigid_root]


def pole_effectors(skeleton: Skeleton) -> list[str]:
    """The effectors a view offers a pole handle for: with a posing, those with a hinge to bend
    (``fabrik3d.model.posing.hinge_above``: hands, feet; not a head); otherwise every effector whose
    chain has an inner joint."""
    if skeleton.posing:
        return [e for e in skeleton.end_effectors if hinge_above(skeleton, skeleton.index(e)) is not None]
    return [e for e in skeleton.end_effectors if len(effector_chain(skeleton, e)) > 2]


def pole_label(skeleton: Skeleton, effector: str) -> str:
    """The label of ``effector``'s pole handle: the joint it bends (``"elbow_l pole"``, with a
    posing: the hinge; otherwise the chain's middle inner joint)."""
    h = hinge_above(skeleton, skeleton.index(effector)) if skeleton.posing else None
    if h is None:
        chain = effector_chain(skeleton, effector)
        h = chain[len(chain) // 2] if len(chain) > 2 else skeleton.index(effector)
    return f"{skeleton.names[h]} pole"


def pole_home(skeleton: Skeleton, positions: np.ndarray, effector: str, size: float) -> np.ndarray:
    """``(3,)`` where a pole handle of ``effector`` sits while it has no pole.

    With a posing (``skeleton.posing``): out from the hinge it bends (the elbow, the knee), in the
    direction it bends, ``POLE_HOME_OUT`` × ``size`` out. Otherwise:
    Out from the chain's most bent inner joint (an elbow, a knee), away from the line from the
    chain's start to the effector, ``POLE_HOME_OUT`` × ``size`` out; in front (+Z) of the middle
    joint for a straight chain.

    Args:
        skeleton: the skeleton.
        positions: ``(n, 3)`` the pose, scene units.
        effector: an end effector's name.
        size: the skeleton's length scale (``skeleton_size``), scene units.
    """
    pos = np.asarray(positions, dtype=float)
    if skeleton.posing:  # natural posing bends the hinge (elbow, knee): out from it, along its bend
        h = hinge_above(skeleton, skeleton.index(effector))
        if h is not None:
            a, c = pos[int(skeleton.parents[h])], pos[skeleton.first_child(h)]
            line = (c - a) / max(float(np.linalg.norm(c - a)), 1e-12)
            away = pos[h] - a - ((pos[h] - a) @ line) * line
            swivel = skeleton.posing.swivel.get(effector)
            if swivel is not None and np.linalg.norm(away) < 0.1 * skeleton.bone_lengths[h]:  # nearly straight
                away = np.array(swivel.bend(tuple(line))) - (np.array(swivel.bend(tuple(line))) @ line) * line
            if np.linalg.norm(away) >= 1e-6 * size:
                return pos[h] + POLE_HOME_OUT * size * away / np.linalg.norm(away)
    chain = effector_chain(skeleton, effector)[::-1]  # effector first
    start, end = pos[chain[-1]], pos[chain[0]]
    line = (end - start) / max(float(np.linalg.norm(end - start)), 1e-12)
    inner = pos[chain[1:-1]] if len(chain) > 2 else pos[chain[:1]]
    offsets = inner - start - np.outer((inner - start) @ line, line)
    k = int(np.argmax(np.linalg.norm(offsets, axis=1)))
    middle, away = inner[k], offsets[k]
    if np.linalg.norm(away) < 1e-3 * size:
        middle, away = inner[len(inner) // 2], np.array([0.0, 0.0, 1.0])
    return middle + POLE_HOME_OUT * size * away / np.linalg.norm(away)


# -- meshes and lines of the notebook view (pythreejs buffers) -----------------------------------
def hex_colour(rgb: Any) -> str:
    """An RGB colour ``(3,)`` in 0..1 as ``"#rrggbb"`` (a figure's tint, a prop's colour in a view)."""
    return "#" + "".join(f"{round(255 * float(c)):02x}" for c in rgb)


def bone_pairs(skeleton: Skeleton) -> np.ndarray:
    """``(m, 2)`` int array of ``(parent, child)`` joint indices, one row per bone, in skeleton order."""
    return np.array([(int(p), j) for j, p in enumerate(skeleton.parents) if p >= 0], dtype=np.int64).reshape(-1, 2)


def bone_tubes(positions: np.ndarray, pairs: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and normals of one open ``TUBE_SIDES``-sided tube per bone.

    Args:
        positions: ``(n, 3)`` joint positions, scene units.
        pairs: ``(m, 2)`` bones as ``(parent, child)`` indices (``bone_pairs``).
        radius: tube radius, scene units.

    Returns:
        ``(m * 2 * TUBE_SIDES, 3)`` vertices (per bone, a ring at the parent, then a
        ring at the child) and the matching unit normals, both float64.
    """
    a, b = positions[pairs[:, 0]], positions[pairs[:, 1]]
    d = b - a
    length = np.linalg.norm(d, axis=1, keepdims=True)
    d = np.where(length > 1e-12, d / np.maximum(length, 1e-12), [0.0, 1.0, 0.0])
    helper = np.where(np.abs(d[:, 1:2]) < 0.9, [0.0, 1.0, 0.0], [1.0, 0.0, 0.0])
    u = np.cross(d, helper)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    v = np.cross(d, u)
    angles = np.linspace(0.0, 2.0 * math.pi, TUBE_SIDES, endpoint=False)
    ring = np.cos(angles)[None, :, None] * u[:, None, :] + np.sin(angles)[None, :, None] * v[:, None, :]
    verts = np.concatenate([a[:, None, :] + radius * ring, b[:, None, :] + radius * ring], axis=1)
    normals = np.concatenate([ring, ring], axis=1)
    return verts.reshape(-1, 3), normals.reshape(-1, 3)


def tube_indices(bones: int) -> np.ndarray:
    """``(bones * TUBE_SIDES * 6,)`` uint32 triangle indices for the vertices of ``bone_tubes``."""
    s = np.arange(TUBE_SIDES)
    t = (s + 1) % TUBE_SIDES
    quad = np.stack([s, t, TUBE_SIDES + t, s, TUBE_SIDES + t, TUBE_SIDES + s], axis=1).reshape(-1)
    base = np.arange(bones)[:, None] * (2 * TUBE_SIDES)
    return (base + quad[None, :]).reshape(-1).astype(np.uint32)


def limit_outlines(skeleton: Skeleton, positions: np.ndarray, rotations: np.ndarray, size: float) -> np.ndarray:
    """Line segments drawing the swing limits of ``skeleton.constraints`` in a pose.

    A limit at joint j bounds the bone to j's first child; its axes are given in
    the rest pose and move with the parent's frame (the root's stay in its rest
    frame). Each outline is drawn around joint j at ``min(size, bone length)``.

    Args:
        skeleton: the skeleton with its constraints.
        positions: ``(n, 3)`` joint positions, scene units.
        rotations: ``(n, 4)`` world frames (x, y, z, w) from ``SolveResult.rotations``.
        size: largest outline radius, scene units.

    Returns:
        ``(2k, 3)`` float64 segment end points (pairs); the count depends only on the constraints.
    """
    segments = []
    for rim in limit_rims(skeleton, rotations, segments=ARC_SEGMENTS):
        j = rim.joint
        pts = positions[j] + min(size, rim.bone_length) * rim.directions
        segments.append(np.stack([pts[:-1], pts[1:]], axis=1).reshape(-1, 3))
        spokes = pts[:: max(1, (len(pts) - 1) // 4)]
        segments.append(np.stack([np.broadcast_to(positions[j], spokes.shape), spokes], axis=1).reshape(-1, 3))
    return np.concatenate(segments) if segments else np.zeros((0, 3))
