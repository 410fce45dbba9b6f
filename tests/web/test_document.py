"""The web UI's scene document (issue 52), without a server: figures, props, contacts, one undo order."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from fabrik3d_web.document import stage_commands as sc
from fabrik3d_web.document.controller import Controller
from fabrik3d_web.document.document import Document

from fabrik3d.model.placement import quat_conj, quat_mul
from fabrik3d.stage import Stage


def doc() -> Document:
    return Document(Controller())


def world_joint(d: Document, name: str, joint: str) -> np.ndarray:
    s = d.find(name)
    return s.placement.to_world(s.controller.result.positions[s.controller.scene.skeleton.index(joint)])


def test_add_select_rename_place_and_delete_figures_each_one_undo_step() -> None:
    d = doc()
    second = d.add_figure("humanoid")
    assert d.selected == second == "Figure 2" and len(d.slots) == 2
    assert np.linalg.norm(d.slot.placement.position - d.slots[0].placement.position) == pytest.approx(0.9)
    d.rename_figure(second, "Ben")
    d.place_figure("Ben", [0.5, 0.0, 1.0], 180)
    assert d.find("Ben").placement.facing == 180
    copy = d.add_figure(duplicate=True)
    assert d.find(copy).controller.result.positions.tolist() == d.find("Ben").controller.result.positions.tolist()
    d.select_figure("Figure 1")
    d.delete_figure(copy)
    assert [s.name for s in d.slots] == ["Figure 1", "Ben"]
    for names in (["Figure 1", "Ben", copy], ["Figure 1", "Ben"], ["Figure 1", "Ben"], ["Figure 1", "Figure 2"],
                  ["Figure 1"]):  # fmt: skip
        d.undo()
        assert [s.name for s in d.slots] == names or [s.name for s in d.slots] == names[:-1]
    while d.undo():
        pass
    assert [s.name for s in d.slots] == ["Figure 1"]
    while d.redo():
        pass
    assert [s.name for s in d.slots] == ["Figure 1", "Ben"]


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (lambda d: d.add_figure("octopus-xl"), "preset: expected one of"),
        (lambda d: d.select_figure("Nobody"), "no figure 'Nobody'"),
        (lambda d: d.rename_figure("Figure 1", ""), "name: expected a name"),
        (lambda d: d.rename_figure("Figure 1", "Figure 2"), "'Figure 2' is taken"),
        (lambda d: d.place_figure("Figure 1", [0, 0, float("nan")], 0), "position"),
        (lambda d: d.place_figure("Figure 1", [0, 0, 0], "left"), "facing"),
        (lambda d: d.set_figure_flags("Figure 1", hidden="yes"), "hidden: expected true or false"),
        (lambda d: sc.add_prop(d, "teapot"), "shape: expected one of"),
        (lambda d: sc.attach_prop(d, "nothing", "Figure 1", "hand_l"), "no prop 'nothing'"),
        (lambda d: sc.add_contact(d, "Figure 1", "elbow_l", "Figure 2", "hand_l"), "not an end effector"),
        (lambda d: sc.add_contact(d, "Figure 1", "hand_l", "Figure 9", "hand_l"), "no figure 'Figure 9'"),
        (lambda d: sc.remove_contact(d, 3), "expected an index"),
    ],
)
def test_a_bad_command_names_the_problem_and_changes_nothing(action, message) -> None:  # type: ignore[no-untyped-def]
    d = doc()
    d.add_figure()
    before = (list(d.slots), list(d.props), list(d.contacts), d.selected, d.can_undo, len(d._undo))
    with pytest.raises(ValueError, match=message):
        action(d)
    assert (list(d.slots), list(d.props), list(d.contacts), d.selected, d.can_undo, len(d._undo)) == before


def test_figure_steps_and_document_steps_undo_in_one_order() -> None:
    d = doc()
    a = d.controller
    hand = a.effector_point("hand_l")
    a.move_target("hand_l", np.add(hand, (0.1, 0.1, 0.2)))  # a figure step
    d.add_figure()  # a document step
    b = d.controller
    b.move_target("hand_r", np.add(b.effector_point("hand_r"), (0.0, 0.2, 0.2)))  # a figure step of the new one
    assert d.undo() and "hand_r" not in b.targets  # B's move
    assert d.undo() and len(d.slots) == 1  # the added figure
    assert d.undo() and "hand_l" not in a.targets  # A's move
    assert not d.undo()
    assert d.redo() and "hand_l" in a.targets
    assert d.redo() and len(d.slots) == 2
    assert d.redo() and "hand_r" in d.find("Figure 2").controller.targets
    a.begin_drag()  # a click on a handle that moves nothing leaves no step
    a.end_drag()
    assert d.undo() and "hand_r" not in d.find("Figure 2").controller.targets


def handshake() -> Document:
    d = doc()
    d.add_figure()
    d.place_figure("Figure 2", [-0.35, 0.0, 0.8], 180)
    sc.add_contact(d, "Figure 1", "hand_r", "Figure 2", "hand_r")
    return d


def test_a_handshake_stays_closed_while_either_pelvis_is_dragged_20_cm() -> None:
    d = handshake()
    assert np.linalg.norm(world_joint(d, "Figure 1", "hand_r") - world_joint(d, "Figure 2", "hand_r")) < 2e-3
    for name, shift in (("Figure 1", [0.0, 0.0, -0.2]), ("Figure 2", [0.2, 0.0, 0.0]), ("Figure 1", [0.0, -0.2, 0.0])):
        d.select_figure(name)
        c = d.controller
        c.move_root(c.result.positions[0] + shift)
        d.settle([name])
        gap = np.linalg.norm(world_joint(d, "Figure 1", "hand_r") - world_joint(d, "Figure 2", "hand_r"))
        assert gap * 1e3 <= 5.0, (name, gap)
    sc.remove_contact(d, 0)
    assert d.settle(["Figure 1"]) == []


def test_a_prop_attached_to_a_hand_turns_with_it_and_is_let_go_where_it_is() -> None:
    d = doc()
    stick = sc.add_prop(d, "cylinder")
    sc.place_prop(d, stick, [0.0, 1.0, 0.5], (0, 0, 30))
    sc.attach_prop(d, stick, "Figure 1", "hand_r")
    c = d.controller
    j = c.scene.skeleton.index("hand_r")
    before = d.prop_world(d.prop(stick))
    np.testing.assert_allclose(before.position, [0.0, 1.0, 0.5], atol=1e-9)  # attaching moves nothing
    assert c.hand_state("r")["hand_shape"] == "grip"  # the hand closes round what it holds
    assert min(c.finger_curls("r").values()) > 0.3
    hand_before = c.result.rotations[j]
    c.move_target("hand_r", np.add(c.effector_point("hand_r"), (0.1, 0.25, 0.1)))
    after = d.prop_world(d.prop(stick))
    hand_turn = quat_mul(c.result.rotations[j], quat_conj(hand_before))
    expected = quat_mul(hand_turn, before.rotation)
    assert math.degrees(2 * math.acos(min(1.0, abs(float(np.dot(expected, after.rotation)))))) <= 1.0
    sc.detach_prop(d, stick)
    np.testing.assert_allclose(d.prop(stick).transform.position, after.position, atol=1e-9)
    assert d.prop(stick).parent is None


def test_the_document_is_a_stage_the_library_saves_and_checks() -> None:
    d = handshake()
    sc.add_prop(d, "block")
    stage = d.stage()
    assert isinstance(stage, Stage)
    assert [f.name for f in stage.figures] == ["Figure 1", "Figure 2"]
    assert stage.to_dict()["contacts"][0]["on"] == {"figure": "Figure 2", "joint": "hand_r"}
    assert stage.props[0].transform.position[1] == pytest.approx(0.225, abs=0.01)  # a block stands on the floor
    d.delete_figure("Figure 2")
    assert d.contacts == [] and [s.name for s in d.slots] == ["Figure 1"]
    with pytest.raises(ValueError, match="the last figure stays"):
        d.delete_figure("Figure 1")


def test_a_pose_copied_on_one_figure_pastes_onto_another_by_role_mirrored_too() -> None:
    d = doc()
    a = d.controller
    a.move_target("hand_l", np.add(a.effector_point("hand_l"), (0.15, 0.45, 0.25)))
    a.copy_pose("hand_l")
    d.add_figure()
    b = d.controller
    b.paste_pose()
    sk = b.scene.skeleton
    j = sk.index("hand_l")
    np.testing.assert_allclose(b.result.positions[j], a.result.positions[j], atol=0.02)  # the same arm pose
    d.select_figure("Figure 1")
    d.select_figure("Figure 2")
    b.paste_pose(mirrored=True)
    right = b.result.positions[sk.index("hand_r")]
    left = a.result.positions[j]
    np.testing.assert_allclose(right, left * [-1, 1, 1], atol=0.03)  # the right arm takes the left's, mirrored


def test_undo_and_redo_of_a_drag_bring_the_linked_figure_back_too() -> None:
    d = handshake()
    other = d.find("Figure 1").controller
    before = other.result.positions.copy()
    d.select_figure("Figure 2")
    c = d.controller
    c.begin_drag()
    c.move_root(np.add(c.result.positions[0], (0.2, 0.0, 0.0)), undoable=False)
    d.settle(["Figure 2"])
    c.end_drag()
    after = other.result.positions.copy()
    assert np.abs(after - before).max() > 0.01  # the handshake pulled Figure 1
    assert d.undo()
    np.testing.assert_allclose(other.result.positions, before, atol=1e-12)
    assert d.redo()
    np.testing.assert_allclose(other.result.positions, after, atol=1e-12)
    gap = np.linalg.norm(world_joint(d, "Figure 1", "hand_r") - world_joint(d, "Figure 2", "hand_r"))
    assert gap * 1e3 <= 5.0


def test_undo_of_a_contact_puts_both_figures_back_where_they_were() -> None:
    d = doc()
    d.add_figure()
    d.place_figure("Figure 2", [-0.35, 0.0, 0.8], 180)
    before = [s.controller.result.positions.copy() for s in d.slots]
    sc.add_contact(d, "Figure 1", "hand_r", "Figure 2", "hand_r")
    assert max(np.abs(s.controller.result.positions - b).max() for s, b in zip(d.slots, before)) > 0.05
    assert d.undo() and d.contacts == []
    for s, b in zip(d.slots, before):
        np.testing.assert_allclose(s.controller.result.positions, b, atol=1e-12)


def test_a_stage_file_opens_its_character_figures_with_their_characters(tmp_path) -> None:
    """A figure whose scene names a character (a file beside the stage file) reopens as that character, not
    as its skeleton alone, and the scene saved again names the same file; uploaded without its folder, the
    figure shows as its skeleton and still names the file; the glTF files write the character's own meshes."""
    from helpers.character_asset import write_character

    import fabrik3d
    from fabrik3d.io.character import load_character
    from fabrik3d.io.scene import Scene
    from fabrik3d.io.stage import Figure, load_stage, parse_stage, save_stage
    from fabrik3d.model.placement import Placement

    model = load_character(write_character(tmp_path, "hero"))
    hero = Scene(model.skeleton, character={"file": "hero.glb", "rig_map": dict(model.rig_map)})
    first = Figure("Ann", Scene(fabrik3d.presets.get("humanoid")), Placement())
    save_stage(Stage([first, Figure("Hero", hero, Placement([1.0, 0.0, 0.0]))]), tmp_path / "duo.json")
    d = Document(Controller(Scene(fabrik3d.presets.get("humanoid"))))
    d.load_stage(load_stage(tmp_path / "duo.json"), "duo.json", undoable=False)
    c = d.find("Hero").controller
    assert c.character is not None and tuple(c.character.skeleton.names) == tuple(model.skeleton.names)
    assert d.find("Ann").controller.character is None
    again = parse_stage(d.scene_json())
    assert again.figures[1].scene.character["file"] == "hero.glb"
    assert d.stage().figures[1].character is c.character
    glb = d.pose_glb()
    names = [n.get("name") for n in json.loads(glb[20 : 20 + int.from_bytes(glb[12:16], "little")])["nodes"]]
    assert "Hero Body" in names and "Hero body" not in names and "Ann body" in names
    uploaded = parse_stage((tmp_path / "duo.json").read_bytes())  # (no folder, no character opened: an upload)
    d.load_stage(uploaded, "duo.json")
    assert d.find("Hero").controller.character is None
    assert parse_stage(d.scene_json()).figures[1].scene.character["file"] == "hero.glb"


