"""Close-up pictures of one hand (matplotlib): its fingers drawn as thick bones in the hand's own frame
(``fabrik3d.model.fingers.hand_axes``), seen from three sides, with the palm's centre and the thumb's
contact marked; and the measures the hand-shape bars read (``hand_measures``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import fabrik3d
from fabrik3d.solver.hand_pose import palm_frame
from fabrik3d.solver.hands import finger_joints, fingertip, palm_center, thumb_contact

COLOURS = {"thumb": "tab:red", "index": "tab:blue", "middle": "tab:green", "ring": "tab:orange", "pinky": "tab:purple"}
# (name, horizontal axis, vertical axis) of each view: 0 along the palm, 1 across it (toward the
# index), 2 toward the palm side.
VIEWS = (("back of the hand", 0, 1), ("from the thumb's side", 0, 2), ("facing the knuckles", 1, 2))


def hand_measures(skeleton: fabrik3d.Skeleton, p: np.ndarray, q: np.ndarray, side: str, rig_map: Any = None) -> dict:
    """The bars' measures of a hand in the pose ``p``, ``q``, metres: ``tips`` (finger -> its tip to the
    palm's centre), ``thumb`` (the thumb's tip to its fist contact, ``thumb_contact``), ``midpoint``
    (the thumb's tip to the midpoint of the index's and middle's middle phalanges), ``outside``
    (how far the thumb's tip lies past the index's and middle's middle phalanges, away from the palm),
    ``apart`` (the least distance between two fingertips), ``pinch`` (thumb tip to index tip)."""
    fingers = finger_joints(skeleton, side, rig_map)
    centre = palm_center(skeleton, p, side, rig_map)
    tips = {f: fingertip(skeleton, p, q, j) for f, j in fingers.items()}
    out: dict[str, Any] = {"tips": {f: float(np.linalg.norm(t - centre)) for f, t in tips.items()}}
    names = list(tips)
    out["apart"] = min(float(np.linalg.norm(tips[a] - tips[b])) for k, a in enumerate(names) for b in names[k + 1 :])
    if {"thumb", "index"} <= set(fingers):
        out["pinch"] = float(np.linalg.norm(tips["thumb"] - tips["index"]))
    if {"thumb", "index", "middle"} <= set(fingers):
        contact, middle, outward = thumb_contact(skeleton, p, side, rig_map)
        out["thumb"] = float(np.linalg.norm(tips["thumb"] - contact))
        out["midpoint"] = float(np.linalg.norm(tips["thumb"] - middle))
        out["outside"] = float((tips["thumb"] - middle) @ outward)
    return out


def draw_hand(
    skeleton: fabrik3d.Skeleton, p: np.ndarray, q: np.ndarray, side: str, path: Path, title: str, rig_map: Any = None
) -> None:
    """Save a picture of the hand of ``side`` in the pose ``p``, ``q`` to ``path`` (PNG), three views."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fingers = finger_joints(skeleton, side, rig_map)
    wrist, *axes = palm_frame(skeleton, p, side, rig_map)
    frame = np.array(axes)
    origin = p[wrist]

    def local(x: np.ndarray) -> np.ndarray:
        return (np.asarray(x) - origin) @ frame.T * 100.0  # (cm)

    chains = {
        f: [p[wrist], *(p[j] for j in joints), fingertip(skeleton, p, q, joints)] for f, joints in fingers.items()
    }
    marks = {"palm centre": palm_center(skeleton, p, side, rig_map)}
    if {"thumb", "index", "middle"} <= set(fingers):
        marks["thumb contact"] = thumb_contact(skeleton, p, side, rig_map)[0]
    measures = hand_measures(skeleton, p, q, side, rig_map)
    fig, panels = plt.subplots(1, 3, figsize=(15, 5.4))
    for ax, (name, h, v) in zip(panels, VIEWS):
        for f, chain in chains.items():
            xy = np.array([local(x) for x in chain])
            ax.plot(xy[:, h], xy[:, v], "-", color=COLOURS[f], lw=7, alpha=0.55, solid_capstyle="round", label=f)
            ax.plot(xy[:, h], xy[:, v], "o", color="k", ms=3)
        for (label, point), marker in zip(marks.items(), ("kx", "r*")):
            x = local(point)
            ax.plot(x[h], x[v], marker, ms=12, mew=2, label=label)
        ax.set_aspect("equal")
        ax.grid(alpha=0.3)
        ax.set_title(name)
        ax.set_xlabel(("along the palm", "across (to the index)", "toward the palm side")[h] + " (cm)")
        ax.set_ylabel(("along the palm", "across (to the index)", "toward the palm side")[v] + " (cm)")
    panels[0].legend(loc="best", fontsize=7)
    words = ", ".join(f"{f} {d * 100:.1f}" for f, d in measures["tips"].items())
    extra = "".join(
        f"; {k} {measures[k] * 100:.1f}" for k in ("thumb", "midpoint", "outside", "pinch", "apart") if k in measures
    )
    fig.suptitle(f"{title}\ntips to palm centre (cm): {words}{extra}", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
