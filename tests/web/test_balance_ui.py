"""End to end, the centre of mass and balance in the web UI (issue 31): with both toes pinned and the pelvis
dragged far forward (balance off), the pose falls over: the centre of mass's marker and shadow turn red;
switching Balance on brings the centre of mass back over the feet, the marker no longer red. The Floor is
on for the humanoid. The real ``fabrik3d serve`` and Debian's headless chromium."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import pixels
from helpers import web as wh

pytestmark = pytest.mark.browser
SHOTS = wh.ROOT / "tests" / "artifacts"


def test_the_centre_of_mass_turns_red_when_the_pose_falls_over_and_back_with_balance(page) -> None:
    assert wh.get_state(page, "floor_on") is True and wh.get_state(page, "balance_on") is False
    assert wh.get_state(page, "com_inside") is True and wh.get_state(page, "show_com") is True
    since = wh.now(page)
    page.locator("#btn-view-side").click()
    wh.settle(page, since)
    assert pixels.red_pixels(pixels.view_image(page)) < 5
    for toe in ("toe_l", "toe_r"):
        wh.trigger(page, "pin_effector", [toe])
    # forward on the screen: from the ankle to the toe; a metre: the standing body's height / 1.75
    ankle, toe = np.array(pixels.joint_point(page, "ankle_l")), np.array(pixels.joint_point(page, "toe_l"))
    forward = np.array([toe[0] - ankle[0], 0.0])
    forward /= np.linalg.norm(forward)
    metre = abs(pixels.joint_point(page, "head")[1] - toe[1]) / 1.75
    start = wh.handle_point(page, "pelvis")
    end = np.array(start) + 0.4 * metre * forward
    wh.drag(page, start, (float(end[0]), float(end[1])), steps=20)
    wh.wait_until(page, "() => window.trame.state.get('com_inside') === false", 30)
    wh.settle(page)
    falling = pixels.view_image(page, SHOTS / "balance-falling.png")
    assert pixels.red_pixels(falling) > 40
    assert "Falling" in wh.show_control(page, "#balance-readout").inner_text()
    names, pose = wh.get_state(page, "joint_names"), np.array(wh.get_state(page, "pose"))
    targets = wh.get_state(page, "targets")
    for name in ("toe_l", "toe_r"):
        assert np.linalg.norm(pose[names.index(name)] - targets[name]) < 2e-3
    since = wh.now(page)
    wh.show_control(page, "#balance-on").click()
    wh.wait_until(page, "() => window.trame.state.get('balance_on') === true", 30)
    wh.wait_until(page, "() => window.trame.state.get('com_inside') === true", 30)
    wh.settle(page, since)
    balanced = pixels.view_image(page, SHOTS / "balance-on.png")
    assert pixels.red_pixels(balanced) < 5
    assert "Balanced" in wh.show_control(page, "#balance-readout").inner_text()
