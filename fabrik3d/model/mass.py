"""The centre of mass of a pose and the area that supports it.

**Segment masses** of a humanoid (roles of ``fabrik3d.model.rig_map``): de Leva (1996), "Adjustments to
Zatsiorsky-Seluyanov's segment inertia parameters", J. Biomech. 29(9), adult male values: each
segment's share of the body's mass and where its centre lies between its proximal and distal joints
(``SEGMENTS``). Shares of segments a rig lacks are left out and the rest renormalised. A skeleton
without humanoid roles weighs each bone by its length, at the bone's middle.

**Support area**: the sole of each foot (ankle and toe roles) is a rectangle on the ground, heel to
toe tip (``SOLE``, shares of the ankle-to-toe length); the heel's corners count when the ankle is
within ``CONTACT`` of its rest height above the ground, the toe's when the toe is; the area is the
convex hull of the corners that count, in the ground plane.

Units: scene units (metres for the presets), Y up; ground points are ``(x, z)``. The ground is the
``floor`` height, or the rest pose's (its lowest joint less ``REST_CLEARANCE``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.model import rig_map as rigs

# (share of the body's mass in %, proximal role, distal role, centre's place from proximal to distal).
# The trunk runs from the neck (C7) to the middle of the hips; the head from the neck to its top.
SEGMENTS: tuple[tuple[float, str, str, float], ...] = (
    (6.94, "neck", "head", 0.5002),
    (43.46, "neck", "hips", 0.5138),
    *(
        item
        for s in ("l", "r")
        for item in (
            (2.71, f"shoulder_{s}", f"elbow_{s}", 0.5772),
            (1.62, f"elbow_{s}", f"wrist_{s}", 0.4574),
            (0.61, f"wrist_{s}", f"hand_{s}", 0.7900),
            (14.16, f"hip_{s}", f"knee_{s}", 0.4095),
            (4.33, f"knee_{s}", f"ankle_{s}", 0.4459),
            (1.37, f"ankle_{s}", f"toe_{s}", 0.4415),
        )
    ),
)
# The sole from the ankle: heel behind it and toe tip past the toe joint, half its width (shares of
# the ankle-to-toe length on the ground).
SOLE = {"heel": 0.55, "tip": 0.4, "half_width": 0.33}
# A sole's point touches the ground while its joint is this close to its rest height above it.
CONTACT = 0.02
# The rest pose's ground lies this far below its lowest joint (the ball of a foot sits above it).
REST_CLEARANCE = 0.02


def humanoid_roles(skeleton: Any, rig_map: Mapping[str, str] | None = None) -> dict[str, int]:
    """role -> joint index of a humanoid skeleton (``rig_map`` role -> joint name, default from its
    names; the preset's names are its roles); empty for other skeletons."""
    names = skeleton.names
    if rig_map is None:
        made = skeleton.__dict__.get("_humanoid_roles")
        if made is not None:
            return made
        found = {r: r for r in rigs.ROLES if r in skeleton} if "pelvis" in skeleton else {}
        if len(found) < rigs.MIN_ROLES:
            found = rigs.guess_rig_map(names)[1]
        made = {role: skeleton.index(bone) for role, bone in found.items() if bone in skeleton}
        skeleton.__dict__["_humanoid_roles"] = made
        return made
    return {role: skeleton.index(bone) for role, bone in rig_map.items() if isinstance(bone, str) and bone in skeleton}


def center_of_mass(skeleton: Any, positions: Any, rig_map: Mapping[str, str] | None = None) -> np.ndarray:
    """``(3,)`` the centre of mass of the pose ``positions`` ``(n, 3)`` (module docstring).

    Raises:
        ValueError: naming ``positions`` for a wrong shape or non-finite values.
    """
    p = _pose(skeleton, positions)
    at = humanoid_roles(skeleton, rig_map)
    total, weighted = 0.0, np.zeros(3)
    if len(at) >= rigs.MIN_ROLES:
        for share, a, b, where in SEGMENTS:
            start, end = _point(p, at, a), _point(p, at, b)
            if start is None or end is None:
                continue
            total += share
            weighted += share * (start + where * (end - start))
    if total == 0.0:  # (no humanoid: each bone by its length, at its middle)
        parents = np.asarray(skeleton.parents)
        bones = np.flatnonzero(parents >= 0)
        lengths = np.asarray(skeleton.bone_lengths)[bones]
        middles = 0.5 * (p[bones] + p[parents[bones]])
        return (lengths @ middles) / float(lengths.sum())
    return weighted / total


def rest_ground(skeleton: Any) -> float:
    """The height of the ground the rest pose stands on (module docstring)."""
    return float(np.min(np.asarray(skeleton.rest_positions)[:, 1])) - REST_CLEARANCE


def support_area(
    skeleton: Any, positions: Any, floor: float | None = None, rig_map: Mapping[str, str] | None = None
) -> np.ndarray:
    """``(k, 2)`` the support area of the pose ``positions`` ``(n, 3)`` as a convex polygon of ground
    points ``(x, z)``, counter-clockwise seen from above (module docstring); ``(0, 2)`` when no foot
    touches the ground (or the skeleton has no feet). ``floor``: the ground's height (default the rest
    pose's)."""
    p = _pose(skeleton, positions)
    ground = rest_ground(skeleton) if floor is None else checks.number(floor, "floor", "a finite height or None")
    at = humanoid_roles(skeleton, rig_map)
    rest = np.asarray(skeleton.rest_positions)
    base = rest_ground(skeleton)
    corners: list[np.ndarray] = []
    for s in ("l", "r"):
        if f"ankle_{s}" not in at or f"toe_{s}" not in at:
            continue
        a, t = at[f"ankle_{s}"], at[f"toe_{s}"]
        along = np.array([p[t, 0] - p[a, 0], p[t, 2] - p[a, 2]])
        length = float(np.linalg.norm(along))
        if length < 1e-9:
            continue
        along /= length
        side = np.array([along[1], -along[0]]) * SOLE["half_width"] * length
        heel = p[a, [0, 2]] - SOLE["heel"] * length * along
        tip = p[t, [0, 2]] + SOLE["tip"] * length * along
        if p[a, 1] - ground <= rest[a, 1] - base + CONTACT:
            corners += [heel + side, heel - side]
        if p[t, 1] - ground <= rest[t, 1] - base + CONTACT:
            corners += [tip + side, tip - side, p[t, [0, 2]] + side, p[t, [0, 2]] - side]
    return convex_hull(np.array(corners).reshape(-1, 2))


def balance_margin(skeleton: Any, positions: Any, floor: float | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """``(com (3,), support (k, 2), margin)`` of the pose ``positions`` ``(n, 3)``: the centre of mass,
    the support area (``floor`` as ``support_area``'s) and how far the centre of mass's ground shadow
    lies inside it (scene units; negative outside, ``-inf`` with no support): balanced at ``margin >= 0``."""
    com = center_of_mass(skeleton, positions)
    support = support_area(skeleton, positions, floor=floor)
    return com, support, distance_inside(support, com[[0, 2]])


def convex_hull(points: np.ndarray) -> np.ndarray:
    """``(k, 2)`` the convex hull of ``points`` ``(m, 2)``, counter-clockwise (Andrew's monotone chain)."""
    pts = sorted({(float(x), float(y)) for x, y in np.asarray(points, dtype=float).reshape(-1, 2)})
    if len(pts) < 3:
        return np.array(pts, dtype=float).reshape(-1, 2)

    def half(seq: list[tuple[float, float]]) -> list[tuple[float, float]]:
        out: list[tuple[float, float]] = []
        for q in seq:
            while len(out) >= 2 and _turn(out[-2], out[-1], q) <= 0.0:
                out.pop()
            out.append(q)
        return out

    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1], dtype=float)


