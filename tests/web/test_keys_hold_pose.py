"""End to end, keys hold the pose the user saw (issue 29, item 5): a pose with an FK-turned spine and a
turned hand keyed at frame 0, another keyed at frame 30, and going back to 0 shows the keyed pose (and at
30 the other). Driven as a user does: joints turned with the typed angle fields, the hand moved with its
coordinate fields, keys set with the Key button and K, frames changed by the timeline's frame (as the
slider sets it) and by clicking the key markers. The real ``fabrik3d serve`` and Debian's headless
chromium."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import web as wh

from fabrik3d.model import presets

pytestmark = pytest.mark.browser
BODY = presets.get("humanoid")
REACH_0 = [0.3, 1.15, 0.3]  # the left hand in front of the chest (frame 0)
REACH_30 = [0.45, 1.0, 0.25]  # lower and to the side (frame 30)
POSE_ATOL = 1e-6  # the state's pose is rounded to 1e-6 (the bar: 1 mm)


def pose(page) -> np.ndarray:
    return np.array(wh.get_state(page, "pose"))


def round_trip(page) -> None:
    """A trigger answered after the server handled what the page sent before it."""
    wh.trigger(page, "joint_screen_position", ["pelvis"])


def choose(page, joint: str) -> None:
    """Choose the joint to turn (the Joint field's model, as test_turning does)."""
    page.evaluate("(j) => window.trame.state.set('selected_joint', j)", joint)
    round_trip(page)
    wh.wait_until(page, f"() => window.trame.state.get('selected_joint') === '{joint}'")


def wait_angles(page, joint: str, expected, atol: float = 1e-3) -> list[float]:
    """Wait until the panel shows ``expected`` as ``joint``'s angles; fail naming what it shows."""
    try:
        wh.wait_until(
            page,
            """([j, want, tol]) => window.trame.state.get('selected_joint') === j &&
                 window.trame.state.get('joint_angles').every((a, k) => Math.abs(a - want[k]) <= tol)""",
            timeout=10,
            arg=[joint, [float(a) for a in expected], atol],
        )
    except Exception as error:  # (playwright's TimeoutError)
        got = wh.get_state(page, "joint_angles")
        raise AssertionError(f"{joint}: the panel shows the angles {got}, expected {list(expected)}") from error
    return wh.get_state(page, "joint_angles")


def angles_of(page, joint: str) -> list[float]:
    choose(page, joint)
    return wh.get_state(page, "joint_angles")


def type_field(page, selector: str, value: float) -> None:
    field = wh.show_control(page, selector)
    field.fill(str(value))
    field.press("Enter")
    field.blur()


def turn(page, joint: str, axis: int, degrees: float, before) -> list[float]:
    """Choose ``joint`` (whose angles are ``before``), type ``degrees`` as its ``axis`` angle; the angles
    it took."""
    choose(page, joint)
    wait_angles(page, joint, before)  # (the fields show this joint's angles: the typed one replaces one)
    type_field(page, f"#turn-angle-{'xyz'[axis]}", degrees)
    want = list(before)
    want[axis] = degrees
    return wait_angles(page, joint, want)


def move_hand(page, point) -> None:
    """Type the left hand's target into its coordinate fields, one axis at a time."""
    for axis, value in enumerate(point):
        type_field(page, f"#coord-hand_l-{'xyz'[axis]}", value)
        wh.wait_until(
            page,
            "([k, v]) => Math.abs((window.trame.state.get('targets').hand_l ?? [NaN, NaN, NaN])[k] - v) < 1e-9",
            arg=[axis, value],
        )
    hand = pose(page)[BODY.index("hand_l")]
    assert np.linalg.norm(hand - np.array(point)) <= 1e-3 + 1e-6  # the hand got there


def go_to(page, frame: int) -> None:
    """The timeline's frame set from the page, as the slider sets it."""
    page.evaluate("(f) => window.trame.state.set('frame', f)", frame)
    round_trip(page)
    wh.wait_until(
        page, f"() => window.trame.state.get('frame_shown') === {frame} && !window.trame.state.get('frame_preview')"
    )


def click_key(page, frame: int) -> None:
    """A click on the key marker of ``frame`` over the ruler: the timeline goes to that frame."""
    page.locator(f"#key-{frame}").click()
    round_trip(page)
    wh.wait_until(
        page, f"() => window.trame.state.get('frame') === {frame} && window.trame.state.get('key_here') === true"
    )


def wait_pose(page, expected: np.ndarray, where: str) -> None:
    """Wait until the state's pose is ``expected`` within POSE_ATOL; fail with how far it is."""
    try:
        wh.wait_until(
            page,
            """([want, tol]) => window.trame.state.get('pose').every(
                 (p, j) => p.every((v, k) => Math.abs(v - want[j][k]) <= tol))""",
            timeout=10,
            arg=[expected.tolist(), POSE_ATOL],
        )
    except Exception as error:  # (playwright's TimeoutError)
        off = np.abs(pose(page) - expected).max(axis=1)
        worst = int(off.argmax())
        raise AssertionError(f"{where}: {BODY.names[worst]} is {off[worst]:.3g} off the keyed pose") from error
    np.testing.assert_allclose(pose(page), expected, rtol=0, atol=POSE_ATOL, err_msg=where)


def test_going_back_to_a_key_shows_the_pose_keyed_there_turns_included(page) -> None:
    assert wh.get_state(page, "key_frames") == [] and wh.get_state(page, "frame") == 0
    rest = pose(page)
    # frame 0: the spine twisted (FK), the hand moved in front, the wrist bent and the hand turned
    spine = turn(page, "spine_02", 1, 20.0, [0, 0, 0])
    move_hand(page, REACH_0)
    spine_after = wait_angles(page, "spine_02", spine, atol=0.5)  # (still shown: the drag kept the twist)
    wrist_before = angles_of(page, "wrist_l")
    wrist = turn(page, "wrist_l", 0, 30.0, wrist_before)
    hand = turn(page, "hand_l", 2, 20.0, [0, 0, 0])
    page.locator("#btn-key").click()
    wh.wait_until(page, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0]'")
    round_trip(page)
    keyed_0 = pose(page)
    assert np.linalg.norm(keyed_0 - rest, axis=1).max() > 0.1

    # frame 30: the hand elsewhere, the neck twisted; keyed with K
    go_to(page, 30)
    move_hand(page, REACH_30)
    neck = turn(page, "neck", 1, -30.0, angles_of(page, "neck"))
    page.locator("#view3d").click(position={"x": 20, "y": 300})  # (the view has the focus, not a field)
    page.keyboard.press("k")
    wh.wait_until(page, "() => JSON.stringify(window.trame.state.get('key_frames')) === '[0,30]'")
    round_trip(page)
    keyed_30 = pose(page)
    assert np.linalg.norm(keyed_30 - keyed_0, axis=1).max() > 0.1

    # frame 15, between the keys: the neck's twist between the keyed ones
    go_to(page, 15)
    wh.wait_until(page, "() => window.trame.state.get('key_here') === false")
    between = wh.get_state(page, "joint_angles")  # (the neck is still the joint chosen)
    assert wh.get_state(page, "selected_joint") == "neck"
    assert -29.0 < between[1] < -1.0, between
    assert np.abs(pose(page) - keyed_0).max() > 0.01 and np.abs(pose(page) - keyed_30).max() > 0.01

    # back to 0 (its key marker clicked): the keyed pose, the turns as they were keyed
    click_key(page, 0)
    wait_pose(page, keyed_0, "frame 0")
    wait_angles(page, "neck", [0, 0, 0])
    choose(page, "spine_02")
    wait_angles(page, "spine_02", spine_after)
    assert spine_after[1] == pytest.approx(20.0, abs=0.5)
    choose(page, "wrist_l")
    wait_angles(page, "wrist_l", wrist)
    choose(page, "hand_l")
    wait_angles(page, "hand_l", hand)

    # at 30 likewise
    choose(page, "neck")
    click_key(page, 30)
    wait_pose(page, keyed_30, "frame 30")
    wait_angles(page, "neck", neck)
    # and 0 again, from 30
    click_key(page, 0)
    wait_pose(page, keyed_0, "frame 0, from 30")
    assert wh.get_state(page, "error_message") == ""
