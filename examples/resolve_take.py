"""Re-solve a recorded take offline: every frame's effector targets solved again in one batch.

1. *Record*: the humanoid (without joint limits) follows hands moving on circles
   and a swaying head, one ``fabrik3d.solve`` per frame at 30 fps, each warm-started
   from the last, as an interactive session would; the poses become a
   ``fabrik3d.take.Take``, saved as JSON.
2. *Re-solve offline*: the take is loaded, each frame's head, hand and toe
   positions become that frame's targets, and ``fabrik3d.solve_batch`` solves all
   frames at once (B = frames), each starting from its recorded pose, with the
   pelvis, head and hands lowered by ``--crouch`` metres (``root_target``, one per
   frame) and the toes kept where they were: the same motion, crouching. The result is written
   as a new take (JSON) and as an animated glTF (``.glb``).

Run: ``python examples/resolve_take.py [--frames 90] [--crouch 0.1] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import fabrik3d
from fabrik3d.io import gltf
from fabrik3d.io.take import Take, load_take, save_take
from fabrik3d.model import presets

FPS = 30.0


def plain_humanoid() -> fabrik3d.Skeleton:
    s = presets.get("humanoid")
    return fabrik3d.Skeleton(s.names, s.parents, s.rest_positions)


def record(s: fabrik3d.Skeleton, frames: int) -> Take:
    """A take: hands on circles (radius 15 cm), the head swaying, one warm-started solve per frame."""
    rest = {e: s.rest_positions[s.index(e)] for e in ("head", "hand_l", "hand_r")}
    poses, pose = [], None
    for k in range(frames):
        a = 2 * math.pi * k / frames
        targets = {
            "head": rest["head"] + [0.04 * math.sin(a), 0.0, 0.02 * math.sin(2 * a)],
            "hand_l": rest["hand_l"] + [0.0, 0.15 * math.sin(a), 0.15 * math.cos(a) - 0.15],
            "hand_r": rest["hand_r"] + [0.0, -0.15 * math.sin(a), 0.15 * math.cos(a) - 0.15],
        }
        result = fabrik3d.solve(s, targets, positions=pose)
        poses.append(result)
        pose = result.positions
    return Take.from_frames(s, poses, np.arange(frames) / FPS)


def resolve(take: Take, crouch: float) -> fabrik3d.BatchResult:
    """Every frame of ``take`` again, in one batch: its effectors' recorded positions as targets, the root lowered."""
    s = take.skeleton
    down = np.array([0.0, crouch, 0.0])
    # The upper body goes down with the pelvis; the toes stay where they were, so the legs bend.
    targets = {e: take.positions[:, s.index(e)] - (0.0 if e.startswith("toe") else down) for e in s.end_effectors}
    root = take.positions[:, s.root] - down
    return fabrik3d.solve_batch(s, targets, positions=take.positions, root_target=root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=90, help="frames to record (30 fps)")
    parser.add_argument("--crouch", type=float, default=0.1, help="metres to lower the pelvis by")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: a new temporary one)")
    args = parser.parse_args(argv)
    if args.frames < 1:
        parser.error("--frames must be at least 1")
    out = args.out or Path(tempfile.mkdtemp(prefix="fabrik3d_take_"))
    out.mkdir(parents=True, exist_ok=True)
    s = plain_humanoid()
    t0 = time.perf_counter()
    recorded = record(s, args.frames)
    t_record = time.perf_counter() - t0
    save_take(recorded, out / "recorded.take.json")
    take = load_take(out / "recorded.take.json")  # offline: from the file
    t0 = time.perf_counter()
    result = resolve(take, args.crouch)
    t_batch = time.perf_counter() - t0
    resolved = Take.from_frames(s, zip(result.positions, result.rotations), take.times)
    save_take(resolved, out / "resolved.take.json")
    gltf.export_animation(s, zip(result.positions, result.rotations), take.times, out / "resolved.glb")
    errors = np.max(np.array(list(result.errors.values())), axis=0)
    pelvis_drop = take.positions[:, s.root, 1] - result.positions[:, s.root, 1]
    print(f"recorded {args.frames} frames with solve, one by one: {t_record:.2f} s")
    print(f"re-solved them with solve_batch (B = {args.frames}): {t_batch:.2f} s")
    print(
        f"pelvis lowered by {pelvis_drop.mean():.3f} m; frames converged: {int(result.converged.sum())}/{args.frames}; "
        f"largest effector error {1e3 * errors.max():.1f} mm (median {1e3 * np.median(errors):.1f} mm)"
    )
    for name in ("recorded.take.json", "resolved.take.json", "resolved.glb"):
        print(f"wrote {out / name} ({(out / name).stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
