"""Poses stored by role, so that they transfer between rigs, and their JSON form (docs/poses.md).

A ``Pose`` holds, for each role it has (a joint name of the humanoid preset, ``fabrik3d.model.rig_map``,
fingers included), the direction of the role's bone and its twist, both relative to the body:

* ``bones[role]``: the unit direction, in the body (pelvis) frame, of the role's +Y axis (its bone, toward
  its first child in the preset). The body frame is the preset's world at rest: +X the body's left, +Y
  up, +Z forward.
* ``twists[role]``: degrees about the bone: the role's rotation from the preset's rest (T-pose) frame, in
  the body frame, is the swing of the rest direction onto ``bones[role]`` after a twist of this many
  degrees about the rest direction.
* ``pelvis``: the pelvis's rotation from its rest (x, y, z, w), without heading (a pose applies facing
  where the character faces); ``height``: the pelvis's height above the ground as a fraction of its height
  at rest. Either may be ``None`` (a partial pose).
* ``thumbnail``: PNG bytes, or ``None``.

Roles fall into the **parts** ``arms`` (clavicle to hand), ``legs`` (hip to toe), ``spine`` (pelvis to
head, the pelvis's rotation and height too) and ``hands`` (the fingers).

The library file is JSON: ``{"format": "fabrik3d poses", "version": 1, "poses": {name: pose}}`` with a
pose ``{"bones": {role: [x, y, z]}, "twists": {role: degrees}, "pelvis": [x, y, z, w], "height": h,
"thumbnail": "<base64 PNG>"}`` (all keys but ``bones`` optional). Errors name the place, e.g.
``poses['wave'].bones['elbow_l']: expected 3 numbers, got [1, 2]``.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fabrik3d import checks
from fabrik3d.model.mirror import mirror_name
from fabrik3d.model.rig_map import ROLES

FORMAT = "fabrik3d poses"
VERSION = 1
PARTS: tuple[str, ...] = ("arms", "legs", "spine", "hands")
# Bounds of a library: names, poses in a file, a thumbnail's bytes.
MAX_NAME = 100
MAX_POSES = 10_000
MAX_THUMBNAIL_BYTES = 1 << 20
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_POSE_KEYS = ("bones", "twists", "pelvis", "height", "thumbnail")
_FINGERS = ("thumb_", "index_", "middle_", "ring_", "pinky_")
_ARMS = ("clavicle_", "shoulder_", "elbow_", "wrist_", "hand_")
_LEGS = ("hip_", "knee_", "ankle_", "toe_")
_ROLE_SET = frozenset(ROLES)

Vec = tuple[float, float, float]
Quat = tuple[float, float, float, float]


def part_of(role: str) -> str:
    """The part (``PARTS``) a role belongs to."""
    if role.startswith(_FINGERS):
        return "hands"
    if role.startswith(_ARMS):
        return "arms"
    if role.startswith(_LEGS):
        return "legs"
    return "spine"


def check_parts(parts: Any) -> frozenset[str]:
    """``parts`` (``None``: all of them) as a set; ``ValueError`` for an unknown part."""
    if parts is None:
        return frozenset(PARTS)
    if isinstance(parts, str):
        parts = [parts]
    if not isinstance(parts, Iterable):
        raise ValueError(f"parts: expected a list of {checks.names_list(PARTS)}, got {_quote(parts)}")
    out = set()
    for p in parts:
        if p not in PARTS:
            raise ValueError(f"parts: unknown part {_quote(p)}; parts are {checks.names_list(PARTS)}")
        out.add(p)
    return frozenset(out)


@dataclass(frozen=True)
class Pose:
    """A pose by role (module docstring). Build with ``fabrik3d.capture_pose`` or ``Pose.from_dict``."""

    bones: Mapping[str, Vec] = field(default_factory=dict)
    twists: Mapping[str, float] = field(default_factory=dict)
    pelvis: Quat | None = None
    height: float | None = None
    thumbnail: bytes | None = None

    @property
    def parts(self) -> frozenset[str]:
        """The parts this pose holds something of."""
        out = {part_of(r) for r in self.bones}
        return frozenset(out | ({"spine"} if self.pelvis is not None or self.height is not None else set()))

    def only(self, parts: Any) -> Pose:
        """This pose with only the roles of ``parts`` (and the pelvis when ``spine`` is among them)."""
        keep = check_parts(parts)
        spine = "spine" in keep
        return Pose(
            {r: d for r, d in self.bones.items() if part_of(r) in keep},
            {r: t for r, t in self.twists.items() if part_of(r) in keep},
            self.pelvis if spine else None,
            self.height if spine else None,
            self.thumbnail,
        )

    def mirrored(self) -> Pose:
        """The pose with left and right swapped and reflected in the body's left-right plane."""

        def swap(role: str) -> str:
            other = mirror_name(role)
            return other if other in _ROLE_SET else role

        bones = {swap(r): (-d[0], d[1], d[2]) for r, d in self.bones.items()}
        twists = {swap(r): -t for r, t in self.twists.items()}
        q = self.pelvis
        pelvis = None if q is None else (q[0], -q[1], -q[2], q[3])
        return Pose(bones, twists, pelvis, self.height, self.thumbnail)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (module docstring)."""
        out: dict[str, Any] = {
            "bones": {r: [round(v, 9) for v in d] for r, d in self.bones.items()},
            "twists": {r: round(t, 6) for r, t in self.twists.items()},
        }
        if self.pelvis is not None:
            out["pelvis"] = [round(v, 9) for v in self.pelvis]
        if self.height is not None:
            out["height"] = round(self.height, 9)
        if self.thumbnail is not None:
            out["thumbnail"] = base64.b64encode(self.thumbnail).decode("ascii")
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "pose") -> Pose:
        """A pose from its JSON form; ``ValueError`` naming the place (``where`` prefixes it)."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{where}: expected an object with {checks.names_list(_POSE_KEYS)}, got {_quote(data)}")
        unknown = [k for k in data if k not in _POSE_KEYS]
        if unknown:
            raise ValueError(f"{where}: unknown key {_quote(unknown[0])}; a pose has {checks.names_list(_POSE_KEYS)}")
        bones = {r: _direction(v, f"{where}.bones[{r!r}]") for r, v in _roles(data.get("bones", {}), where, "bones")}
        twists = {}
        for r, v in _roles(data.get("twists", {}), where, "twists"):
            t = _number(v, f"{where}.twists[{r!r}]")
            if not -180.0 <= t <= 180.0:
                raise ValueError(f"{where}.twists[{r!r}]: expected degrees in [-180, 180], got {_quote(v)}")
            twists[r] = t
        pelvis = None if data.get("pelvis") is None else _quaternion(data["pelvis"], f"{where}.pelvis")
        height = None
        if data.get("height") is not None:
            height = _number(data["height"], f"{where}.height")
            if not 0.0 <= height <= 10.0:
                raise ValueError(f"{where}.height: expected a fraction in [0, 10], got {_quote(data['height'])}")
        thumbnail = None
        if data.get("thumbnail") is not None:
            thumbnail = check_thumbnail(_decode(data["thumbnail"], f"{where}.thumbnail"), f"{where}.thumbnail")
        return cls(bones, twists, pelvis, height, thumbnail)


