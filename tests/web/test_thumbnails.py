"""The starter poses' thumbnails (issue 51, item 6), rendered by the project itself with the Picture
renderer on the humanoid, and the copy scope's words (item 5), without a browser."""

from __future__ import annotations

import io

import numpy as np
from fabrik3d_web.document.controller import Controller
from fabrik3d_web.panels import poses_panel
from fabrik3d_web.view import thumbnails
from PIL import Image

import fabrik3d


def test_a_thumbnail_is_a_small_square_png_of_the_posed_mannequin() -> None:
    starters = fabrik3d.starter_poses()
    made = thumbnails.render_thumbnails({n: starters[n] for n in ("T", "sit", "hand fist")}, size=64)
    images = {n: Image.open(io.BytesIO(png)) for n, png in made.items()}
    for name, image in images.items():
        assert image.format == "PNG" and image.size == (64, 64), name
        grey = np.asarray(image.convert("L"), dtype=float)
        assert (grey < 200).mean() > 0.03, f"{name}: the body covers too little of the picture"
    t, sit = (np.asarray(images[n].convert("L"), dtype=float) for n in ("T", "sit"))
    assert np.abs(t - sit).mean() > 5.0  # (two poses, two pictures)


def test_the_rows_of_the_starter_poses_take_the_thumbnails_made() -> None:
    png = b"\x89PNG\r\n\x1a\nx"
    added = "T" not in thumbnails.cached()
    thumbnails.cached().setdefault("T", png)
    rows = [
        {"name": "T", "saved": True, "thumbnail": "", "key": "saved:T"},
        {"name": "T", "saved": False, "thumbnail": "", "key": "starter:T"},
        {"name": "nothing", "saved": False, "thumbnail": "", "key": "starter:nothing"},
    ]
    try:
        out = poses_panel.with_thumbnails(rows)
    finally:
        if added:
            thumbnails.cached().pop("T")
    assert out[0]["thumbnail"] == "" and out[2]["thumbnail"] == ""
    assert out[1]["thumbnail"].startswith("data:image/png;base64,")
    assert rows[1]["thumbnail"] == ""  # (new rows: the state's own are not changed in place)


def test_the_copy_scope_names_the_limb_or_the_whole_pose() -> None:
    c = Controller(None, "humanoid")
    assert c.copy_scope("hand_l") == "the left arm"
    assert c.copy_scope("toe_r") == "the right leg"
    assert c.copy_scope("head") == "the spine and head"
    assert c.copy_scope("") == c.copy_scope("pelvis") == c.copy_scope(None) == "the whole pose"
    c.copy_pose("hand_r")
    assert c.clipboard_what == "the right arm"
