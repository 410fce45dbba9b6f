"""End to end, a scene of several figures and a prop made in the web UI (issue 52's browser bars): in the
Scene tab's figures group add a second humanoid and place it by typed values, add a third figure and open a rigged
character into it (the Scene tab's Open); put the second figure's right hand on the first's (a handshake)
and drag either pelvis 20 cm with the mouse: the hands stay within 5 mm; add a stick, let a hand hold it and
turn that hand 45 degrees by typed angles: the stick turns with it within 1 degree (the grip stays); undo
every step back to one figure, then redo them all; front and side screenshots of the scene. The real
``fabrik3d serve`` and Debian's headless chromium, real clicks, typing and mouse drags; results are read
through the state and the readouts ``stage_point`` and ``prop_frame``.

The tests run in order on one page, each continuing the scene of the one before.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from helpers import web as wh
from helpers.character_asset import write_character
from helpers.web_turns import frame, quat_angle

from fabrik3d import rotations as rot

pytestmark = pytest.mark.browser

SHOTS = wh.ROOT / "tests" / "artifacts"
MM = 1e-3
FIRST, SECOND, THIRD = "Figure 1", "Figure 2", "Figure 3"
HOLDER = "hand_l"  # (the second figure's hand that holds the stick; its right hand shakes)


@pytest.fixture(scope="module")
def hero(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_character(tmp_path_factory.mktemp("hero"), "hero", "mixamo", armature=True)


@pytest.fixture(scope="module")
def scene() -> dict:
    """What the tests found out so far (the steps taken, the stick's name)."""
    return {}


# -- acting and reading ------------------------------------------------------------------------------
def no_error(page) -> None:
    message = wh.get_state(page, "error_message")
    assert not message, message


def synced(page) -> None:
    """The server got through what the page sent (its state pushed before the answer of a later call: as
    ``wh.behind``, with a readout that every figure has, a character too)."""
    page.wait_for_timeout(150)
    wh.trigger(page, "stage_point", [FIRST, "pelvis"])


def pick(page, selector: str, option: str) -> None:
    """Open the select ``selector`` (its tab shown) and click its option ``option``, as a user does."""
    wh.show_control(page, selector).click(force=True)  # (the field's own layer takes the pointer)
    page.get_by_role("option", name=option, exact=True).click()
    synced(page)


def type_into(page, selector: str, value: str) -> None:
    """Type ``value`` into the field ``selector`` and press Enter."""
    field = wh.show_control(page, selector)
    field.fill(value)
    field.press("Enter")
    synced(page)


def type_place(page, scene: dict, fields: dict[str, str], key: str, want: list[float], call: list) -> None:
    """Type each of ``fields`` (selector: value) and press Enter, as a user places a figure or a prop;
    ``key`` (``figure_place`` or ``prop_place``) should then be ``want``. Whether it was is kept in
    ``scene["typed"]`` (``test_typed_places_are_taken``); if not, the scene is placed by the call the
    fields make (``call``: a trigger's name and arguments), so that the later steps can go on."""
    for selector, value in fields.items():
        type_into(page, selector, value)
    try:
        wh.wait_until(page, "([k, p]) => p.every((w, i) => Math.abs((window.trame.state.get(k) || [])[i] - w) < 1e-6)",
                      3, arg=[key, want])  # fmt: skip
        taken = True
    except Exception:
        taken = False
    scene.setdefault("typed", []).append((list(fields), taken))
    if not taken:
        wh.trigger(page, call[0], call[1])
        synced(page)
    no_error(page)
    np.testing.assert_allclose(wh.get_state(page, key)[: len(want)], want, atol=1e-4)


def click(page, selector: str) -> None:
    wh.show_control(page, selector).click()
    synced(page)


def select_figure(page, name: str) -> None:
    """Click the figure's chip in the Scene tab's figure list."""
    click(page, f'#figure-list [data-figure="{name}"]')
    wh.wait_until(page, "(n) => window.trame.state.get('figure_selected') === n", arg=name)


def world(page, figure: str, joint: str) -> np.ndarray:
    return np.array(wh.trigger(page, "stage_point", [figure, joint]))


def handshake_gap(page) -> float:
    return float(np.linalg.norm(world(page, SECOND, "hand_r") - world(page, FIRST, "hand_r")))


def names(page, key: str) -> list[str]:
    return [x["name"] for x in wh.get_state(page, key)]


def front_view(page) -> None:
    since = wh.now(page)
    page.locator("#btn-view-front").click()
    wh.settle(page, since)


def drag_pelvis(page, metres: float) -> None:
    """Drag the selected figure's pelvis (its root handle) ``metres`` to its right on the front view's
    screen (a parallel projection: pixels per metre measured between the shoulders)."""
    front_view(page)
    pose = np.array(wh.get_state(page, "pose"))
    joints = wh.get_state(page, "joint_names")
    a, b = (wh.trigger(page, "joint_screen_position", [n]) for n in ("shoulder_l", "shoulder_r"))
    across = abs(pose[joints.index("shoulder_l")][0] - pose[joints.index("shoulder_r")][0])
    per_metre = abs(a[0] - b[0]) / across
    start = wh.handle_point(page, "pelvis")
    wh.drag_to(page, start, (start[0] + metres * per_metre, start[1]))
    wh.settle(page)


# -- the steps ---------------------------------------------------------------------------------------
def test_a_second_humanoid_is_added_and_placed_by_typed_values(page, scene: dict) -> None:
    wh.show_control(page, "#figure-list")
    assert names(page, "figures") == [FIRST]
    scene["start"] = wh.get_state(page, "pose")  # (the first figure's, at the origin: in the world)
    click(page, "#btn-add-figure")
    wh.wait_until(page, "() => window.trame.state.get('figures').length === 2")
    assert wh.get_state(page, "figure_selected") == SECOND
    fields = {"#figure-x": "-0.35", "#figure-z": "0.8", "#figure-facing": "180"}
    type_place(page, scene, fields, "figure_place", [-0.35, 0.0, 0.8, 180.0], ["place_figure", [-0.35, 0, 0.8, 180]])
    # the figure stands there, turned: its pelvis in the world is its own pelvis turned 180 degrees about Y
    pose = np.array(wh.get_state(page, "pose"))
    own = pose[wh.get_state(page, "joint_names").index("pelvis")]
    np.testing.assert_allclose(world(page, SECOND, "pelvis"), [-0.35 - own[0], own[1], 0.8 - own[2]], atol=1e-6)


def test_a_handshake_stays_closed_while_either_pelvis_is_dragged_20_cm(page) -> None:
    pick(page, "#contact-effector", "hand_r")
    pick(page, "#contact-anchor", FIRST)
    wh.wait_until(page, "() => window.trame.state.get('contact_joints').includes('hand_r')")
    pick(page, "#contact-joint", "hand_r")
    click(page, "#btn-add-contact")
    wh.wait_until(page, "() => window.trame.state.get('stage_contacts').length === 1")
    no_error(page)
    assert "hand_r" in wh.show_control(page, "#contacts .contact-row").inner_text()
    assert handshake_gap(page) <= 5 * MM
    for name in (SECOND, FIRST):
        if wh.get_state(page, "figure_selected") != name:
            select_figure(page, name)
        before = world(page, name, "pelvis")
        drag_pelvis(page, 0.2)
        no_error(page)
        moved = float(np.linalg.norm(world(page, name, "pelvis") - before))
        assert 0.15 <= moved <= 0.25, (name, moved)
        gap = handshake_gap(page)
        assert gap <= 5 * MM, (name, gap)


def test_a_character_is_opened_into_a_third_figure_and_placed(page, hero: Path, scene: dict) -> None:
    click(page, "#btn-add-figure")
    wh.wait_until(page, "() => window.trame.state.get('figures').length === 3")
    assert wh.get_state(page, "figure_selected") == THIRD
    wh.show_control(page, "#scene-upload").set_input_files(str(hero))
    wh.wait_until(page, "() => (window.trame.state.get('character') || {}).name === 'hero.glb'", 60)
    no_error(page)
    fields = {"#figure-x": "1.0", "#figure-z": "0.3", "#figure-facing": "-30"}
    type_place(page, scene, fields, "figure_place", [1.0, 0.0, 0.3, -30.0], ["place_figure", [1.0, 0, 0.3, -30]])
    assert names(page, "figures") == [FIRST, SECOND, THIRD]
    assert handshake_gap(page) <= 5 * MM  # (the others did not move)


def test_a_stick_held_in_a_hand_turns_with_the_hand(page, scene: dict) -> None:
    select_figure(page, SECOND)
    pick(page, "#prop-shape", "cylinder")
    click(page, "#btn-add-prop")
    wh.wait_until(page, "() => window.trame.state.get('stage_props').length === 1")
    stick = wh.get_state(page, "stage_props")[0]["name"]
    scene["stick"] = stick
    wh.wait_until(page, "(n) => window.trame.state.get('prop_picked') === n", arg=stick)
    # put it at the hand, upright: typed in the world (the hand's point read off the stage)
    hand = world(page, SECOND, HOLDER)
    at = [round(float(v), 4) for v in hand]
    fields = {"#prop-x": str(at[0]), "#prop-y": str(at[1]), "#prop-z": str(at[2])}
    type_place(page, scene, fields, "prop_place", at, ["place_prop", [stick, *at, 0, 0, 0, 1]])
    np.testing.assert_allclose(wh.trigger(page, "prop_frame", [stick])["position"], hand, atol=1e-3)
    pick(page, "#hold-joint", HOLDER)
    click(page, "#btn-hold-prop")
    wh.wait_until(page, "(n) => window.trame.state.get('stage_props')[0].held !== ''")
    assert wh.show_control(page, "#prop-held").inner_text() == f"{SECOND} · {HOLDER}"
    no_error(page)

    facing = quat_about_y(wh.get_state(page, "figure_place")[3])
    hand_before = rot.mul(facing, tuple(frame(page, HOLDER)))  # (the hand's world frame)
    stick_before = wh.trigger(page, "prop_frame", [stick])["rotation"]
    # turn the hand 45 degrees about its X in the "Turn a joint" section
    pick(page, "#turn-joint", HOLDER)
    wh.wait_until(page, "(n) => window.trame.state.get('selected_joint') === n", arg=HOLDER)
    x = float(wh.get_state(page, "joint_angles")[0])
    field = wh.show_control(page, "#turn-angle-x")
    field.fill(f"{x + 45.0:.1f}" if x < 0 else f"{x - 45.0:.1f}")
    field.press("Enter")
    field.blur()
    wh.wait_until(page, "(x) => Math.abs(Math.abs(window.trame.state.get('joint_angles')[0] - x) - 45) < 0.6", arg=x)
    synced(page)
    no_error(page)
    hand_after = rot.mul(facing, tuple(frame(page, HOLDER)))
    stick_after = wh.trigger(page, "prop_frame", [stick])["rotation"]
    hand_turn = quat_angle(hand_before, hand_after)
    assert abs(hand_turn - 45.0) <= 1.0, hand_turn
    assert abs(quat_angle(stick_before, stick_after) - hand_turn) <= 1.0
    # the grip (the stick in the hand's frame) stayed
    grip_before = rot.mul(rot.conj(hand_before), tuple(stick_before))
    grip_after = rot.mul(rot.conj(hand_after), tuple(stick_after))
    assert quat_angle(grip_before, grip_after) <= 1.0
    assert handshake_gap(page) <= 5 * MM


def quat_about_y(degrees: float) -> tuple[float, float, float, float]:
    return tuple(rot.axis_angle((0.0, 1.0, 0.0), math.radians(degrees)))  # type: ignore[return-value]


def test_front_and_side_screenshots_of_the_scene(page) -> None:
    select_figure(page, FIRST)
    for view in ("front", "side"):
        since = wh.now(page)
        page.locator(f"#btn-view-{view}").click()
        wh.settle(page, since)
        shot = page.locator("#view3d").screenshot(path=SHOTS / f"figures-{view}.png")
        assert len(shot) > 1000


def test_typed_places_are_taken(scene: dict) -> None:
    """Each place typed above (fields, then Enter) was taken by the app, without the fallback call."""
    assert scene.get("typed"), "no place was typed"
    assert all(taken for _, taken in scene["typed"]), scene["typed"]


def press(page, way: str) -> bool:
    """Click the toolbar's undo or redo button once the page shows whether there is a step to take;
    False (no click) when there is none."""
    wh.wait_until(page, "(w) => document.querySelector('#btn-' + w).disabled === !window.trame.state.get('can_' + w)",
                  arg=way)  # fmt: skip
    if not wh.get_state(page, f"can_{way}"):
        return False
    page.locator(f"#btn-{way}").click()
    synced(page)
    return True


def test_undo_goes_back_to_one_figure_without_props_or_contacts(page, scene: dict) -> None:
    scene["done"] = {
        "figures": names(page, "figures"),
        "props": wh.get_state(page, "stage_props"),
        "contacts": wh.get_state(page, "stage_contacts"),
    }
    undone = 0
    while press(page, "undo"):
        undone += 1
        assert undone < 100
    scene["undone"] = undone
    no_error(page)
    assert names(page, "figures") == [FIRST]
    assert wh.get_state(page, "stage_props") == [] and wh.get_state(page, "stage_contacts") == []
    assert wh.get_state(page, "character") is None
    scene["undone_pose"] = wh.get_state(page, "pose")


def test_undo_puts_the_first_figure_back_in_its_first_pose(scene: dict) -> None:
    off = np.abs(np.array(scene["undone_pose"]) - np.array(scene["start"])).max()
    assert off <= MM, f"the first figure is {off * 1e3:.0f} mm off its first pose"


def test_redo_brings_the_figures_the_stick_and_the_handshake_back(page, scene: dict) -> None:
    redone = 0
    while press(page, "redo"):
        redone += 1
        assert redone < 100
    no_error(page)
    done = scene["done"]
    assert names(page, "figures") == done["figures"]
    assert wh.get_state(page, "stage_props") == done["props"]
    assert wh.get_state(page, "stage_contacts") == done["contacts"]
    assert 0 < redone <= scene["undone"]
    select_figure(page, THIRD)
    wh.wait_until(page, "() => (window.trame.state.get('character') || {}).name === 'hero.glb'")
    scene["gap_after_redo"] = handshake_gap(page)


def test_after_redo_the_handshake_is_closed(scene: dict) -> None:
    assert scene["gap_after_redo"] <= 5 * MM, f"the hands are {scene['gap_after_redo'] * 1e3:.1f} mm apart"
