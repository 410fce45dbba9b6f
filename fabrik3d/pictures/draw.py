"""The OpenPose picture, drawn on numpy as controlnet_aux's ``draw_poses`` draws it (the picture ControlNet's
OpenPose models were trained on; controlnet_aux ``open_pose/util.py``, ``draw_bodypose``,
``draw_handpose``), RGB on black, without anti-aliasing (OpenCV's default 8-connected drawing).

**Body** (COCO-18): each of OpenPose's 17 limbs (``LIMBS``) a filled ellipse from keypoint to keypoint,
half as long as the limb and ``STICK`` pixels wide each side of it (the ellipse's axes rounded down, its
angle to whole degrees, as ``cv2.ellipse2Poly`` is called), in 0.6 of its colour (``BODY_COLORS[i]`` for
limb ``i``); then each keypoint a filled circle of radius ``DOT`` in its full colour. The stick's width
is scaled to the canvas as comfyui_controlnet_aux's ``xinsr_stick_scaling`` does (for the SDXL OpenPose
models): times 1 below 500 pixels on the longer side, else ``min(2 + side // 1000, 7)``; below 500 pixels
the picture is controlnet_aux's. A BODY_25 person is drawn as its COCO-18 keypoints plus its feet: the
limbs ankle to big toe, big toe to small toe and ankle to heel, and their keypoints, in OpenPose's own
BODY_25 colours (``poseParametersRender.hpp``: a limb takes its second keypoint's colour; blue for the
left foot, cyan for the right); the mid-hip is not drawn (ControlNet's pictures have none).

**Hands**: the 20 bones (``HAND_EDGES``) as lines 2 pixels thick, bone ``i`` in the HSV colour of hue
``i / 20`` at full saturation and value (rounded to whole levels); then each keypoint a filled circle of
radius ``DOT`` in ``HAND_DOT``, (0, 0, 255): blue in the RGB picture (controlnet_aux's canvas is RGB).
People are drawn in order, each body then its left and right hands; a keypoint of confidence 0 and the
limbs that end at it are not drawn. Keypoints are drawn at their pixel (``int`` of x and y).
"""

from __future__ import annotations

import colorsys
import math
from typing import Any

import numpy as np

from fabrik3d.pictures.camera import check_size
from fabrik3d.pictures.json_format import check_people

BODY_COLORS: tuple[tuple[int, int, int], ...] = (
    (255, 0, 0), (255, 85, 0), (255, 170, 0), (255, 255, 0), (170, 255, 0), (85, 255, 0), (0, 255, 0),
    (0, 255, 85), (0, 255, 170), (0, 255, 255), (0, 170, 255), (0, 85, 255), (0, 0, 255), (85, 0, 255),
    (170, 0, 255), (255, 0, 255), (255, 0, 170), (255, 0, 85),
)  # fmt: skip
# OpenPose's limbs in COCO-18 indices (neck to right shoulder, ..., left eye to left ear).
LIMBS: tuple[tuple[int, int], ...] = (
    (1, 2), (1, 5), (2, 3), (3, 4), (5, 6), (6, 7), (1, 8), (8, 9), (9, 10), (1, 11), (11, 12), (12, 13),
    (1, 0), (0, 14), (14, 16), (0, 15), (15, 17),
)  # fmt: skip
LIMB_SHADE = 0.6
STICK, DOT = 4, 4
# BODY_25: the COCO-18 keypoints' indices, and the feet's limbs with OpenPose's colours.
BODY_25_TO_18 = (0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18)
FEET: tuple[tuple[int, int, tuple[int, int, int]], ...] = (
    (14, 19, (0, 0, 255)), (19, 20, (0, 0, 255)), (14, 21, (0, 0, 255)),
    (11, 22, (0, 255, 255)), (22, 23, (0, 255, 255)), (11, 24, (0, 255, 255)),
)  # fmt: skip
HAND_EDGES: tuple[tuple[int, int], ...] = tuple(
    (0 if k == 0 else 4 * f + k, 4 * f + k + 1) for f in range(5) for k in range(4)
)
HAND_DOT = (0, 0, 255)
HAND_LINE = 2


def limb_color(i: int) -> tuple[int, int, int]:
    """The colour of body limb ``i`` (``LIMBS``) in the picture: ``LIMB_SHADE`` of ``BODY_COLORS[i]``."""
    return tuple(int(float(c) * LIMB_SHADE) for c in BODY_COLORS[i])  # type: ignore[return-value]


def hand_color(i: int) -> tuple[int, int, int]:
    """The colour of hand bone ``i`` (``HAND_EDGES``): hue ``i / 20``, rounded to whole levels."""
    rgb = np.array(colorsys.hsv_to_rgb(i / len(HAND_EDGES), 1.0, 1.0)) * 255.0
    return tuple(int(v) for v in np.rint(rgb))  # type: ignore[return-value]


