"""End to end, the mannequin in the web UI (issue 31): the humanoid opens on a wooden mannequin (its wood
where the body is, front and side), the mesh follows a hand's drag, the Mannequin switch shows the sticks,
and a proportion slider changes the body's height and keeps the pose's joint angles. The real
``fabrik3d serve`` and Debian's headless chromium."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import pixels
from helpers import web as wh

pytestmark = pytest.mark.browser
SHOTS = wh.ROOT / "tests" / "artifacts"


def _view(page, view: str) -> None:
    since = wh.now(page)
    page.locator(f"#btn-view-{view}").click()
    wh.settle(page, since)


def _between(page, a: str, b: str, f: float = 0.5) -> tuple[float, float]:
    pa, pb = pixels.joint_point(page, a), pixels.joint_point(page, b)
    return pa[0] + f * (pb[0] - pa[0]), pa[1] + f * (pb[1] - pa[1])


def test_the_humanoid_opens_on_a_wooden_mannequin_front_and_side(page) -> None:
    assert wh.get_state(page, "show_mannequin") is True and wh.get_state(page, "show_sticks") is False
    for view in ("front", "side"):
        _view(page, view)
        image = pixels.view_image(page, SHOTS / f"mannequin-{view}.png")
        box = wh.view_box(page)
        for a, b in (("spine_02", "chest"), ("hip_l", "knee_l"), ("knee_r", "ankle_r")):
            assert pixels.wood_near(image, _between(page, a, b), box), (view, a, b)
        assert pixels.wood_near(image, _between(page, "neck", "head", 0.8), box), view  # (the head)
        sky = image[int(0.1 * image.shape[0]), int(0.1 * image.shape[1])]
        assert not pixels.is_wood(sky)


def test_the_mannequin_follows_a_hand_drag(page) -> None:
    _view(page, "front")
    names = wh.get_state(page, "joint_names")
    wrist = np.array(wh.get_state(page, "pose"))[names.index("wrist_l")]  # (hanging: the relaxed stance)
    forearm = _between(page, "elbow_l", "wrist_l")
    start = wh.handle_point(page, "hand_l")
    wh.drag(page, start, (start[0] - 60.0, start[1] - 140.0), steps=15)
    wh.settle(page)
    image = pixels.view_image(page, SHOTS / "mannequin-drag.png")
    box = wh.view_box(page)
    moved = _between(page, "elbow_l", "wrist_l")
    assert np.hypot(moved[0] - forearm[0], moved[1] - forearm[1]) > 40.0  # (the forearm left its place)
    assert pixels.wood_near(image, moved, box)
    assert pixels.wood_near(image, _between(page, "shoulder_l", "elbow_l"), box)
    pose = np.array(wh.get_state(page, "pose"))
    assert pose[names.index("wrist_l"), 1] > wrist[1] + 0.25  # (raised: the drag moved it)


def test_the_mannequin_switch_shows_the_sticks(page) -> None:
    _view(page, "front")
    point = _between(page, "hip_l", "knee_l", 0.5)
    thigh_side = (point[0] + 0.6 * abs(point[0] - pixels.joint_point(page, "hip_r")[0]) / 2, point[1])
    assert pixels.wood_near(pixels.view_image(page), thigh_side, wh.view_box(page), radius=1)
    since = wh.now(page)
    wh.show_control(page, "#show-mannequin").click()
    wh.wait_until(page, "() => window.trame.state.get('show_mannequin') === false")
    wh.settle(page, since)
    sticks = pixels.view_image(page, SHOTS / "mannequin-off.png")
    assert not pixels.wood_near(sticks, thigh_side, wh.view_box(page), radius=1)
    since = wh.now(page)
    wh.show_control(page, "#show-mannequin").click()
    wh.wait_until(page, "() => window.trame.state.get('show_mannequin') === true")
    wh.settle(page, since)


def _bones(page) -> np.ndarray:
    names, pose = wh.get_state(page, "joint_names"), np.array(wh.get_state(page, "pose"))
    pairs = [("shoulder_l", "elbow_l"), ("elbow_l", "wrist_l"), ("hip_l", "knee_l"), ("knee_l", "ankle_l"),
             ("spine_01", "chest"), ("neck", "head")]  # fmt: skip
    vectors = np.array([pose[names.index(b)] - pose[names.index(a)] for a, b in pairs])
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_height_slider_changes_the_body_and_keeps_the_joint_angles(page) -> None:
    names = wh.get_state(page, "joint_names")
    directions = _bones(page)
    head = np.array(wh.get_state(page, "pose"))[names.index("head")]
    track = wh.show_control(page, "#proportion-height .v-slider-track").bounding_box()
    assert track is not None
    y = track["y"] + track["height"] / 2
    page.mouse.move(track["x"] + 0.5 * track["width"], y)
    page.mouse.down()
    for f in (0.55, 0.65, 0.75):  # (0.5 .. 2.5 m: 2.0 m at 75%)
        page.mouse.move(track["x"] + f * track["width"], y)
    page.mouse.up()
    wh.wait_until(page, "() => { const p = window.trame.state.get('proportions'); return p && p.height > 1.9; }", 30)
    taller = (
        "(h) => { const s = window.trame.state; return s.get('pose')[s.get('joint_names').indexOf('head')][1] > h; }"
    )
    wh.wait_until(page, taller, 30, float(head[1]) + 0.1)
    height = wh.get_state(page, "proportions")["height"]
    after = np.array(wh.get_state(page, "pose"))[names.index("head")]
    assert after[1] / head[1] == pytest.approx(height / 1.75, rel=0.03)
    np.testing.assert_allclose(_bones(page), directions, atol=2e-3)
    _view(page, "front")
    pixels.view_image(page, SHOTS / "mannequin-tall.png")
    assert wh.get_state(page, "can_undo") is True