def distance_inside(polygon: np.ndarray, point: Any) -> float:
    """How far ``point`` ``(2,)`` lies inside the convex ``polygon`` ``(k, 2)`` (counter-clockwise):
    its distance to the nearest edge, negative outside; ``-inf`` for a polygon of fewer than 3 points."""
    poly = np.asarray(polygon, dtype=float)
    if len(poly) < 3:
        return -np.inf
    q = np.asarray(point, dtype=float)
    a, b = poly, np.roll(poly, -1, axis=0)
    edge = b - a
    normal = np.column_stack([-edge[:, 1], edge[:, 0]]) / np.linalg.norm(edge, axis=1)[:, None]
    return float(np.min(np.einsum("ij,ij->i", q - a, normal)))


def _turn(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _point(p: np.ndarray, at: Mapping[str, int], role: str) -> np.ndarray | None:
    if role == "hips":
        if "hip_l" in at and "hip_r" in at:
            return 0.5 * (p[at["hip_l"]] + p[at["hip_r"]])
        role = "pelvis"
    return p[at[role]] if role in at else None


def _pose(skeleton: Any, positions: Any) -> np.ndarray:
    p = checks.points(positions, "positions")
    if p.shape != (len(skeleton), 3):
        raise ValueError(f"positions: expected shape ({len(skeleton)}, 3), got {p.shape}")
    return p
