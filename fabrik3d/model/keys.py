"""Keyframes: what a user poses with, at frame numbers, and the goals between keys.

A ``Key`` holds, at one frame, what ``solve`` takes: targets (points or ``Target`` with an
orientation; a pinned effector is a target where it stands), a root target and poles, and may hold
the pose the user saw there (``KeyPose``: every joint's position and frame, joints turned by hand
and turns about the bones included). An ``Animation`` is keys on distinct frames, a frame rate and
a frame range.

Keyed poses are a curve too (``Animation.poses``, ``fabrik3d.model.key_poses``): a bake shows a
keyed pose at its key, and between keys starts each frame's solve from the curve and relaxes
toward it (``fabrik3d.io.bake``).

Each goal is its own curve (as an animation channel in Blender): the target of ``hand_l``
runs through the keys that hold a target for ``hand_l``, by the animation's interpolation
(``fabrik3d.model.curves``: ``"linear"``, ``"ease"`` or ``"smooth"``); orientations by slerp;
before its first key and after its last the curve holds its value (where keys hold poses, it is free
before its first key: the keyed poses lead there). An effector that no key targets is free all along.

JSON form (the ``animation`` of a scene file, version 3)::

    {"fps": 30, "start": 0, "end": 60, "interpolation": "smooth",
     "keys": [{"frame": 0, "targets": {"hand_l": [0.5, 1.2, 0.3],
                                       "hand_r": {"position": [..], "orientation": [x, y, z, w]}},
               "root_target": null, "poles": {"hand_l": [0.4, 0.8, -0.5]},
               "pose": {"positions": [[x, y, z], ...], "rotations": [[x, y, z, w], ...]}}, ...]}

(``pose`` is optional: a key without one holds its goals only, as scene files before it did.)

Frames are integers in ``[0, MAX_FRAME]``; an animation holds at most ``MAX_KEYS`` keys; positions in scene
units; ``fps`` frames per second.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from fabrik3d import checks
from fabrik3d.model import curves
from fabrik3d.model.key_poses import KeyPose, check_pose, pose_curve
from fabrik3d.model.targets import Target

_quoted = checks.quoted  # (an error quotes no more than 80 characters of its input)

DEFAULT_FPS = 30.0
MAX_FPS = 1000.0
# The slowest frame rate: a frame's time, frame / fps, stays finite and within a take's length for
# the frames a bake takes in one go.
MIN_FPS = 0.01
# The last frame a key may sit on (a day at 30 frames per second).
MAX_FRAME = 2_592_000
# The most keys an animation holds (docs/animation.md, "Limits"): a file of more is refused before its keys are read.
MAX_KEYS = 100_000


def frame_number(value: Any, name: str) -> int:
    """An integer frame in ``[0, MAX_FRAME]``, or ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float, np.floating)):
        raise ValueError(f"{name}: expected a frame number, got {_quoted(value)}")
    if isinstance(value, (float, np.floating)) and not (math.isfinite(value) and float(value).is_integer()):
        raise ValueError(f"{name}: expected a whole frame number, got {_quoted(value)}")
    if not 0 <= value <= MAX_FRAME:
        raise ValueError(f"{name}: frame {value} is outside 0..{MAX_FRAME}")
    return int(value)


def check_key_count(count: int, where: str) -> None:
    """``ValueError`` naming ``where`` when ``count`` keys are more than ``MAX_KEYS``."""
    if count > MAX_KEYS:
        raise ValueError(f"{where}: {count:,} keys, more than the {MAX_KEYS:,} an animation may hold")


def _target(value: Any, name: str) -> Target:
    if isinstance(value, Target):
        return value
    if isinstance(value, Mapping):
        unknown = set(value) - {"position", "orientation", "weight"}
        if unknown or "position" not in value:
            raise ValueError(f"{name}: expected [x, y, z] or {{position, orientation, weight}}, got {_quoted(value)}")
        try:
            return Target(value["position"], value.get("orientation"), value.get("weight", 1.0))
        except ValueError as exc:
            raise ValueError(f"{name}.{exc}") from None
    return Target(checks.point(value, name))


