"""A mannequin body for a skeleton: smooth solid segments, like a wooden artist's mannequin.

Each bone ``p -> c`` gets an ellipsoid around it, rigidly bound to joint ``p`` (whose frame carries
the bone); ball joints sit on the shoulders, elbows, wrists, hips, knees, ankles and the neck; the
head has a nose on its face (+Z at rest: the side the body faces). For a humanoid (roles of
``fabrik3d.model.rig_map``) the widths are a human's (``WIDTHS``: half-widths across and through
each segment, metres for a 1.75 m body, scaled by the skeleton's height); a torso segment is wide
left to right, a palm across the hand and flat toward the palm; the foot runs heel to toe tip, its
forefoot carried by the toe joint (the ball of the foot). Other
skeletons get a round segment of ``GENERIC_WIDTH`` of each bone's length.

``mannequin_mesh(skeleton)`` gives the rest-pose mesh as numpy arrays, indexed triangles,
counter-clockwise seen from outside, one influence per vertex (weights 1), ready for glTF and for
``fabrik3d.model.skinning.Skinner``. ``Mannequin.of(skeleton)`` keeps it with its skinner, and
``skinned(positions, rotations)`` puts it in a pose (the web UI's and the notebook's body).
``body_clearances(skeleton)`` says how far the body reaches below each joint, for the floor
(``fabrik3d.solver.ground``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fabrik3d.model import mass
from fabrik3d.model.fingers import FINGERS
from fabrik3d.model.skinning import Skinner, pose_deltas

# role of a bone's child -> (half-width across (left-right or across the palm), half-width through (front
# to back, or palm thickness)), metres at 1.75 m.
WIDTHS: dict[str, tuple[float, float]] = {
    "spine_01": (0.15, 0.10),
    "spine_02": (0.13, 0.095),
    "spine_03": (0.14, 0.10),
    "chest": (0.16, 0.11),
    "neck": (0.05, 0.05),
    "clavicle": (0.035, 0.035),
    "shoulder": (0.04, 0.04),
    "elbow": (0.047, 0.047),
    "wrist": (0.037, 0.035),
    "hand": (0.045, 0.015),
    "hip": (0.06, 0.06),
    "knee": (0.07, 0.07),
    "ankle": (0.05, 0.05),
    "toe": (0.045, 0.035),
}
BALLS: dict[str, float] = {"neck": 0.045, "shoulder": 0.05, "elbow": 0.04, "wrist": 0.032, "hip": 0.065,
                           "knee": 0.05, "ankle": 0.04}  # fmt: skip
FINGER_WIDTH = 0.009
THUMB_WIDTH = 0.011
HEAD = (0.085, 0.115, 0.1)  # half-widths across, up, front to back
GENERIC_WIDTH = 0.12
# Where the ball of the foot (the toe joint) lies from the heel to the toes' tip (the foot's parts meet there).
BALL = 1.55 / 1.95
# Resolution of an ellipsoid: points round it and rings along it.
AROUND, ALONG = 16, 10


def mannequin_mesh(skeleton: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(positions (v, 3), normals (v, 3), joints (v,), weights (v,), triangles (t, 3))``, float32 and
    uint32, in the rest pose, scene units (module docstring)."""
    rest = np.asarray(skeleton.rest_positions, dtype=float)
    at = mass.humanoid_roles(skeleton)
    role_of = {j: r for r, j in at.items()}
    humanoid = len(at) >= 8
    scale = _scale(rest, at) if humanoid else 1.0
    up, side = np.array([0.0, 1.0, 0.0]), np.array([1.0, 0.0, 0.0])
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []
    for c in range(len(skeleton)):
        p = int(skeleton.parents[c])
        if p < 0:
            continue
        a, b = rest[p], rest[c]
        role = role_of.get(c, "")
        base = role[:-2] if role[-2:] in ("_l", "_r") else role
        if humanoid and base == "head":
            continue  # (the head below)
        if humanoid and role_of.get(p, "").startswith("pelvis") and base == "hip":
            continue  # (inside the pelvis)
        if humanoid and base == "toe":  # (heel to toe tip, the sole on the rest ground)
            along = _unit(b - a) if np.linalg.norm(b - a) > 0 else side
            length = float(np.linalg.norm(b - a))
            a, b = a - 0.55 * length * along, b + 0.4 * length * along
            ground = float(rest[:, 1].min()) - mass.REST_CLEARANCE
            a[1], b[1] = ground + scale * WIDTHS["toe"][1], ground + 0.8 * scale * WIDTHS["toe"][1]
        if humanoid and base in WIDTHS:
            across, through = (scale * w for w in WIDTHS[base])
        elif humanoid and role.split("_")[0] in FINGERS:
            across = through = scale * (THUMB_WIDTH if role.startswith("thumb") else FINGER_WIDTH)
        else:
            across = through = GENERIC_WIDTH * float(np.linalg.norm(b - a))
        wide = side
        if humanoid and base == "hand":
            bases = [at.get(f"{f}_01_{role[-1]}") for f in ("index", "pinky")]
            if None not in bases:
                wide = rest[bases[0]] - rest[bases[1]]
        if humanoid and base == "toe":  # (the forefoot on the toe joint, the ball: toes bend there)
            ball = a + BALL * (b - a)
            heel = _segment(a, ball + 0.1 * (b - ball), wide, across, through, up)
            fore = _segment(ball - 0.2 * (b - ball), b, wide, 0.95 * across, 0.9 * through, up)
            lift = np.array([0.0, max(0.0, ground - min(heel[0][:, 1].min(), fore[0][:, 1].min())), 0.0])
            parts += [(heel[0] + lift, *heel[1:], p), (fore[0] + lift, *fore[1:], c)]  # (the sole on the ground)
            continue
        parts.append((*_segment(a, b, wide, across, through, up), p))
    if humanoid and "neck" in at and "head" in at:
        n, h = rest[at["neck"]], rest[at["head"]]
        centre = n + 0.55 * (h - n)
        frame = np.eye(3)
        parts.append((*_ellipsoid(centre, frame, scale * np.array(HEAD)), at["neck"]))
        nose = centre + np.array([0.0, -0.01, scale * HEAD[2]])
        parts.append((*_ellipsoid(nose, frame, scale * np.array([0.012, 0.018, 0.02])), at["neck"]))
    if humanoid and "pelvis" in at:
        centre = rest[at["pelvis"]] - np.array([0.0, 0.03 * scale, 0.0])
        parts.append((*_ellipsoid(centre, np.eye(3), scale * np.array([0.16, 0.1, 0.11])), at["pelvis"]))
    for role, j in at.items():
        base = role[:-2] if role[-2:] in ("_l", "_r") else role
        if humanoid and base in BALLS:
            radius = scale * BALLS[base]
            parts.append((*_ellipsoid(rest[j], np.eye(3), np.array([radius] * 3)), j))
    return _joined(parts)


