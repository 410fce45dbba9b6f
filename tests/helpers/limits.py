"""Independent measurement of joint limits, and forward kinematics of random valid poses.

Written with numpy matrices, apart from fabrik3d's own rotation helpers, so that
the tests measure the solver's output against an independent reading of the
constraint definitions (``fabrik3d.constraints`` docstring).
"""

from __future__ import annotations

import math

import numpy as np

import fabrik3d.constraints as fc


def qmat(q: np.ndarray) -> np.ndarray:
    """3x3 rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def minrot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Matrix of the minimal rotation taking unit a onto unit b (not for exactly opposite vectors)."""
    v = np.cross(a, b)
    c = float(a @ b)
    k = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    # 1 / (1 + c) = (1 - c) / |v|^2 without cancellation when b is nearly opposite a
    return np.eye(3) + k + k @ k * ((1.0 - c) / float(v @ v) if c < 0 else 1.0 / (1.0 + c))


def opposite(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether unit b is opposite unit a to within 1e-8 (as fabrik3d.rotations.OPPOSITE2 has it: there
    the minimal rotation's axis is lost in rounding, and the swing rule takes a half turn)."""
    return float(a @ b) < 0 and float(np.cross(a, b) @ np.cross(a, b)) < 1e-16


def axis_rot(axis: np.ndarray, angle: float) -> np.ndarray:
    a = axis / np.linalg.norm(axis)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * k @ k


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def bone_kids(skeleton, j: int) -> tuple[int, ...]:
    """Joint ``j``'s children that carry its bone: all of them, less the riders where the skeleton has
    riders (its rest frame aims at the first of these; a joint whose children all ride has none)."""
    bone_children = getattr(skeleton, "bone_children", None)
    return tuple(bone_children(j)) if bone_children is not None else tuple(skeleton.children(j))


def rest_frames(skeleton) -> list[np.ndarray]:
    """Rest frames as matrices, by the definition (+Y onto the rest bone to the first child)."""
    rest = skeleton.rest_positions
    out: list[np.ndarray] = [np.eye(3)] * len(skeleton)
    for j in skeleton.order:
        kids = bone_kids(skeleton, j)
        if not kids:
            out[j] = out[int(skeleton.parents[j])]
            continue
        d = unit(rest[kids[0]] - rest[j])
        if opposite(np.array([0.0, 1.0, 0.0]), d):
            out[j] = axis_rot(np.array([1.0, 0, 0]), math.pi)
        else:
            out[j] = minrot(np.array([0.0, 1.0, 0.0]), d)
    return out


def parent_frame(skeleton, frames: list[np.ndarray], j: int) -> np.ndarray:
    p = int(skeleton.parents[j])
    return frames[p] if p >= 0 else np.eye(3)


def violations(skeleton, positions: np.ndarray, rotations: np.ndarray) -> dict[str, float]:
    """Largest excess over each joint's limits, in degrees (0 when within), measured from the pose."""
    r0 = rest_frames(skeleton)
    frames = [qmat(q) for q in rotations]
    rest = skeleton.rest_positions
    out: dict[str, float] = {}
    for name, items in skeleton.constraints.items():
        j = skeleton.index(name)
        p = int(skeleton.parents[j])
        rp0 = r0[p] if p >= 0 else np.eye(3)
        fp = parent_frame(skeleton, frames, j)
        kids = bone_kids(skeleton, j)
        worst = 0.0
        if kids:
            c = kids[0]
            d = fp.T @ unit(positions[c] - positions[j])
            d0 = rp0.T @ unit(rest[c] - rest[j])
        for con in items:
            if isinstance(con, fc.Cone):
                ang = math.degrees(math.atan2(float(np.linalg.norm(np.cross(d, d0))), float(d @ d0)))
                worst = max(worst, ang - con.max_deg)
            elif isinstance(con, fc.EllipticalCone):
                right = rp0.T @ np.array(con.right_axis, dtype=float)
                right = unit(right - (right @ d0) * d0)
                up = np.cross(right, d0)
                x, z, y = d @ right, d @ up, d @ d0
                rho = math.hypot(x, z)
                theta = math.atan2(rho, y)
                if rho > 0.0:
                    u, v = theta * x / rho, theta * z / rho
                    a = math.radians(con.right_deg if u >= 0 else con.left_deg)
                    b = math.radians(con.up_deg if v >= 0 else con.down_deg)
                    # excess: the chart distance outside the ellipse (or the segment or point a zero
                    # angle leaves), in degrees (0 inside)
                    if a <= 0 or b <= 0 or (u / a) ** 2 + (v / b) ** 2 > 1:
                        px, py = fc.nearest_on_ellipse(abs(u), abs(v), a, b)
                        worst = max(worst, math.degrees(math.hypot(abs(u) - px, abs(v) - py)))
            elif isinstance(con, fc.Hinge):
                axis = unit(rp0.T @ np.array(con.axis, dtype=float))
                off_plane = math.degrees(math.asin(np.clip(abs(d @ axis), 0, 1)))
                b = np.cross(axis, d0)
                phi = math.degrees(math.atan2(d @ b, d @ d0))
                worst = max(worst, off_plane, outside_range(phi, con.min_deg, con.max_deg))
            elif isinstance(con, fc.Twist):
                # twist of the frame about the bone relative to the parent: compare the frame
                # with the swing-only frame that has the same +Y.
                fj = frames[j]
                if kids:
                    swing_only = swing_frame(skeleton, fp, j, fj[:, 1], r0)
                else:
                    swing_only = fp @ (rp0.T @ r0[j])
                rel = swing_only.T @ fj  # rotation about local Y
                # the twist of the swing-twist split about local Y (2 atan2(q_y, q_w)); for a pure
                # turn about Y (a joint with a bone) it is that turn's angle, for a leaf its twist part
                tw = math.degrees(math.atan2(rel[0, 2] - rel[2, 0], rel[0, 0] + rel[2, 2]))
                worst = max(worst, outside_range(tw, con.min_deg, con.max_deg))
            elif isinstance(con, fc.Rigid):
                for c in kids:
                    want = frames[j] @ r0[j].T @ (rest[c] - rest[j])
                    worst = max(worst, float(np.linalg.norm(positions[c] - positions[j] - want)) * 1e3)
        out[name] = max(0.0, worst)
    return out


def _chart(con, d0: np.ndarray, right: np.ndarray, d: np.ndarray) -> tuple[float, float, float, float]:
    """(u, v, a, b) of direction ``d`` in an elliptical cone's (right, up) chart (radians)."""
    up = np.cross(right, d0)
    x, z, y = d @ right, d @ up, d @ d0
    rho = math.hypot(x, z)
    theta = math.atan2(rho, y)
    u, v = (theta * x / rho, theta * z / rho) if rho > 0 else (0.0, 0.0)
    a = math.radians(con.right_deg if u >= 0 else con.left_deg)
    b = math.radians(con.up_deg if v >= 0 else con.down_deg)
    return u, v, a, b


def _from_chart(d0: np.ndarray, right: np.ndarray, u: float, v: float) -> np.ndarray:
    theta = math.hypot(u, v)
    if theta == 0.0:
        return d0.copy()
    up = np.cross(right, d0)
    return math.cos(theta) * d0 + math.sin(theta) * (u * right + v * up) / theta


def outside_range(angle: float, lo: float, hi: float) -> float:
    """How far (degrees) ``angle`` lies outside [lo, hi] on the circle (±180 is one angle)."""
    return max(0.0, min(max(lo - a, a - hi) for a in (angle - 360.0, angle, angle + 360.0)))


def sample_direction(con, d0: np.ndarray, right: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """A direction drawn uniformly within a swing limit (a cone: exactly on its cap; an elliptical
    cone: by rejection on the cap of its largest angle, or, for a degenerate one, uniformly in its
    chart)."""
    if isinstance(con, fc.Cone):
        z = rng.uniform(math.cos(math.radians(con.max_deg)), 1.0)
        phi = rng.uniform(0.0, 2.0 * math.pi)
        e1 = unit(np.cross(d0, [1.0, 0.0, 0.0] if abs(d0[0]) < 0.9 else [0.0, 1.0, 0.0]))
        e2 = np.cross(d0, e1)
        s = math.sqrt(max(0.0, 1.0 - z * z))
        return unit(z * d0 + s * (math.cos(phi) * e1 + math.sin(phi) * e2))
    assert right is not None
    widest = math.radians(max(con.left_deg, con.right_deg, con.up_deg, con.down_deg))
    for _ in range(2000):
        z = rng.uniform(math.cos(widest), 1.0)
        phi = rng.uniform(0.0, 2.0 * math.pi)
        s = math.sqrt(max(0.0, 1.0 - z * z))
        up = np.cross(right, d0)
        d = unit(z * d0 + s * (math.cos(phi) * right + math.sin(phi) * up))
        u, v, a, b = _chart(con, d0, right, d)
        if a > 0 and b > 0 and (u / a) ** 2 + (v / b) ** 2 <= 1:
            return d
    # degenerate (a zero angle): a point of the chart's ellipse, segment or single point
    u = rng.uniform(-math.radians(con.left_deg), math.radians(con.right_deg))
    v = rng.uniform(-math.radians(con.down_deg), math.radians(con.up_deg))
    a = math.radians(con.right_deg if u >= 0 else con.left_deg)
    b = math.radians(con.up_deg if v >= 0 else con.down_deg)
    if a > 0 and b > 0:
        v *= math.sqrt(max(0.0, 1.0 - (u / a) ** 2))
    elif a <= 0:
        u = 0.0
    else:
        v = 0.0
    return unit(_from_chart(d0, right, u, v))


def random_pose(skeleton, rng: np.random.Generator) -> np.ndarray:
    """Forward kinematics of a pose drawn uniformly within the skeleton's swing limits.

    Joints without a swing limit keep their rest local direction; rigid joints
    keep their children's rest offsets; the root stays at rest.
    """
    r0 = rest_frames(skeleton)
    rest = skeleton.rest_positions
    pos = rest.copy()
    frames: list[np.ndarray] = [np.eye(3)] * len(skeleton)
    for j in skeleton.order:
        p = int(skeleton.parents[j])
        rp0 = r0[p] if p >= 0 else np.eye(3)
        fp = frames[p] if p >= 0 else np.eye(3)
        lo = rp0.T @ r0[j]
        kids = skeleton.children(j)
        swing = None
        for con in skeleton.constraints.get(skeleton.names[j], ()):
            if con.kind == "swing":
                swing = con
        motion = np.eye(3)
        if kids and swing is not None:
            d0 = lo[:, 1]
            if isinstance(swing, fc.Hinge):
                axis = unit(rp0.T @ np.array(swing.axis, dtype=float))
                motion = axis_rot(axis, math.radians(rng.uniform(swing.min_deg, swing.max_deg)))
            else:
                right = None
                if isinstance(swing, fc.EllipticalCone):
                    right = rp0.T @ np.array(swing.right_axis, dtype=float)
                    right = unit(right - (right @ d0) * d0)
                d = sample_direction(swing, d0, right, rng)
                motion = minrot(d0, d) if d @ d0 > -1 + 1e-9 else np.eye(3)
        frames[j] = fp @ motion @ lo
        for c in kids:
            pos[c] = pos[j] + frames[j] @ r0[j].T @ (rest[c] - rest[j])
    return pos


def _swing_limit(skeleton, j: int):
    for con in skeleton.constraints.get(skeleton.names[j], ()):
        if con.kind == "swing":
            return con
    return None


def smooth_pose(skeleton, t: float, seed: int = 0, share: float = 0.7) -> np.ndarray:
    """Forward kinematics of a smooth path of joint motions within the limits, at time ``t``.

    Each limited joint follows sinusoids (frequencies and phases drawn from
    ``seed``) through at most ``share`` of its limit: cones and elliptical cones in
    their (right, up) chart, hinges through ``share`` of their range. Other joints
    keep their rest local rotation.
    """
    rng = np.random.default_rng(seed)
    r0 = rest_frames(skeleton)
    rest = skeleton.rest_positions
    pos = rest.copy()
    frames: list[np.ndarray] = [np.eye(3)] * len(skeleton)
    for j in skeleton.order:
        w1, w2, p1, p2 = rng.uniform(0.5, 1.5), rng.uniform(0.5, 1.5), rng.uniform(0, 6.3), rng.uniform(0, 6.3)
        p = int(skeleton.parents[j])
        rp0 = r0[p] if p >= 0 else np.eye(3)
        fp = frames[p] if p >= 0 else np.eye(3)
        lo = rp0.T @ r0[j]
        kids = skeleton.children(j)
        con = _swing_limit(skeleton, j)
        motion = np.eye(3)
        if kids and con is not None:
            d0 = lo[:, 1]
            s1, s2 = math.sin(w1 * t + p1) / math.sqrt(2), math.sin(w2 * t + p2) / math.sqrt(2)
            if isinstance(con, fc.Hinge):
                axis = unit(rp0.T @ np.array(con.axis, dtype=float))
                mid, half = (con.min_deg + con.max_deg) / 2, (con.max_deg - con.min_deg) / 2
                motion = axis_rot(axis, math.radians(mid + share * half * math.sin(w1 * t + p1)))
            else:
                if isinstance(con, fc.Cone):
                    side = lo[:, 0] if abs(d0 @ lo[:, 0]) < 0.9 else lo[:, 2]
                    right = unit(side - (side @ d0) * d0)
                    a = b = math.radians(con.max_deg)
                else:
                    right = rp0.T @ np.array(con.right_axis, dtype=float)
                    right = unit(right - (right @ d0) * d0)
                    a = math.radians(con.right_deg if s1 >= 0 else con.left_deg)
                    b = math.radians(con.up_deg if s2 >= 0 else con.down_deg)
                u, v = share * a * s1, share * b * s2
                up = np.cross(right, d0)
                theta = math.hypot(u, v)
                if theta > 1e-12:
                    d = math.cos(theta) * d0 + math.sin(theta) * (u * right + v * up) / theta
                    motion = minrot(d0, d)
        frames[j] = fp @ motion @ lo
        for c in kids:
            pos[c] = pos[j] + frames[j] @ r0[j].T @ (rest[c] - rest[j])
    return pos


# -- skeletons, frames and local rotations for the limit tests -----------------------------------------


def limited_chain(n: int, limit, length: float = 0.1, leaf=None):
    """A chain of ``n`` bones of ``length`` along +Y from the origin, ``limit(i)`` on joints 0..n-1.

    ``limit(i)`` returns a constraint, a list of constraints, or ``None``; ``leaf`` is an optional
    constraint (a ``Twist``) on the effector. Joint names are j0..jn.
    """
    from fabrik3d import Skeleton

    names = [f"j{i}" for i in range(n + 1)]
    limits = {}
    for i in range(n):
        c = limit(i)
        if c is not None:
            limits[names[i]] = c
    if leaf is not None:
        limits[names[n]] = leaf
    return Skeleton(names, [-1, *range(n)], [[0.0, length * i, 0.0] for i in range(n + 1)], limits)


def frame_matrices(rotations: np.ndarray) -> list[np.ndarray]:
    """Rotation matrices of ``(n, 4)`` quaternions (x, y, z, w)."""
    return [qmat(np.asarray(q, dtype=float)) for q in rotations]


def is_rigid(skeleton, j: int) -> bool:
    return any(isinstance(c, fc.Rigid) for c in skeleton.constraints.get(skeleton.names[j], ()))


def swing_frame(skeleton, parent: np.ndarray, j: int, direction: np.ndarray, r0: list[np.ndarray]) -> np.ndarray:
    """World frame of non-rigid joint ``j`` whose bone points along unit ``direction`` (world), by the
    swing rule: parent frame · minimal rotation of the rest bone (in the parent's frame) onto the
    current one · rest local rotation; a half turn about the rest +X axis for an opposite bone."""
    p = int(skeleton.parents[j])
    lo = (r0[p].T if p >= 0 else np.eye(3)) @ r0[j]
    d0, d = lo[:, 1], parent.T @ direction
    if opposite(d0, d):
        return parent @ axis_rot(lo[:, 0], math.pi) @ lo
    return parent @ minrot(d0, d) @ lo


def expected_frames(skeleton, positions: np.ndarray, rotations: np.ndarray) -> list[np.ndarray | None]:
    """Per joint, the frame the swing rule gives from ``positions`` and the returned parent frame
    (``None`` for rigid joints, whose frame is checked by the rigid guarantee). Leaves: the parent's
    frame times the rest local rotation (no twist)."""
    r0 = rest_frames(skeleton)
    frames = frame_matrices(rotations)
    out: list[np.ndarray | None] = [None] * len(skeleton)
    for j in skeleton.order:
        p = int(skeleton.parents[j])
        fp = frames[p] if p >= 0 else np.eye(3)
        kids = skeleton.children(j)
        if is_rigid(skeleton, j):
            continue
        if not kids:
            out[j] = fp @ r0[p].T @ r0[j]
            continue
        out[j] = swing_frame(skeleton, fp, j, unit(positions[kids[0]] - positions[j]), r0)
        roll = roll_rad(skeleton, j, out[j], positions, r0)
        if roll is None:  # (the grandchild on this bone's line: any roll fits; the returned one is kept)
            out[j] = out[j] @ axis_rot(np.array([0.0, 1.0, 0.0]), twist_about_y(out[j], frames[j]))
        else:
            out[j] = out[j] @ axis_rot(np.array([0.0, 1.0, 0.0]), roll)
    return out


def twist_about_y(a: np.ndarray, b: np.ndarray) -> float:
    """The angle (radians) of ``a.T @ b`` about +Y (its twist part)."""
    m = a.T @ b
    return math.atan2(float(m[0, 2] - m[2, 0]), float(m[0, 0] + m[2, 2]))


def rigid_residual(skeleton, positions: np.ndarray, rotations: np.ndarray) -> float:
    """Largest |P_c − P_j − R_j·R0_j⁻¹·(rest_c − rest_j)| over children c of rigid joints j (scene units)."""
    r0 = rest_frames(skeleton)
    frames = frame_matrices(rotations)
    rest = skeleton.rest_positions
    worst = 0.0
    for j in range(len(skeleton)):
        if is_rigid(skeleton, j):
            for c in skeleton.children(j):
                want = frames[j] @ r0[j].T @ (rest[c] - rest[j])
                worst = max(worst, float(np.linalg.norm(positions[c] - positions[j] - want)))
    return worst


def local_rotations(skeleton, rotations: np.ndarray) -> list[np.ndarray]:
    """Each joint's frame relative to its parent's (the root: its world frame), as matrices."""
    frames = frame_matrices(rotations)
    return [frames[j] if p < 0 else frames[p].T @ frames[j] for j, p in enumerate(skeleton.parents.tolist())]


def fk_frames(skeleton, positions: np.ndarray) -> np.ndarray:
    """``(n, 4)`` quaternions of the swing-rule frames of a pose (rigid joints: best fit of their
    rest child offsets, by SVD), computed here independently of fabrik3d."""
    r0 = rest_frames(skeleton)
    rest = skeleton.rest_positions
    frames: list[np.ndarray] = [np.eye(3)] * len(skeleton)
    for j in skeleton.order:
        p = int(skeleton.parents[j])
        fp = frames[p] if p >= 0 else np.eye(3)
        kids = skeleton.children(j)
        if is_rigid(skeleton, j):
            src = np.array([r0[j].T @ (rest[c] - rest[j]) for c in kids])
            dst = np.array([positions[c] - positions[j] for c in kids])
            u, _, vt = np.linalg.svd(dst.T @ src)
            d = np.sign(np.linalg.det(u @ vt))
            frames[j] = u @ np.diag([1.0, 1.0, d]) @ vt
        elif not kids:
            frames[j] = fp @ (r0[p].T @ r0[j])
        else:
            frames[j] = swing_frame(skeleton, fp, j, unit(positions[kids[0]] - positions[j]), r0)
            frames[j] = frames[j] @ axis_rot(
                np.array([0.0, 1.0, 0.0]), roll_rad(skeleton, j, frames[j], positions, r0) or 0.0
            )
    return np.array([mat_quat(m) for m in frames])


def rolling(skeleton, j: int) -> bool:
    """Whether joint ``j`` rolls (a swing limit and a Twist, above a child with a Hinge and a grandchild)."""
    items = skeleton.constraints.get(skeleton.names[j], ())
    kids = skeleton.children(j)
    return (
        any(isinstance(c, fc.Twist) for c in items)
        and any(isinstance(c, (fc.Cone, fc.EllipticalCone, fc.Hinge)) for c in items)
        and bool(kids)
        and bool(skeleton.children(kids[0]))
        and any(isinstance(h, fc.Hinge) for h in skeleton.constraints.get(skeleton.names[kids[0]], ()))
    )


def roll_rad(skeleton, j: int, frame: np.ndarray, positions: np.ndarray, r0: list[np.ndarray]) -> float | None:
    """The roll (radians, about +Y) of a ball joint with a Twist limit above a hinge (an upper arm, a
    thigh), 0 for other joints: the twist that puts the grandchild in the child's hinge plane, bent
    the way the hinge allows (the smaller such twist), clamped to the Twist limit. Found here by
    sampling the twist and bisecting the sign change (fabrik3d solves it in closed form). ``None``
    when the grandchild lies on this bone's line (every roll fits)."""
    items = skeleton.constraints.get(skeleton.names[j], ())
    twist = next((c for c in items if isinstance(c, fc.Twist)), None)
    swing = any(isinstance(c, (fc.Cone, fc.EllipticalCone, fc.Hinge)) for c in items)
    kids = skeleton.children(j)
    if twist is None or not swing or not kids or not skeleton.children(kids[0]):
        return 0.0
    c, g = kids[0], skeleton.children(kids[0])[0]
    hinge = next((h for h in skeleton.constraints.get(skeleton.names[c], ()) if isinstance(h, fc.Hinge)), None)
    if hinge is None:
        return 0.0
    d0 = (r0[j].T @ r0[c])[:, 1]  # the child's rest bone in j's frame
    a = r0[j].T @ unit(np.array(hinge.axis, dtype=float))
    a = unit(a - (a @ d0) * d0)
    b = np.cross(a, d0)
    t = frame.T @ unit(positions[g] - positions[c])
    y = np.array([0.0, 1.0, 0.0])
    if np.linalg.norm(np.cross(t, y)) < 1e-9:
        return None

    def turned(tau: float) -> np.ndarray:
        return axis_rot(y, -tau) @ t

    taus = np.linspace(-math.pi, math.pi, 721)
    values = [float(a @ turned(x)) for x in taus]
    roots = []
    for k in range(len(taus) - 1):
        lo, hi, flo = taus[k], taus[k + 1], values[k]
        if flo == 0.0 or flo * values[k + 1] < 0.0:
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if (a @ turned(mid)) * flo > 0.0:
                    lo = mid
                else:
                    hi = mid
            roots.append(0.5 * (lo + hi))
    if not roots:
        return 0.0

    def miss(tau: float) -> float:
        v = turned(tau)
        phi = math.atan2(float(v @ b), float(v @ d0))
        return max(math.radians(hinge.min_deg) - phi, phi - math.radians(hinge.max_deg), 0.0)

    best = min(roots, key=lambda x: (round(miss(x), 9), abs(x)))
    return min(max(best, math.radians(twist.min_deg)), math.radians(twist.max_deg))


def mat_quat(m: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) of a rotation matrix (from its largest diagonal term)."""
    t = np.trace(m)
    if t > 0:
        s = 2.0 * math.sqrt(1.0 + t)
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, s / 4]
    elif m[0, 0] >= m[1, 1] and m[0, 0] >= m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [s / 4, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s]
    elif m[1, 1] >= m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 1] + m[1, 0]) / s, s / 4, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, s / 4, (m[1, 0] - m[0, 1]) / s]
    q = np.array(q)
    return q / np.linalg.norm(q)


def rotation_angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    """Angle in degrees of the rotation between two rotation matrices (precise near 0)."""
    chord = float(np.linalg.norm(a - b)) / (2.0 * math.sqrt(2.0))
    return math.degrees(2.0 * math.asin(min(1.0, chord)))


def assert_valid(skeleton, result, twisted: tuple[str, ...] = (), limit_tol: float = 1e-6) -> None:
    """Assert the guarantees of every constrained solve on ``result`` (a ``SolveResult``).

    Finite pose with the skeleton's bone lengths (1e-9 relative); unit rotations whose +Y
    points along the bone to the first child; every constraint within ``limit_tol`` degrees;
    the rigid guarantee within 1e-9; non-rigid frames equal to the swing-rule frames from the
    positions and the returned parent frames, except for a twist about +Y on the effectors
    named in ``twisted`` (those with an orientation target).
    """
    pos, rot = np.asarray(result.positions), np.asarray(result.rotations)
    n = len(skeleton)
    assert pos.shape == (n, 3) and rot.shape == (n, 4)
    assert np.all(np.isfinite(pos)) and np.all(np.isfinite(rot)), "NaN or inf in the result"
    for j in range(n):
        p = int(skeleton.parents[j])
        if p >= 0:
            length = float(np.linalg.norm(pos[j] - pos[p]))
            assert abs(length - skeleton.bone_lengths[j]) <= 1e-9 * max(1.0, skeleton.bone_lengths[j]), (
                f"bone {skeleton.names[j]}: {length} != {skeleton.bone_lengths[j]}"
            )
    assert np.abs(np.linalg.norm(rot, axis=1) - 1.0).max() <= 1e-9, "rotations are not unit quaternions"
    frames = frame_matrices(rot)
    for j in range(n):
        c = skeleton.first_child(j)
        if c >= 0:
            along = float(frames[j][:, 1] @ unit(pos[c] - pos[j]))
            assert along >= 1.0 - 1e-10, f"{skeleton.names[j]}: +Y is {math.degrees(math.acos(min(1, along)))} deg off"
    excess = violations(skeleton, pos, rot)
    bad = {k: v for k, v in excess.items() if v > limit_tol}
    assert not bad, f"limits exceeded (degrees): {bad}"
    assert rigid_residual(skeleton, pos, rot) <= 1e-9, "a rigid joint's children moved in its frame"
    expected = expected_frames(skeleton, pos, rot)
    r0 = rest_frames(skeleton)
    for j, want in enumerate(expected):
        if want is None:
            continue
        c, p = skeleton.first_child(j), int(skeleton.parents[j])
        if c >= 0:
            # the swing rule is discontinuous where a bone is opposite its rest direction (in the
            # parent's frame): there only +Y (checked above) is compared
            fp, rp = (frames[p], r0[p]) if p >= 0 else (np.eye(3), np.eye(3))
            d, d0 = fp.T @ unit(pos[c] - pos[j]), (rp.T @ r0[j])[:, 1]
            if float(d @ d0) < -1.0 + 1e-9:
                continue
        if skeleton.names[j] in twisted or (rolling(skeleton, j) and rotation_angle_deg(want, frames[j]) > 1e-6):
            # (a rolling joint's roll is chosen from the points in the middle of the last pass: where
            # the child's hinge or the joint's Twist clamps, the final points do not give it back;
            # the exact roll is checked on the presets with fk_frames)
            rel = want.T @ frames[j]
            assert abs(rel[1, 1] - 1.0) <= 1e-9, f"{skeleton.names[j]}: differs by more than a twist about +Y"
        else:
            angle = rotation_angle_deg(want, frames[j])
            assert angle <= 1e-6, f"{skeleton.names[j]}: frame is {angle} deg off the swing-rule frame"


def arbitrary_pose(skeleton, rng: np.random.Generator) -> np.ndarray:
    """A pose with the skeleton's bone lengths and uniformly random bone directions (limits ignored)."""
    pos = np.empty((len(skeleton), 3))
    pos[skeleton.root] = skeleton.rest_positions[skeleton.root]
    for j in skeleton.order[1:]:
        pos[j] = pos[int(skeleton.parents[j])] + unit(rng.normal(size=3)) * skeleton.bone_lengths[j]
    return pos
