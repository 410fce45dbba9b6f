"""Baking animations of the humanoid (joint limits, natural posing): ``fabrik3d.animation.bake``.

Workloads, 300 frames at 30 fps, keys every 30 frames (smooth curves):

* ``one hand``: the left hand from rest to the chest, the face, overhead, across the body and
  back, over and over.
* ``two hands, feet pinned``: both hands on their own paths, the toes pinned where they stand.
* ``hands and a crouch``: the same with the pelvis keyed down 20 cm and up again (a root target).

Each is baked ``warm`` (frame by frame, each from the frame before: what the web UI's timeline and
``fabrik3d bake`` do), ``batch`` (``solve_batch`` over all frames from the rest pose) and, as the
baseline run in the same process, ``cold`` (every frame solved alone from the rest pose). The
table shows the whole bake in ms (the fastest of ``--repeats`` bakes, 3 by default as in every
benchmark here: this machine's CPU speed swings by up to 1.7x within a minute, and one bake
measures that as much as the code), the ratio against the cold baseline, and the per-frame times
of that warm bake (a held key is not solved again). Aim: a 300-frame bake <= 1 s (issue 17). The web UI
bakes the range in the background after each key edit, so a scrub shows a baked frame; its latency
in a browser is measured by bench_web.py.
"""

from __future__ import annotations

import sys
import time

import common
import numpy as np

from fabrik3d.animation import Animation, Key, bake, solve_goals
from fabrik3d.model import presets

FRAMES = 300
HEADERS = ("workload", "method", "bake ms", "vs cold", "frame p50 ms", "frame p95 ms", "frame max ms", "reached")


def _workloads(quick: bool) -> dict[str, Animation]:
    body = presets.get("humanoid")
    rest = body.rest_positions
    at = {name: rest[body.index(name)] for name in body.end_effectors}
    left = [at["hand_l"], [0.25, 1.25, 0.35], [0.12, 1.6, 0.3], [0.3, 1.75, 0.15], [-0.1, 1.3, 0.35]]
    right = [at["hand_r"], [-0.3, 1.1, 0.3], [-0.45, 1.0, 0.1], [-0.2, 1.45, 0.3], [-0.5, 1.3, 0.2]]
    feet = {"toe_l": at["toe_l"], "toe_r": at["toe_r"]}
    last = 30 if quick else FRAMES - 1
    frames = list(range(0, last + 1, 30))
    one = [Key(f, {"hand_l": left[i % len(left)]}) for i, f in enumerate(frames)]
    two = [Key(f, {"hand_l": left[i % 5], "hand_r": right[i % 5], **feet}) for i, f in enumerate(frames)]
    crouch = [
        Key(f, {"hand_l": left[i % 5], "hand_r": right[i % 5], **feet}, root_target=at_root(rest, body, i))
        for i, f in enumerate(frames)
    ]
    return {
        "one hand": Animation(tuple(one), end=last),
        "two hands, feet pinned": Animation(tuple(two), end=last),
        "hands and a crouch": Animation(tuple(crouch), end=last),
    }


def at_root(rest: np.ndarray, body: object, i: int) -> np.ndarray:
    """The pelvis keyed down 20 cm on odd keys."""
    return rest[0] - np.array([0.0, 0.2 if i % 2 else 0.0, 0.0])


def _cold(body: object, anim: Animation) -> tuple[list, float]:
    t0 = time.perf_counter()
    out = [solve_goals(body, g) for g in anim.goals(np.array(list(anim.frames)))]  # type: ignore[arg-type]
    return out, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    args = common.parse_args(__doc__, argv)
    common.print_header(f"fabrik3d animation benchmark: baking {FRAMES} frames of the humanoid", args)
    body = presets.get("humanoid")
    checks = common.Checks()
    rows, aims = [], []
    lengths = np.linalg.norm(body.rest_positions[1:] - body.rest_positions[body.parents[1:]], axis=1)
    for label, anim in _workloads(args.quick).items():
        goals = anim.goals(np.array(list(anim.frames)))
        _, cold_s = _cold(body, anim)
        for method in ("warm", "batch"):
            best, per_frame, take = None, [], None
            for _ in range(args.repeats):
                stamps: list[float] = [time.perf_counter()]
                t0 = time.perf_counter()
                take = bake(body, anim, method=method, on_frame=lambda f, r, s=stamps: s.append(time.perf_counter()))
                dt = time.perf_counter() - t0
                if best is None or dt < best:
                    best, per_frame = dt, np.diff(stamps) * 1e3
            assert take is not None and best is not None
            errors = np.array(
                [
                    max(np.linalg.norm(p[body.index(n)] - t.position) for n, t in g.targets.items())
                    for p, g in zip(take.positions, goals)
                ]
            )
            reached = common.percent(int(np.sum(errors <= 1e-3)), len(errors))
            stats = [f"{np.percentile(per_frame, q):.2f}" for q in (50, 95)] if len(per_frame) else ["-", "-"]
            peak = f"{per_frame.max():.2f}" if len(per_frame) else "-"
            rows.append((label, method, best * 1e3, common.ratio(best, cold_s), *stats, peak, reached))
            bones = np.linalg.norm(take.positions[:, 1:] - take.positions[:, body.parents[1:]], axis=2)
            ok = bool(np.all(np.isfinite(take.positions)) and np.allclose(bones, lengths, atol=1e-9))
            checks.line(f"{label}, {method}: finite poses, bone lengths kept", ok, f"{len(take.times)} frames")
            if method == "warm":
                aims.append(common.aim_line(f"{label}: bake of {len(take.times)} frames", best, 1.0, " s"))
        rows.append((label, "cold", cold_s * 1e3, "1.00x", "-", "-", "-", "-"))
    print(common.format_table(HEADERS, rows))
    print()
    for line in aims:
        print(line)
    print(checks.line("every workload baked", len(rows) == 9, f"{len(rows)} rows"))
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
