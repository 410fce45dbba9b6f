"""End to end, the whole body posed in the web UI (the humanoid preset, its default scene, the floor on at 0):
a hand dragged to the floor in front while both toes are pinned leaves the free arm hanging; pinning a toe or
turning the head on a seated pose moves nothing else; with Balance on, a long forward reach keeps the centre
of mass over the feet by sending the hips back. The real ``fabrik3d serve`` and Debian's headless chromium
(playwright). State is read through trame's state, never from pixels; each test also saves the 3D view,
from the front and from the side, into pytest's ``tmp_path`` (to look at).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import web as wh

from fabrik3d.model import presets

pytestmark = pytest.mark.browser

H = presets.get("humanoid")
REST = np.array(H.rest_positions)
DOWN = np.array([0.0, -1.0, 0.0])
MM = 1e-3
# The right arm's length at rest: shoulder to elbow, elbow to wrist, wrist to hand.
ARM = sum(
    float(np.linalg.norm(REST[H.index(a)] - REST[H.index(b)]))
    for a, b in (("shoulder_r", "elbow_r"), ("elbow_r", "wrist_r"), ("wrist_r", "hand_r"))
)


@pytest.fixture(autouse=True)
def rest(page):
    """Each test starts from the default scene's rest pose: balance off, both arms hanging (an applied pose
    stops them hanging, and Reset pose does not bring that back), the error banner closed (it covers the
    view's top)."""
    wh.trigger(page, "reset_pose")
    for hand in ("hand_l", "hand_r"):
        if wh.get_state(page, "hang_of")[hand] is not True:
            wh.trigger(page, "set_hang", [hand, True])
    page.evaluate("() => { window.trame.state.set('balance_on', false); window.trame.state.set('error_message', ''); }")
    wh.wait_until(
        page,
        "() => window.trame.state.get('balance_on') === false && !window.trame.state.get('error_message')"
        " && !Object.keys(window.trame.state.get('targets')).length"
        " && window.trame.state.get('hang_of').hand_l === true && window.trame.state.get('hang_of').hand_r === true",
    )
    still(page)
    yield


# -- readouts -------------------------------------------------------------------------------------
def pose(page) -> np.ndarray:
    return np.array(wh.get_state(page, "pose"))


def joint(page, name: str) -> np.ndarray:
    return pose(page)[H.index(name)]


def from_down(p: np.ndarray, top: str, bottom: str) -> float:
    """Degrees between the bone ``top`` -> ``bottom`` of pose ``p`` and straight down."""
    v = p[H.index(bottom)] - p[H.index(top)]
    return math.degrees(math.acos(float(np.clip(v @ DOWN / np.linalg.norm(v), -1.0, 1.0))))


def still(page, keys: tuple[str, ...] = ("pose", "targets"), quiet: float = 0.3, timeout: float = 20.0) -> None:
    """Wait until the state's ``keys`` stayed the same for ``quiet`` seconds (the server got through what the
    page sent: a loaded server still pushes the state of moves it is working through)."""
    read = f"() => JSON.stringify({json.dumps(list(keys))}.map((k) => window.trame.state.get(k)))"
    deadline, last, since = time.monotonic() + timeout, None, time.monotonic()
    while time.monotonic() < deadline:
        value = page.evaluate(read)
        if value != last:
            last, since = value, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        page.wait_for_timeout(50)
    raise TimeoutError(f"the state's {keys} kept changing for {timeout} s")


# -- actions --------------------------------------------------------------------------------------
def pin_toes(page) -> None:
    for toe in ("toe_l", "toe_r"):
        wh.trigger(page, "pin_effector", [toe])
    wh.wait_until(page, "() => ['toe_l', 'toe_r'].every((t) => t in window.trame.state.get('targets'))")


def drag_target(page, name: str, goal: tuple[float, float, float], steps: int = 20) -> None:
    """Move effector ``name``'s target from where the effector is to ``goal`` in ``steps`` steps (each typed
    as its three coordinates), waiting for each step to be applied."""
    start = joint(page, name)
    for k in range(1, steps + 1):
        point = np.round(start + k / steps * (np.array(goal) - start), 6)
        for axis in range(3):
            wh.trigger(page, "type_coordinate", [name, axis, f"{point[axis]:.6f}"])
        wh.wait_until(
            page,
            "([n, p]) => { const t = window.trame.state.get('targets')[n];"
            " return t !== undefined && t.every((v, i) => Math.abs(v - p[i]) < 1e-6); }",
            arg=[name, point.tolist()],
        )
    still(page)


def shoot(page, tmp_path: Path, stem: str) -> list[Path]:
    """The 3D view from the front and from the side, saved as ``tmp_path/stem-<view>.png`` (not empty);
    back to the perspective view after."""
    shots = []
    for view in ("front", "side"):
        since = wh.now(page)
        page.locator(f"#btn-view-{view}").click()
        wh.settle(page, since)
        path = tmp_path / f"{stem}-{view}.png"
        page.locator("#view3d").screenshot(path=path)
        assert path.stat().st_size > 0, path
        shots.append(path)
    wh.trigger(page, "reset_camera", ["perspective"])
    return shots


# -- the tests ------------------------------------------------------------------------------------
def test_a_hand_dragged_to_the_floor_in_front_leaves_the_free_arm_hanging(page, tmp_path: Path) -> None:
    assert wh.get_state(page, "floor_on") is True
    # the scene opens on a relaxed stance: both arms already hang
    start = pose(page)
    for side in "lr":
        assert from_down(start, f"shoulder_{side}", f"elbow_{side}") <= 30.0, side
    pin_toes(page)
    goal = (0.15, 0.25, 0.45)  # (x left, y up, z forward: on the floor in front, a hand's height above it)
    drag_target(page, "hand_l", goal)
    shoot(page, tmp_path, "hand-to-floor")
    p = pose(page)
    miss = float(np.linalg.norm(p[H.index("hand_l")] - goal))
    assert miss <= 0.01, f"the left hand is {miss * 100:.1f} cm from its target"
    upper, fore = from_down(p, "shoulder_r", "elbow_r"), from_down(p, "elbow_r", "wrist_r")
    assert upper <= 30.0, f"the right upper arm is {upper:.1f} degrees from straight down"
    assert fore <= 30.0, f"the right forearm is {fore:.1f} degrees from straight down"
    drop = float(p[H.index("shoulder_r")][1] - p[H.index("hand_r")][1])
    assert drop >= 0.4 * ARM, f"the right hand is {drop:.3f} m below its shoulder (arm {ARM:.3f} m)"
    assert wh.get_state(page, "hang_of")["hand_r"] is True
    targets = wh.get_state(page, "targets")
    for toe in ("toe_l", "toe_r"):
        assert np.linalg.norm(p[H.index(toe)] - targets[toe]) <= MM + 1e-6, toe


def test_on_sit_pinning_a_toe_or_turning_the_head_moves_nothing_else(page, tmp_path: Path) -> None:
    assert wh.get_state(page, "floor_on") is True
    rest_pose = pose(page)
    wh.trigger(page, "apply_library_pose", ["sit", False, None])
    wh.wait_until(
        page,
        "(p) => JSON.stringify(window.trame.state.get('pose')) !== p",
        arg=json.dumps(rest_pose.tolist()),
    )
    still(page)
    assert not wh.get_state(page, "error_message")
    sat = pose(page)
    assert np.linalg.norm(sat[H.index("knee_l")] - rest_pose[H.index("knee_l")]) > 0.1  # (it did sit)

    # pin the left toe with its button: nothing moves
    wh.show_control(page, "#pin-toe_l").click()
    wh.wait_until(page, "() => window.trame.state.get('targets').toe_l !== undefined")
    still(page)
    pinned = pose(page)
    moved = np.linalg.norm(pinned - sat, axis=1)
    worst = int(np.argmax(moved))
    assert moved[worst] <= MM + 1e-6, f"{H.names[worst]} moved {moved[worst] * 1000:.2f} mm on the pin"

    # the look handle dragged level, 40 degrees to the side of the head (the view from above: the screen's
    # x is +X, its down +Z): the legs and the hips stay
    since = wh.now(page)
    wh.trigger(page, "reset_camera", ["top"])
    wh.settle(page, since)
    box = wh.view_box(page)
    (sl, _), (sr, _) = (wh.trigger(page, "joint_screen_position", [n]) for n in ("shoulder_l", "shoulder_r"))
    ppu = (sl - sr) / float(pinned[H.index("shoulder_l")][0] - pinned[H.index("shoulder_r")][0])
    head = pinned[H.index("head")]
    lx, ly = wh.trigger(page, "target_screen_position", ["head", "look"])
    hx, hy = wh.trigger(page, "joint_screen_position", ["head"])
    a = math.radians(40.0)  # (toward +X: turned about +Y from the handle's way)
    dx, dy = lx - hx, ly - hy
    end = (box["x"] + hx + dx * math.cos(a) + dy * math.sin(a), box["y"] + hy - dx * math.sin(a) + dy * math.cos(a))
    wh.drag_to(page, (box["x"] + lx, box["y"] + ly), end)
    wh.wait_until(page, "() => window.trame.state.get('look_target') !== null")
    still(page, ("pose", "look_target"))
    assert not wh.get_state(page, "error_message")
    look = np.array(wh.get_state(page, "look_target"))
    home = np.array([dx, 0.0, dy]) / ppu  # (the handle's way from the head before the drag, level)
    turn = math.degrees(math.atan2(look[0] - head[0], look[2] - head[2]) - math.atan2(home[0], home[2]))
    assert turn == pytest.approx(40.0, abs=3.0), "the look handle did not go 40 degrees to the side"
    shoot(page, tmp_path, "sit-look")
    looked = pose(page)
    for name in ("pelvis", "knee_l", "knee_r", "ankle_l", "ankle_r", "toe_l", "toe_r"):
        d = float(np.linalg.norm(looked[H.index(name)] - pinned[H.index(name)]))
        assert d <= MM + 1e-6, f"{name} moved {d * 1000:.2f} mm on the look"


def test_balance_on_with_a_forward_reach_keeps_the_com_green_and_sends_the_hips_back(page, tmp_path: Path) -> None:
    assert wh.get_state(page, "floor_on") is True
    wh.show_control(page, "#balance-on").click()
    wh.wait_until(page, "() => window.trame.state.get('balance_on') === true", 30)
    pin_toes(page)
    still(page)
    pelvis = H.index("pelvis")
    before = pose(page)[pelvis]
    drag_target(page, "hand_l", (0.25, 1.15, 0.95))  # (0.82 m before the toes: the forward reaches)
    shoot(page, tmp_path, "balanced-reach")
    p = pose(page)
    com = wh.get_state(page, "com")
    back = float(before[2] - p[pelvis][2])
    report = f"pelvis z {before[2]:.4f} -> {p[pelvis][2]:.4f} (back {back * 100:.1f} cm), com {com}"
    assert wh.get_state(page, "com_inside") is True, report
    assert back >= 0.01, report
