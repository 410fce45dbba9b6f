"""Pixels of the 3D view in the browser tests: its screenshot as an array, the mannequin's wood, red."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from helpers import web as wh


def view_image(page: Any, path: Path | None = None) -> np.ndarray:
    """``(h, w, 3)`` uint8 screenshot of the 3D view (CSS pixels at the page's scale), also saved at ``path``."""
    from PIL import Image

    data = page.locator("#view3d").screenshot(path=path)
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def is_wood(rgb: Any) -> bool:
    """Whether a colour is the mannequin's light brown wood (lit or in shade), not the grey sticks or the sky."""
    r, g, b = (int(v) for v in rgb)
    return r > g > b and r - b > 50 and r > 90


def wood_near(image: np.ndarray, xy: tuple[float, float], box: dict[str, float], radius: int = 3) -> bool:
    """Whether the view's pixel at page point ``xy`` (the view's ``box``), or one within ``radius``, is wood."""
    x, y = round(xy[0] - box["x"]), round(xy[1] - box["y"])
    patch = image[max(y - radius, 0) : y + radius + 1, max(x - radius, 0) : x + radius + 1].reshape(-1, 3)
    return any(is_wood(p) for p in patch)


def red_pixels(image: np.ndarray) -> int:
    """How many pixels are the falling centre of mass's red (``fabrik3d_web.view.body_view.FALLING``), outside the
    axes' corner (bottom left, whose X axis is red)."""
    h, w, _ = image.shape
    rgb = image.astype(int)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    red = (r > 150) & (g < 90) & (b < 90) & (np.abs(g - b) < 30)  # (not the orange of a target's edge)
    red[int(0.7 * h) :, : int(0.2 * w)] = False
    return int(red.sum())


def joint_point(page: Any, name: str) -> tuple[float, float]:
    """Page coordinates (CSS pixels) of joint ``name`` (the trigger ``joint_screen_position``)."""
    box = wh.view_box(page)
    x, y = wh.trigger(page, "joint_screen_position", [name])
    return box["x"] + x, box["y"] + y
