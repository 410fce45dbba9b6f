"""Pictures for image generators from the panel (issue 54), in a real page on the real server: the Picture
tab's pass selector downloads each pass (OpenPose, depth, normal, outline) at the picture's size, and
All passes .zip downloads them all with the OpenPose JSON, named after the scene."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from helpers import web as wh
from PIL import Image

pytestmark = pytest.mark.browser

W, H = 256, 320


def set_state(page, key: str, value) -> None:
    page.evaluate("([k, v]) => window.trame.state.set(k, v)", [key, value])


def download(page, button: str) -> tuple[str, bytes]:
    locator = wh.show_control(page, button)
    with page.expect_download(timeout=120_000) as got:
        locator.click()
    return got.value.suggested_filename, open(got.value.path(), "rb").read()


@pytest.fixture(autouse=True)
def picture_size(page) -> None:
    set_state(page, "picture_width", W)
    set_state(page, "picture_height", H)
    wh.wait_until(page, "() => window.trame.state.get('picture_height') === 320")


@pytest.mark.parametrize("kind", ["openpose", "depth", "normal", "outline"])
def test_each_pass_downloads_at_the_picture_s_size(page, kind: str) -> None:
    set_state(page, "picture_pass", kind)
    wh.wait_until(page, "(k) => window.trame.state.get('picture_pass') === k", arg=kind)
    name, data = download(page, "#btn-export-picture")
    assert name.startswith(f"humanoid-{kind}-") and name.endswith(".png"), name
    image = np.asarray(Image.open(io.BytesIO(data)))
    assert image.shape[:2] == (H, W)
    if kind == "openpose":  # (the skeleton's coloured sticks on black)
        assert (image.reshape(-1, 3).max(axis=1) == 0).mean() > 0.8 and image.max() > 200
    elif kind == "depth":  # (the body bright in the middle, the corners 0)
        assert image[0, 0] == 0 and image[H // 2, W // 2] > 0
    elif kind == "normal":  # (a flat wall facing the camera around the body; the body other colours)
        assert tuple(image[0, 0][:3]) == (127, 127, 255)
        assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 50
    else:  # (white lines on black)
        assert 0 < (image > 127).mean() < 0.2
    assert wh.get_state(page, "error_message") == ""


def test_all_passes_download_as_one_zip_with_the_openpose_json(page) -> None:
    name, data = download(page, "#btn-export-passes")
    assert name.startswith("humanoid-passes-") and name.endswith(".zip"), name
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = sorted(archive.namelist())
        assert names == sorted(
            f"humanoid_{n}" for n in ("openpose.png", "openpose.json", "depth.png", "normal.png", "outline.png")
        )
        people = json.loads(archive.read("humanoid_openpose.json"))
    assert people["canvas_width"] == W and people["canvas_height"] == H
    assert len(people["people"]) == 1 and len(people["people"][0]["pose_keypoints_2d"]) == 18 * 3