def body_clearances(skeleton: Any) -> np.ndarray:
    """``(n,)`` scene units: the height above a floor each joint keeps so that no part of the mannequin goes
    below the floor (cached on the skeleton). Each vertex moves with its joint ``p``, rigidly with the bone
    to the child ``c`` nearest it (a ball or the head: the bone it sits on), so it lies at most its rest
    distance ``r`` from that bone: with ``p`` and ``c`` at least ``r`` above the floor it is above it. A
    foot's joints and parts (the ankles' and toes', and the bones ending there) are left to the foot's
    own rule (``fabrik3d.solver.ground.clearances``: the sole lies on the floor); 0 for them here."""
    cached = skeleton.__dict__.get("_body_clearances")
    if cached is not None:
        return cached
    positions, _, joints, _, _ = mannequin_mesh(skeleton)
    rest = np.asarray(skeleton.rest_positions, dtype=float)
    at = mass.humanoid_roles(skeleton)
    feet = {at[r] for r in ("ankle_l", "ankle_r", "toe_l", "toe_r") if r in at}
    out = np.zeros(len(skeleton))
    for p in np.unique(joints):
        if p in feet:
            continue
        v = positions[joints == p].astype(float)
        children = [int(c) for c in np.flatnonzero(np.asarray(skeleton.parents) == p)] or [int(p)]
        dist = np.stack([_to_segment(v, rest[p], rest[c]) for c in children], axis=1)
        near = np.argmin(dist, axis=1)
        for k, c in enumerate(children):
            r = float(dist[near == k, k].max(initial=0.0))
            out[p] = max(out[p], r)
            if c not in feet:
                out[c] = max(out[c], r)
    skeleton.__dict__["_body_clearances"] = out
    return out