def stick_width(width: int, height: int) -> int:
    """The body's stick half-width in pixels on a ``width`` x ``height`` canvas (module docstring)."""
    side = max(width, height)
    return STICK * (1 if side < 500 else min(2 + side // 1000, 7))


def draw_openpose(people: Any, width: Any, height: Any, *, hands: bool = True) -> np.ndarray:
    """``(height, width, 3)`` uint8 RGB: OpenPose's picture of ``people`` (``openpose_keypoints`` dicts) on
    black (module docstring); ``hands=False`` leaves the hands out. ``ValueError`` naming the argument for
    bad people or sizes (16..4096)."""
    checked = check_people(people)
    w, h = check_size(width, "width"), check_size(height, "height")
    if not isinstance(hands, (bool, np.bool_)):
        raise ValueError(f"hands: expected True or False, got {hands!r:.60}")
    canvas = np.zeros((h, w, 3), dtype=np.uint8)
    stick = stick_width(w, h)
    for person in checked:
        pose = person["pose"]
        body = pose[list(BODY_25_TO_18)] if len(pose) == 25 else pose
        limbs = [(a, b, limb_color(i)) for i, (a, b) in enumerate(LIMBS)]
        dots = [(k, BODY_COLORS[k]) for k in range(18)]
        points = [body]
        if len(pose) == 25:
            points.append(pose)
            limbs += [(a + 18, b + 18, tuple(int(float(c) * LIMB_SHADE) for c in color)) for a, b, color in FEET]
            dots += [(b + 18, color) for _, b, color in FEET]
        table = np.concatenate(points)
        for a, b, color in limbs:
            if table[a, 2] > 0 and table[b, 2] > 0:
                _fill_limb(canvas, table[a, :2], table[b, :2], stick, color)
        for k, color in dots:
            if table[k, 2] > 0:
                _fill_circle(canvas, int(table[k, 0]), int(table[k, 1]), DOT, color)
        if hands:
            for key in ("hand_left", "hand_right"):
                if len(person[key]) == 21:
                    _draw_hand(canvas, person[key])
    return canvas


def _draw_hand(canvas: np.ndarray, hand: np.ndarray) -> None:
    xy = [(int(x), int(y)) for x, y in hand[:, :2]]
    on = [c > 0 and x > 0 and y > 0 for (x, y), c in zip(xy, hand[:, 2])]
    for i, (a, b) in enumerate(HAND_EDGES):
        if on[a] and on[b]:
            _fill_line(canvas, xy[a], xy[b], HAND_LINE / 2.0, hand_color(i))
    for (x, y), ok in zip(xy, on):
        if ok:
            _fill_circle(canvas, x, y, DOT, HAND_DOT)


def _box(canvas: np.ndarray, x0: float, x1: float, y0: float, y1: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Pixel coordinates ``(xs, ys)`` (grids) of the canvas within the box, or None when it is off."""
    h, w = canvas.shape[:2]
    i0, i1 = max(0, math.floor(x0)), min(w - 1, math.ceil(x1))
    j0, j1 = max(0, math.floor(y0)), min(h - 1, math.ceil(y1))
    if i0 > i1 or j0 > j1:
        return None
    ys, xs = np.mgrid[j0 : j1 + 1, i0 : i1 + 1]
    return xs, ys


def _paint(canvas: np.ndarray, xs: np.ndarray, ys: np.ndarray, inside: np.ndarray, color: Any) -> None:
    canvas[ys[inside], xs[inside]] = np.asarray(color, dtype=np.uint8)


def _fill_circle(canvas: np.ndarray, cx: int, cy: int, radius: int, color: Any) -> None:
    grid = _box(canvas, cx - radius, cx + radius, cy - radius, cy + radius)
    if grid is not None:
        xs, ys = grid
        _paint(canvas, xs, ys, (xs - cx) ** 2 + (ys - cy) ** 2 <= (radius + 0.5) ** 2, color)


def _fill_limb(canvas: np.ndarray, a: np.ndarray, b: np.ndarray, stick: int, color: Any) -> None:
    """A filled ellipse from ``a`` to ``b``, as controlnet_aux calls ``cv2.ellipse2Poly`` for a limb."""
    mx, my = int((a[0] + b[0]) / 2.0), int((a[1] + b[1]) / 2.0)
    length = float(math.hypot(a[0] - b[0], a[1] - b[1]))
    angle = math.radians(int(math.degrees(math.atan2(a[1] - b[1], a[0] - b[0]))))
    half = int(length / 2.0) + 0.5
    across = stick + 0.5
    reach = max(half, across)
    grid = _box(canvas, mx - reach, mx + reach, my - reach, my + reach)
    if grid is None:
        return
    xs, ys = grid
    dx, dy = xs - mx, ys - my
    u = dx * math.cos(angle) + dy * math.sin(angle)
    v = -dx * math.sin(angle) + dy * math.cos(angle)
    _paint(canvas, xs, ys, (u / half) ** 2 + (v / across) ** 2 <= 1.0, color)


def _fill_line(canvas: np.ndarray, a: tuple[int, int], b: tuple[int, int], radius: float, color: Any) -> None:
    """The pixels within ``radius`` of the segment ``a``-``b`` (a thick line with round ends)."""
    grid = _box(canvas, min(a[0], b[0]) - radius, max(a[0], b[0]) + radius,
                min(a[1], b[1]) - radius, max(a[1], b[1]) + radius)  # fmt: skip
    if grid is None:
        return
    xs, ys = grid
    ab = np.array(b, dtype=float) - np.array(a, dtype=float)
    denom = float(ab @ ab)
    t = np.clip(((xs - a[0]) * ab[0] + (ys - a[1]) * ab[1]) / denom, 0.0, 1.0) if denom > 0 else np.zeros(xs.shape)
    px, py = a[0] + t * ab[0] - xs, a[1] + t * ab[1] - ys
    _paint(canvas, xs, ys, px * px + py * py <= radius * radius + 0.25, color)
