"""Recording a take in the web UI: every pose the controller solves while recording is kept with
its time, for playback and export (``fabrik3d.io.take``, ``fabrik3d.io.gltf``)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from fabrik3d.io.take import Take, take_to_json

# Longest take, in frames (about 10 minutes at 30 frames per second).
MAX_TAKE_FRAMES = 18_000


class Recording:
    """The take part of ``fabrik3d_web.document.controller.Controller`` (a mixin: it reads the controller's
    ``result`` and ``scene``). Times in seconds from the start of the take; poses ``(n, 3)`` and
    frames ``(n, 4)`` per recorded frame."""

    result: Any
    scene: Any
    animation_glb: Any  # (the Characters part's)

    def _clear_take(self) -> None:
        self.take_times: list[float] = []
        self.take_positions: list[np.ndarray] = []
        self.take_rotations: list[np.ndarray] = []
        self.recording = False
        self._record_t0 = 0.0

    def start_recording(self) -> None:
        """Start a new take: every pose from now on is kept with its time."""
        self.take_times, self.take_positions, self.take_rotations = [], [], []
        self.recording = True
        self._record_t0 = time.perf_counter()
        self._record_frame()

    def stop_recording(self) -> None:
        """Stop recording (the take is kept for playback and export)."""
        self.recording = False

    @property
    def take_duration(self) -> float:
        """Length of the take in seconds (0 without one)."""
        return self.take_times[-1] if self.take_times else 0.0

    def take_frame(self, t: float) -> int:
        """Index of the take's frame shown at ``t`` seconds (the last one at or before ``t``)."""
        if not self.take_times:
            raise ValueError("take: nothing recorded yet")
        return max(0, int(np.searchsorted(self.take_times, t, side="right")) - 1)

    def _record_frame(self) -> None:
        if not self.recording:
            return
        if len(self.take_times) >= MAX_TAKE_FRAMES:
            self.recording = False  # the panel shows the take's length; nothing is lost
            return
        t = time.perf_counter() - self._record_t0
        if self.take_times and t <= self.take_times[-1]:
            t = self.take_times[-1] + 1e-4  # keys must increase strictly
        self.take_times.append(t)
        self.take_positions.append(self.result.positions.copy())
        self.take_rotations.append(self.result.rotations.copy())

    # -- exports of the take -----------------------------------------------------------------
    def take(self) -> Take:
        """The recorded take as a ``fabrik3d.take.Take`` (``ValueError`` with fewer than two frames)."""
        if len(self.take_times) < 2:
            raise ValueError("take: record at least two frames first (Record, then drag a handle)")
        frames = list(zip(self.take_positions, self.take_rotations))
        return Take.from_frames(self.scene.skeleton, frames, self.take_times)

    def take_glb(self, mannequin: bool = False) -> bytes:
        """The take as an animated binary glTF (a character's own file with it: ``Characters.animation_glb``;
        with ``mannequin``, the mannequin's body moving with the bones, as ``Anim .glb``)."""
        return self.animation_glb(self.take(), "take", mannequin)

    def take_json(self) -> str:
        """The take as the JSON file the CLI reads (``fabrik3d.take.take_to_json``)."""
        return take_to_json(self.take())