def test_a_hand_put_on_a_ball_lands_on_the_ball_not_on_its_box() -> None:
    """A contact on a round prop takes the point of its own surface nearest the hand
    (``nearest_on_surface``): on a ball, a point at its radius from its centre, toward the hand."""
    d = doc()
    name = sc.add_prop(d, "sphere")
    hand = world_joint(d, "Figure 1", "hand_l")
    radius = float(d.prop(name).size[0]) / 2
    sc.place_prop(d, name, hand + 0.15)  # (the hand off the ball's box corner)
    sc.add_contact(d, "Figure 1", "hand_l", on_prop=name)
    offset = d.contacts[0].offset
    assert abs(float(np.linalg.norm(offset)) - radius) <= 0.01 * radius  # (on the ball: its facets' depth)
    toward = -np.array([0.15, 0.15, 0.15]) / np.linalg.norm([0.15, 0.15, 0.15])
    assert float(np.dot(offset / np.linalg.norm(offset), toward)) > 0.99
    gap = np.linalg.norm(world_joint(d, "Figure 1", "hand_l") - (d.prop_world(d.prop(name)).apply(offset)))
    assert gap * 1e3 <= 5.0  # (and the hand went there)


def test_two_free_hands_of_facing_figures_meet_at_a_handshakes_height_and_side_by_side_where_they_hang() -> None:
    """A new clasp between free hands (``together.clasp_point``): facing figures shake hands in front, at about
    elbow height, the upper arms hanging and the forearms forward; figures side by side hold hands low, where
    their hands hang; a hand the user placed meets the other halfway, where it is."""
    d = handshake()  # (0.8 m apart, facing each other)
    hands = [world_joint(d, n, "hand_r") for n in ("Figure 1", "Figure 2")]
    assert np.linalg.norm(hands[0] - hands[1]) < 2e-3
    assert 0.95 <= hands[0][1] <= 1.15  # (hanging, they were at 0.81 m)
    for name in ("Figure 1", "Figure 2"):
        shoulder, elbow, hand = (world_joint(d, name, j) for j in ("shoulder_r", "elbow_r", "hand_r"))
        upper = (elbow - shoulder) / np.linalg.norm(elbow - shoulder)
        fore = (hand - elbow) / np.linalg.norm(hand - elbow)
        assert upper[1] < -0.8 and abs(fore[1]) < 0.5, (name, upper, fore)  # (hanging; forward)
    beside = doc()
    beside.add_figure()
    beside.place_figure("Figure 2", [0.6, 0.0, 0.0], 0)
    hung = world_joint(beside, "Figure 1", "hand_l")[1]
    sc.add_contact(beside, "Figure 1", "hand_l", "Figure 2", "hand_r")
    assert abs(world_joint(beside, "Figure 1", "hand_l")[1] - hung) < 0.05
    placed = doc()
    placed.add_figure()
    placed.place_figure("Figure 2", [-0.35, 0.0, 0.8], 180)
    placed.controller.move_target("hand_r", np.add(placed.controller.effector_point("hand_r"), [0.0, 0.3, 0.2]))
    high = world_joint(placed, "Figure 2", "hand_r")
    sc.add_contact(placed, "Figure 1", "hand_r", "Figure 2", "hand_r")
    assert world_joint(placed, "Figure 1", "hand_r")[1] > 0.9 and world_joint(placed, "Figure 1", "hand_r")[1] < high[1]