def _names(value: Any, name: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{name}: expected an object mapping effector names to goals, got {_quoted(value)}")
    return value


@dataclass(frozen=True)
class Key:
    """What the user posed with at ``frame``.

    Attributes:
        frame: the frame number (an integer >= 0).
        targets: effector name -> ``Target`` (a point is taken as a ``Target`` without orientation).
        root_target: ``Target`` for the root, or None.
        poles: effector name -> ``(3,)`` pole point, scene units.
        pose: the ``KeyPose`` the user saw at this frame (a ``SolveResult`` is taken as one), or None.
    """

    frame: int
    targets: Mapping[str, Any] = field(default_factory=dict)
    root_target: Any = None
    poles: Mapping[str, Any] = field(default_factory=dict)
    pose: Any = None

    def __post_init__(self) -> None:
        where = f"key at frame {self.frame!r}"
        object.__setattr__(self, "frame", frame_number(self.frame, f"{where}: frame"))
        targets = _names(self.targets, f"{where}: targets")
        object.__setattr__(self, "targets", {k: _target(v, f"{where}: targets.{k}") for k, v in targets.items()})
        if self.root_target is not None:
            object.__setattr__(self, "root_target", _target(self.root_target, f"{where}: root_target"))
        poles = _names(self.poles, f"{where}: poles")
        object.__setattr__(self, "poles", {k: checks.point(v, f"{where}: poles.{k}") for k, v in poles.items()})
        if self.pose is not None:
            object.__setattr__(self, "pose", KeyPose.of(self.pose, f"{where}: pose"))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (module docstring)."""
        return {
            "frame": self.frame,
            "targets": {k: _target_json(t) for k, t in self.targets.items()},
            "root_target": None if self.root_target is None else _target_json(self.root_target),
            "poles": {k: v.tolist() for k, v in self.poles.items()},
            **({} if self.pose is None else {"pose": self.pose.to_dict()}),
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "key") -> Key:
        """A key from its JSON form; ``ValueError`` naming ``where`` and the field of any problem."""
        if not isinstance(data, Mapping) or "frame" not in data:
            raise ValueError(f"{where}: expected an object with a 'frame'")
        unknown = set(data) - set(_FIELDS)
        if unknown:
            raise ValueError(f"{where}: unknown field {checks.quoted(sorted(unknown)[0])}")
        if type(data) is dict and data.keys() <= {"frame", "targets"} and (plain := _plain_key(data)) is not None:
            return plain
        get = data.get
        try:
            return cls(data["frame"], get("targets") or {}, get("root_target"), get("poles") or {}, get("pose"))
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None


_FIELDS = ("frame", "targets", "root_target", "poles", "pose")


def _plain_key(data: dict[str, Any]) -> Key | None:
    """A key of the common form (an integer frame, targets as plain points) made with the checks of
    ``Key`` done once, here (``frame_number``'s range, ``checks.plain_point``); ``None`` for any other."""
    frame, targets = data.get("frame"), data.get("targets") or {}
    if type(frame) is not int or not 0 <= frame <= MAX_FRAME or type(targets) is not dict:
        return None
    points = {}
    for name, value in targets.items():
        point = checks.plain_point(value) if type(name) is str else None
        if point is None:
            return None
        points[name] = Target.at(np.array(point))
    key = object.__new__(Key)
    for attribute, value in zip(_FIELDS, (frame, points, None, {}, None), strict=True):
        object.__setattr__(key, attribute, value)
    return key


def _target_json(t: Target) -> Any:
    if t.orientation is None and t.weight == 1.0:
        return t.position.tolist()
    out: dict[str, Any] = {"position": t.position.tolist()}
    if t.orientation is not None:
        out["orientation"] = t.orientation.tolist()
    if t.weight != 1.0:
        out["weight"] = t.weight
    return out


def _table(held: list[tuple[int, Target | None]]) -> Any:
    """A target curve's keys as arrays: ``(frames, positions, (frames, orientations) or None, weights)``,
    or None when no key holds it."""
    held = [(f, t) for f, t in held if t is not None]
    if not held:
        return None
    turned = [(f, t.orientation) for f, t in held if t.orientation is not None]
    return (
        np.array([f for f, _ in held], dtype=float),
        np.array([t.position for _, t in held]),
        (np.array([f for f, _ in turned], dtype=float), np.array([q for _, q in turned])) if turned else None,
        np.array([t.weight for _, t in held], dtype=float),
    )


class Goals(NamedTuple):
    """What to solve at one frame: ``solve(skeleton, g.targets, root_target=g.root_target,
    poles=g.poles)``. Targets are ``Target``s, poles ``(3,)`` points."""

    targets: dict[str, Target]
    root_target: Target | None
    poles: dict[str, np.ndarray]


@dataclass(frozen=True)
class Animation:
    """Keys on distinct frames, played at ``fps`` over frames ``start..end`` (inclusive).

    Attributes:
        keys: the keys, kept sorted by frame; two keys on one frame are refused.
        fps: frames per second, from ``MIN_FPS`` (0.01) to ``MAX_FPS`` (1000).
        start: the first frame of the range.
        end: the last frame of the range (default: the last key's frame, at least ``start``).
        interpolation: ``"linear"``, ``"ease"`` or ``"smooth"`` (``fabrik3d.model.curves``).
    """

    keys: tuple[Key, ...] = ()
    fps: float = DEFAULT_FPS
    start: int = 0
    end: int | None = None
    interpolation: str = "smooth"

    def __post_init__(self) -> None:
        keys = tuple(self.keys)
        check_key_count(len(keys), "keys")
        if not all(isinstance(k, Key) for k in keys):
            raise ValueError("keys: expected Key objects")
        by_frame: dict[int, Key] = {}
        for k in keys:
            if k.frame in by_frame:
                raise ValueError(f"keys: two keys on frame {k.frame}; a frame holds one key")
            by_frame[k.frame] = k
        object.__setattr__(self, "keys", tuple(sorted(keys, key=lambda k: k.frame)))
        object.__setattr__(self, "_by_frame", by_frame)  # (key_at in constant time: a bake asks every frame)
        fps = checks.positive(self.fps, "fps")
        if fps > MAX_FPS:
            raise ValueError(f"fps: must be at most {MAX_FPS:g}, got {fps:g}")
        if fps < MIN_FPS:
            raise ValueError(f"fps: must be at least {MIN_FPS:g}, got {fps:g}")
        object.__setattr__(self, "fps", fps)
        object.__setattr__(self, "start", frame_number(self.start, "start"))
        if self.end is not None:
            end = frame_number(self.end, "end")
            if end < self.start:
                raise ValueError(f"end: frame {end} is before start {self.start}")
            object.__setattr__(self, "end", end)
        curves.check_mode(self.interpolation)

    # -- the range and the keys ----------------------------------------------------------------
    @property
    def last(self) -> int:
        """The range's last frame (``end``, or the last key's frame, at least ``start``)."""
        if self.end is not None:
            return self.end
        return max([self.start, *(k.frame for k in self.keys)])

    @property
    def frames(self) -> range:
        """The frames of the range, ``start..last`` inclusive."""
        return range(self.start, self.last + 1)

    def key_at(self, frame: int) -> Key | None:
        """The key on ``frame``, or None."""
        return self._by_frame.get(frame)  # type: ignore[attr-defined,no-any-return]

    def with_key(self, key: Key) -> Animation:
        """A copy with ``key`` set (it replaces a key on the same frame)."""
        return replace(self, keys=(*(k for k in self.keys if k.frame != key.frame), key))

    def without_key(self, frame: int) -> Animation:
        """A copy without the key on ``frame``; ``ValueError`` if there is none."""
        if self.key_at(frame) is None:
            raise ValueError(f"frame {frame}: there is no key on this frame")
        return replace(self, keys=tuple(k for k in self.keys if k.frame != frame))

    def with_key_moved(self, frame: int, to: int) -> Animation:
        """A copy with the key on ``frame`` moved to frame ``to``; ``ValueError``, before anything is
        changed, if there is no key on ``frame``, ``to`` already holds one, or ``to`` is outside the
        range (before ``start``, or after ``end`` when the range has one: without it, a key moved past
        the last one makes the range longer)."""
        key = self.key_at(frame)
        if key is None:
            raise ValueError(f"frame {frame}: there is no key on this frame")
        to = frame_number(to, "to")
        if to < self.start or (self.end is not None and to > self.end):
            raise ValueError(f"to: frame {to} is outside the range {self.start}..{self.last}")
        if to != frame and self.key_at(to) is not None:
            raise ValueError(f"frame {to}: there is a key on this frame already")
        rest = self.without_key(frame)
        return replace(rest, keys=(*rest.keys, replace(key, frame=to)))

    def check(self, skeleton: Any) -> None:
        """``ValueError`` naming the key and the name when a key targets or poles a joint that is not
        one of ``skeleton``'s end effectors, or holds a pose that is not one of ``skeleton``'s (its
        joint count or a bone's length off: ``key_poses.check_pose``)."""
        effectors = skeleton.end_effectors
        for k in self.keys:
            if k.pose is not None:
                check_pose(skeleton, k.pose, f"key at frame {k.frame}: pose")
            for part, names in (("targets", k.targets), ("poles", k.poles)):
                for name in names:
                    if name not in effectors:
                        raise ValueError(
                            f"key at frame {k.frame}: {part}.{name}: not an end effector; "
                            f"valid names are {checks.names_list(effectors)}"
                        )

    # -- the goals between keys ----------------------------------------------------------------
    def goals(self, frames: Any) -> list[Goals]:
        """The goals at each of ``frames`` (``(m,)`` frame numbers, whole or not), each curve
        evaluated for all frames at once (from its keys as arrays, built once: linear in keys and frames)."""
        at = np.atleast_1d(np.asarray(frames, dtype=float))
        if at.ndim != 1 or not np.all(np.isfinite(at)):
            raise ValueError(f"frames: expected finite frame numbers, got {_quoted(frames)}")
        out = [Goals({}, None, {}) for _ in at]
        targets, root, poles = self._curves
        for name, table in targets.items():
            for g, t in zip(out, self._target_curve(table, at)):
                g.targets[name] = t
        posed = any(k.pose is not None for k in self.keys)  # (then the keyed poses lead before a goal's first key)
        if roots := self._target_curve(root, at):
            out = [g._replace(root_target=None if posed and f < root[0][0] else t) for g, t, f in zip(out, roots, at)]
        for name, (f, v) in poles.items():
            for g, p in zip(out, curves.interpolate(f, v, at, self.interpolation)):
                g.poles[name] = p
        for g, f in zip(out, at) if posed else ():
            for part, tables in ((g.targets, targets), (g.poles, poles)):
                for name in [n for n in part if f < tables[n][0][0]]:
                    del part[name]
        return out

    def goals_at(self, frame: float) -> Goals:
        """The goals at one frame (``goals``)."""
        return self.goals([frame])[0]

    @functools.cached_property
    def _curves(self) -> tuple[dict[str, Any], Any, dict[str, Any]]:
        """``(targets, root, poles)``: each goal's keys as arrays (``_table``), built on first use."""
        keys = self.keys
        names = dict.fromkeys(n for k in keys for n in k.targets)
        targets = {n: _table([(k.frame, k.targets.get(n)) for k in keys]) for n in names}
        poles = {}
        for name in dict.fromkeys(n for k in keys for n in k.poles):
            held = [(k.frame, k.poles[name]) for k in keys if name in k.poles]
            poles[name] = (np.array([h[0] for h in held], dtype=float), np.array([h[1] for h in held]))
        return targets, _table([(k.frame, k.root_target) for k in keys]), poles

    def _target_curve(self, table: Any, at: np.ndarray) -> list[Target]:
        if table is None:
            return []
        f, points, turned, weights = table
        positions = curves.interpolate(f, points, at, self.interpolation)
        orientations: Any = [None] * len(at)
        if turned is not None:
            orientations = curves.slerp_curve(*turned, at, self.interpolation)
        held = weights[np.maximum(0, np.searchsorted(f, at, side="right") - 1)].tolist()
        return [Target(p, q, w) for p, q, w in zip(positions, orientations, held)]

    def poses(self, skeleton: Any, frames: Any) -> list[KeyPose | None]:
        """The keyed poses' curve at each of ``frames`` (``fabrik3d.model.key_poses.pose_curve``)."""
        return pose_curve(skeleton, self.keys, frames, self.interpolation)

    # -- JSON ----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON form (module docstring)."""
        return {
            "fps": self.fps,
            "start": self.start,
            "end": self.end,
            "interpolation": self.interpolation,
            "keys": [k.to_dict() for k in self.keys],
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "animation") -> Animation:
        """An animation from its JSON form; ``ValueError`` naming the place (``animation.keys[2]:
        ...``) of any problem."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{where}: expected an object with 'keys'")
        unknown = set(data) - {"fps", "start", "end", "interpolation", "keys"}
        if unknown:
            raise ValueError(f"{where}: unknown field {checks.quoted(sorted(unknown)[0])}")
        keys = data.get("keys", [])
        if not isinstance(keys, list):
            raise ValueError(f"{where}.keys: expected a list of keys")
        check_key_count(len(keys), f"{where}.keys")
        parsed = tuple(Key.from_dict(k, f"{where}.keys[{i}]") for i, k in enumerate(keys))
        get = data.get
        try:
            return cls(parsed, get("fps", DEFAULT_FPS), get("start", 0), get("end"), get("interpolation", "smooth"))
        except ValueError as exc:
            raise ValueError(f"{where}.{exc}") from None