def check_thumbnail(data: Any, where: str = "thumbnail") -> bytes:
    """``data`` if it is the bytes of a PNG of at most ``MAX_THUMBNAIL_BYTES``; else ``ValueError``."""
    if not isinstance(data, (bytes, bytearray)):
        raise ValueError(f"{where}: expected the bytes of a PNG image, got {type(data).__name__}")
    if len(data) > MAX_THUMBNAIL_BYTES:
        raise ValueError(f"{where}: a thumbnail is at most {MAX_THUMBNAIL_BYTES} bytes, got {len(data)}")
    if not bytes(data).startswith(PNG_SIGNATURE):
        raise ValueError(f"{where}: not a PNG image")
    return bytes(data)


def check_name(name: Any) -> str:
    """A pose's name: a non-empty string of at most ``MAX_NAME`` characters, not only spaces."""
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        raise ValueError(f"pose name: expected 1 to {MAX_NAME} characters, got {_quote(name)}")
    return name


def library_to_dict(poses: Mapping[str, Pose]) -> dict[str, Any]:
    """The JSON form of a library file (module docstring)."""
    return {"format": FORMAT, "version": VERSION, "poses": {name: pose.to_dict() for name, pose in poses.items()}}


def library_from_dict(data: Any) -> dict[str, Pose]:
    """name -> ``Pose`` from a library file's JSON data; ``ValueError`` naming the place."""
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise ValueError(f"format: expected {FORMAT!r}, not a pose library")
    if data.get("version") != VERSION:
        raise ValueError(f"version: expected {VERSION}, got {_quote(data.get('version'))}")
    poses = data.get("poses")
    if not isinstance(poses, Mapping):
        raise ValueError(f"poses: expected an object of name -> pose, got {_quote(poses)}")
    if len(poses) > MAX_POSES:
        raise ValueError(f"poses: a library holds at most {MAX_POSES} poses, got {len(poses)}")
    out = {}
    for name, pose in poses.items():
        try:
            check_name(name)
        except ValueError as exc:
            raise ValueError(f"poses: {exc}") from None
        out[name] = Pose.from_dict(pose, f"poses[{name!r}]")
    return out


def _quote(value: Any) -> str:
    """``value`` as the user wrote it, at most 80 characters (``checks.quoted``)."""
    return checks.quoted(value)


def _roles(data: Any, where: str, key: str) -> list[tuple[str, Any]]:
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}.{key}: expected an object of role -> value, got {_quote(data)}")
    for role in data:
        if role not in _ROLE_SET:
            raise ValueError(f"{where}.{key}: unknown role {_quote(role)} (roles are the humanoid's joint names)")
    return list(data.items())


def _number(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        raise ValueError(f"{where}: expected a number, got {_quote(v)}")
    return float(v)


def _numbers(v: Any, k: int, where: str) -> tuple[float, ...]:
    ok = isinstance(v, (list, tuple)) and len(v) == k
    ok = ok and all(not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(float(x)) for x in v)
    if not ok:
        raise ValueError(f"{where}: expected {k} numbers, got {_quote(v)}")
    return tuple(float(x) for x in v)


def _direction(v: Any, where: str) -> Vec:
    x, y, z = _numbers(v, 3, where)
    n = math.sqrt(x * x + y * y + z * z)
    if not 0.5 < n < 2.0:
        raise ValueError(f"{where}: expected a unit direction, got length {n:.3g}")
    return (x / n, y / n, z / n)


def _quaternion(v: Any, where: str) -> Quat:
    q = _numbers(v, 4, where)
    n = math.sqrt(sum(c * c for c in q))
    if not abs(n - 1.0) < 1e-3:
        raise ValueError(f"{where}: expected a unit quaternion (x, y, z, w), got length {n:.3g}")
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


def _decode(v: Any, where: str) -> bytes:
    if not isinstance(v, str):
        raise ValueError(f"{where}: expected a base64 string, got {_quote(v)}")
    if len(v) > 2 * MAX_THUMBNAIL_BYTES:
        raise ValueError(f"{where}: a thumbnail is at most {MAX_THUMBNAIL_BYTES} bytes")
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{where}: not valid base64 ({_quote(v)})") from None