def _to_segment(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(m,)`` distances of ``points`` ``(m, 3)`` from the segment ``a``-``b``."""
    ab = b - a
    t = np.clip((points - a) @ ab / max(float(ab @ ab), 1e-18), 0.0, 1.0)
    return np.linalg.norm(points - (a + t[:, None] * ab), axis=1)


@dataclass(frozen=True)
class Mannequin:
    """The mannequin of ``skeleton`` ready to pose: its rest ``positions`` and ``normals`` ``(v, 3)``
    float32, ``triangles`` ``(t, 3)`` int64 and ``skinner`` (``Mannequin.of`` builds it)."""

    skeleton: Any
    positions: np.ndarray
    normals: np.ndarray
    triangles: np.ndarray
    skinner: Skinner

    @classmethod
    def of(cls, skeleton: Any) -> Mannequin:
        """The mannequin of ``skeleton`` (``mannequin_mesh``)."""
        positions, normals, joints, weights, triangles = mannequin_mesh(skeleton)
        skinner = Skinner(positions, joints[:, None], weights[:, None], len(skeleton), normals)
        return cls(skeleton, positions, normals, triangles.astype(np.int64), skinner)

    def skinned(self, positions: Any, rotations: Any) -> tuple[np.ndarray, np.ndarray]:
        """The mannequin in the pose ``positions`` ``(n, 3)``, ``rotations`` ``(n, 4)`` of its skeleton:
        ``(positions, normals)`` ``(v, 3)`` float32, each vertex rigid with its joint."""
        out, normals = self.skinner.skin(pose_deltas(self.skeleton, positions, rotations), normals=True)
        assert normals is not None
        return out, normals


def _scale(rest: np.ndarray, at: dict[str, int]) -> float:
    """The body's height over 1.75 m (pelvis to head top and the legs, where it has them)."""
    top = rest[at["head"], 1] if "head" in at else rest[:, 1].max()
    return max(0.05, float(top - rest[:, 1].min() + mass.REST_CLEARANCE) / 1.75)


def _segment(
    a: np.ndarray, b: np.ndarray, wide: np.ndarray, across: float, through: float, up: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An ellipsoid round the bone ``a -> b``, ``across`` wide along ``wide`` (made perpendicular)."""
    length = float(np.linalg.norm(b - a))
    y = _unit(b - a) if length > 0 else up
    x = wide - y * float(wide @ y)
    if np.linalg.norm(x) < 1e-9:
        x = np.cross(y, np.array([0.0, 0.0, 1.0]))
        if np.linalg.norm(x) < 1e-9:
            x = np.cross(y, np.array([1.0, 0.0, 0.0]))
    x = _unit(x)
    z = np.cross(x, y)
    radii = np.array([across, 0.5 * length * 1.08 + 0.3 * min(across, through), through])
    return _ellipsoid(0.5 * (a + b), np.column_stack([x, y, z]), radii)


def _ellipsoid(centre: np.ndarray, frame: np.ndarray, radii: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points, normals and triangles of an ellipsoid (``frame`` columns its axes, ``radii`` along them)."""
    theta = np.linspace(0.0, np.pi, ALONG + 1)  # pole to pole along the second axis
    phi = np.linspace(0.0, 2.0 * np.pi, AROUND, endpoint=False)
    t, f = np.meshgrid(theta, phi, indexing="ij")
    unit = np.stack([np.sin(t) * np.cos(f), -np.cos(t), np.sin(t) * np.sin(f)], axis=-1).reshape(-1, 3)
    local = unit * radii
    normal = unit / radii
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    tris = []
    for i in range(ALONG):
        for k in range(AROUND):
            a, b = i * AROUND + k, i * AROUND + (k + 1) % AROUND
            c, d = a + AROUND, b + AROUND
            tris += [(a, c, b), (b, c, d)]
    return centre + local @ frame.T, normal @ frame.T, np.array(tris)


def _joined(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]) -> tuple[np.ndarray, ...]:
    positions, normals, joints, triangles, offset = [], [], [], [], 0
    for p, n, t, j in parts:
        positions.append(p)
        normals.append(n)
        joints.append(np.full(len(p), j))
        triangles.append(t + offset)
        offset += len(p)
    pos = np.concatenate(positions).astype(np.float32)
    tri = np.concatenate(triangles).astype(np.uint32)
    # (a triangle counter-clockwise seen from outside: its normal along the vertices')
    face = np.cross(pos[tri[:, 1]] - pos[tri[:, 0]], pos[tri[:, 2]] - pos[tri[:, 0]])
    nor = np.concatenate(normals).astype(np.float32)
    flip = np.einsum("ij,ij->i", face, nor[tri].sum(axis=1)) < 0
    tri[flip] = tri[flip][:, [0, 2, 1]]
    return pos, nor, np.concatenate(joints).astype(np.uint32), np.ones(len(pos), np.float32), tri


def _unit(v: np.ndarray) -> np.ndarray:
    return v / float(np.linalg.norm(v))
