"""The timeline in the web UI, without the UI: keys at frames, scrubbing, baking, exports.

``Timeline`` is a part of ``fabrik3d_web.document.controller.Controller``. The keys are a
``fabrik3d.model.keys.Animation``; a key holds the targets, root target and poles the user has set
at the current frame, and the pose on screen (joints turned by hand and turns about the bones
included: at the key it comes back as it was). Going to a frame shows the pose baked there (``fabrik3d.io.bake.bake``:
frame by frame from the range's first frame, each from the one before, as ``fabrik3d bake``
does), so the pose on screen at a frame is the pose the exported animation has there. Baked
frames are kept until the keys or the solver settings change. Key edits are undo steps; going to
a frame is not.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d.io.bake import bake
from fabrik3d.io.scene import Scene
from fabrik3d.io.take import Take, take_to_json
from fabrik3d.model.key_poses import pose_curve
from fabrik3d.model.keys import Animation, Key, frame_number

# The range a new timeline offers (frames 0..60: two seconds at 30 frames per second).
DEFAULT_END = 60
# A frame the user goes to is baked at once when at most this many frames before it are not baked yet
# (about 5 ms each here); farther, a preview is shown first (``Timeline.go_to_frame``'s ``quick``).
QUICK_BAKE = 4


class Timeline:
    """Keys, the current frame and the baked poses (see the module docstring).

    Attributes:
        animation: the keys, frame rate and range.
        frame: the current frame.
    """

    scene: Scene
    targets: dict[str, np.ndarray]
    root_target: np.ndarray | None
    poles: dict[str, np.ndarray]
    result: fabrik3d.SolveResult
    limits: bool
    tolerance: float
    max_iterations: int
    _free: fabrik3d.Skeleton
    built: fabrik3d.SolveResult | None  # (the Turning part's)
    orientations: dict[str, np.ndarray]  # (the Orienting part's, with ``root_orientation``, ``_goals``)
    root_orientation: np.ndarray | None
    animation_glb: Any  # (the Characters part's)

    # (``_push_undo`` is the History part's, ``_record_frame`` the Recording part's)

    def _clear_timeline(self, animation: Animation | None) -> None:
        self.animation = animation if animation is not None else Animation(end=DEFAULT_END)
        self.frame = self.animation.start
        self._previewed: tuple[int, fabrik3d.SolveResult] | None = None  # (a frame and the preview shown of it)
        self._keys_changed()

    def _keys_changed(self) -> None:
        """Forget the baked poses (the keys, or what they are solved with, changed)."""
        self._baked: list[fabrik3d.SolveResult] = []  # frames start, start + 1, ... in order
        self._baked_with: tuple[Any, ...] = ()

    @property
    def previewing(self) -> int | None:
        """The frame shown as a preview (``go_to_frame``'s ``quick``), while the preview is what is shown
        (another frame, or an edit since, ends it)."""
        shown = self._previewed
        return shown[0] if shown is not None and shown[0] == self.frame and shown[1] is self.result else None

    # -- what the user does -------------------------------------------------------------------
    def set_key(self) -> None:
        """Key the current frame: the targets, root target and poles as they are now, and the pose
        shown (a key already on this frame is replaced)."""
        targets, root, _ = self._goals(self.targets, self.root_target)
        key = Key(self.frame, targets, root, self.poles, self.result)
        self._set_animation(self.animation.with_key(key))

    def delete_key(self, frame: Any = None) -> None:
        """Delete the key on ``frame`` (default: the current frame)."""
        at = self.frame if frame is None else frame_number(frame, "frame")
        self._set_animation(self.animation.without_key(at))

    def move_key(self, frame: Any, to: Any) -> None:
        """Move the key on ``frame`` to frame ``to`` (which must be free), and go there."""
        moved = self.animation.with_key_moved(frame_number(frame, "frame"), frame_number(to, "to"))
        self._set_animation(moved)
        self.go_to_frame(int(to))

    def set_timeline(self, fps: Any, start: Any, end: Any, interpolation: Any) -> None:
        """Change the frame rate (frames per second), the range (frames ``start..end``; an empty
        ``end``: the last key's frame) or the interpolation (``linear``, ``ease`` or ``smooth``)."""
        fps, start = _typed(fps, "fps"), _typed(start, "start")
        end = None if end in (None, "") else _typed(end, "end")
        anim = self.animation
        changed = dataclasses.replace(anim, fps=fps, start=start, end=end, interpolation=interpolation)
        if (changed.fps, changed.start, changed.end, changed.interpolation) != (
            anim.fps,
            anim.start,
            anim.end,
            anim.interpolation,
        ):
            self._set_animation(changed)
            if not changed.start <= self.frame <= changed.last:
                self.go_to_frame(min(max(self.frame, changed.start), changed.last))

    def go_to_frame(self, frame: Any, quick: bool = False) -> None:
        """Show frame ``frame`` (within the range): the goals the keys give there and the pose baked
        there. Without keys only the frame number changes. ``quick`` (a frame the user went to): where
        more than ``QUICK_BAKE`` frames before it are not baked yet (a long range right after a key
        edit), a preview at once (``preview_of``; ``previewing`` says which frame), to be shown again
        baked once the background bake has reached it (``refine_preview``)."""
        f = frame_number(frame, "frame")
        anim = self.animation
        if not anim.start <= f <= anim.last:
            raise ValueError(f"frame: {f} is outside the range {anim.start}..{anim.last}")
        if anim.keys:
            preview = quick and f - anim.start + 1 - self._baked_count() > QUICK_BAKE
            result = self.preview_of(f) if preview else self._bake_to(f)
            self._previewed = (f, result) if preview else None
            goals = anim.goals_at(f)
            self.targets = {k: t.position.copy() for k, t in goals.targets.items()}
            self.orientations = {k: t.orientation.copy() for k, t in goals.targets.items() if t.orientation is not None}
            self.root_target = None if goals.root_target is None else goals.root_target.position.copy()
            turned = None if goals.root_target is None else goals.root_target.orientation
            self.root_orientation = None if turned is None else turned.copy()
            self.poles = {k: v.copy() for k, v in goals.poles.items()}
            self.result = result
            if any(k.pose is not None for k in anim.keys):  # (later drags relax toward the pose shown)
                self.built = result
            self._record_frame()
        self.frame = f

    # -- readouts and exports -----------------------------------------------------------------
    def timeline_state(self) -> dict[str, Any]:
        """The timeline's part of the trame state contract that the page may set (docs/web.md)."""
        anim = self.animation
        return {
            "frame": self.frame,
            "frame_start": anim.start,
            "frame_end": anim.last,
            "anim_fps": anim.fps,
            "interpolation": anim.interpolation,
        }

    def key_state(self) -> dict[str, Any]:
        """The keys' frames and whether the current frame holds one (the server's state)."""
        return {
            "key_frames": [k.frame for k in self.animation.keys],
            "key_here": self.animation.key_at(self.frame) is not None,
        }

    def animation_take(self) -> Take:
        """Every frame of the range, baked (``ValueError`` without keys)."""
        anim = self.animation
        if not anim.keys:
            raise ValueError("animation: set a key first (Key, or K)")
        self._bake_to(anim.last)
        frames = self._baked[: anim.last - anim.start + 1]
        times = np.arange(len(frames)) / anim.fps
        positions = np.array([r.positions for r in frames])
        return Take(self.scene.skeleton, times, positions, np.array([r.rotations for r in frames]))

    def baked_glb(self, mannequin: bool = False) -> bytes:
        """The baked animation as a binary glTF, every frame keyed (``Characters.animation_glb``; with
        ``mannequin``, the mannequin's body moving with the bones)."""
        return self.animation_glb(self.animation_take(), "animation", mannequin)

    def animation_json(self) -> str:
        """The baked animation as a take file (``fabrik3d.io.take``)."""
        return take_to_json(self.animation_take())

    def preview_of(self, frame: int) -> fabrik3d.SolveResult:
        """A pose for ``frame`` before it is baked: the curve through the poses the keys hold
        (``fabrik3d.model.key_poses``), or else the last frame baked (the rest pose if none)."""
        anim = self.animation
        held = pose_curve(self.scene.skeleton, anim.keys, [frame], anim.interpolation)[0]
        if held is not None:
            return fabrik3d.SolveResult(held.positions, held.rotations, 0, {}, False)
        return self._baked[-1] if self._baked else fabrik3d.solve(self.scene.skeleton, {})

    def refine_preview(self) -> bool:
        """Show the previewed frame (``previewing``) baked, if the bake has reached it; whether it did."""
        f = self.previewing
        if f is None or f - self.animation.start + 1 > self._baked_count():
            return False
        self.go_to_frame(f)
        return True

    @property
    def unbaked(self) -> bool:
        """Whether frames of the range are still to bake (the keys, or what they are solved with, changed)."""
        anim = self.animation
        return bool(anim.keys) and anim.start + self._baked_count() <= anim.last

    def bake_ahead(self, frames: int) -> bool:
        """Bake up to ``frames`` more frames of the range (after a key edit the web app bakes the range
        in the background, so that scrubbing finds every frame baked); whether frames remain."""
        anim = self.animation
        if not anim.keys:
            return False
        self._bake_to(min(anim.last, anim.start + len(self._baked) + frames - 1))
        return anim.start + len(self._baked) <= anim.last

    # -- internals ----------------------------------------------------------------------------
    def _set_animation(self, animation: Animation) -> None:
        self._push_undo()
        self.animation = animation
        self._keys_changed()

    def _baked_count(self) -> int:
        """How many frames from the range's start are baked with the current settings (the baked ones
        are forgotten when the skeleton, weights, tolerance or iterations changed)."""
        skeleton = self.scene.skeleton if self.limits else self._free
        settings = (skeleton, self.scene.weights, self.tolerance, self.max_iterations)
        if len(self._baked_with) != 4 or self._baked_with[0] is not skeleton or self._baked_with[1:] != settings[1:]:
            self._keys_changed()
            self._baked_with = settings
        return len(self._baked)

    def _bake_to(self, frame: int) -> fabrik3d.SolveResult:
        """The pose baked at ``frame``, baking the frames before it not yet baked."""
        have = self._baked_count()
        skeleton = self._baked_with[0]
        anim = self.animation
        want = frame - anim.start + 1
        if want > have:
            start = self._baked[-1].positions if self._baked else None
            bake(
                skeleton,
                anim,
                frames=(anim.start + have, frame),
                positions=start,
                weights=self.scene.weights,
                tolerance=self.tolerance,
                max_iterations=self.max_iterations,
                on_frame=lambda _, result: self._baked.append(result),
            )
        return self._baked[want - 1]


def _typed(value: Any, name: str) -> Any:
    """A number typed in a text field (a string), or the value as it came."""
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise ValueError(f"{name}: {value[:40]!r} is not a number") from None
    return value
