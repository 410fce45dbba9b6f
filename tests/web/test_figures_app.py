"""The web app's figures in process (issue 52): a click on another figure selects it, the picture does not
jump when the selection changes, a drag keeps a contact, and the scene file and pose file hold the stage."""

from __future__ import annotations

import io
import json
import struct
import zipfile

import numpy as np
import pytest
from fabrik3d_web.app import WebApp
from fabrik3d_web.document import stage_commands as sc
from fabrik3d_web.view.picture import picture_settings, render_picture
from fabrik3d_web.view.stage_bodies import figure_bodies
from helpers.character_asset import write_character
from PIL import Image
from trame.app import get_server

from fabrik3d.io.stage import parse_stage


@pytest.fixture
def app() -> WebApp:
    out = WebApp(server=get_server(f"fabrik3d-test-figures-{np.random.randint(1 << 30)}", client_type="vue3"))
    out.figures.add_figure("humanoid")  # Figure 2, selected, beside Figure 1
    return out


def pixel_of(app: WebApp, figure: str, joint: str) -> np.ndarray:
    """Where a joint of any figure is on the view's picture (render pixels)."""
    d = app.document
    slot = d.find(figure)
    world = slot.placement.to_world(slot.controller.result.positions[slot.controller.scene.skeleton.index(joint)])
    return np.array(app.joint_drag.display_point(d.slot.placement.to_local(world))[:2])


def test_a_click_on_another_figure_selects_it_and_a_click_on_nothing_does_not(app: WebApp) -> None:
    app.reset_camera("front")
    x, y = pixel_of(app, "Figure 1", "spine_02")
    assert app.figures.click(x, y - 300, app.joint_drag.display_point) is False
    assert app.document.selected == "Figure 2"
    assert app.figures.click(x + 3, y, app.joint_drag.display_point) is True
    assert app.document.selected == "Figure 1"
    assert app.state.figure_selected == "Figure 1"
    assert app.state.joint_names == list(app.controller.scene.skeleton.names)


def test_the_picture_does_not_jump_when_the_selection_or_a_placement_changes(app: WebApp) -> None:
    before = {name: pixel_of(app, name, "head") for name in ("Figure 1", "Figure 2")}
    app.figures.select_figure("Figure 1")
    for name in before:
        np.testing.assert_allclose(pixel_of(app, name, "head"), before[name], atol=0.5)
    app.figures.place_figure("0.5", "0", "-0.3", "30")  # the selected figure moves on the picture, the other stays
    np.testing.assert_allclose(pixel_of(app, "Figure 2", "head"), before["Figure 2"], atol=0.5)
    assert np.linalg.norm(pixel_of(app, "Figure 1", "head") - before["Figure 1"]) > 5


def test_a_drag_of_the_pelvis_keeps_a_handshake_and_the_files_hold_the_stage(app: WebApp) -> None:
    app.figures.place_figure("-0.35", "0", "0.8", "180")
    app.figures.add_contact("hand_r", "figure:Figure 1", "hand_r")
    assert app.state.error_message == ""
    c = app.controller
    app.drags.grab_handle("root", "pelvis", c.result.positions[0])
    for k in range(1, 11):
        app.drags.drag_handle("root", "pelvis", np.add(c.scene.skeleton.rest_positions[0], (0.02 * k, 0, 0)))
        app.drags._solve_drag()
    app.drags.release_handle("root", "pelvis", c.result.positions[0])
    gap = np.subtract(app.figures.stage_point("Figure 1", "hand_r"), app.figures.stage_point("Figure 2", "hand_r"))
    assert np.linalg.norm(gap) * 1e3 <= 5.0
    stage = parse_stage(app.document.scene_json())
    assert [f.name for f in stage.figures] == ["Figure 1", "Figure 2"] and len(stage.contacts) == 1
    sc.add_prop(app.document, "block")
    glb = app.document.pose_glb()
    doc = json.loads(glb[20 : 20 + struct.unpack_from("<I", glb, 12)[0]])
    assert {"Figure 1", "Figure 2", "block"} <= {n.get("name") for n in doc["nodes"]}


def test_the_picture_and_the_openpose_pass_show_every_figure_and_prop(app: WebApp) -> None:
    app.scene.render_window.SetSize(480, 360)
    sc.add_prop(app.document, "block")
    app.figures.refresh()
    app.reset_camera("front")
    s = picture_settings({"width": 480, "height": 360, "background": "#ffffff", "floor": False})
    image = np.array(Image.open(io.BytesIO(render_picture(app.pictures.picture_props(s), app.scene.renderer, s))))
    x, y = pixel_of(app, "Figure 1", "spine_02")  # (render pixels: the picture is the view's size)
    patch = image[int(360 - y) - 3 : int(360 - y) + 4, int(x) - 3 : int(x) + 4, :3]
    assert patch.min() < 200, "the other figure is not in the picture"
    app.figures.flag_figure("Figure 1", "hidden", True)
    image = np.array(Image.open(io.BytesIO(render_picture(app.pictures.picture_props(s), app.scene.renderer, s))))
    patch = image[int(360 - y) - 3 : int(360 - y) + 4, int(x) - 3 : int(x) + 4, :3]
    assert patch.min() > 240, "a hidden figure is in the picture"
    app.figures.flag_figure("Figure 1", "hidden", False)
    with zipfile.ZipFile(io.BytesIO(app.pictures._pass_job(s, "zip")())) as z:  # (every pass, the OpenPose JSON too)
        people = json.loads(z.read(next(n for n in z.namelist() if n.endswith(".json"))))["people"]
    assert len(people) == 2  # one person a figure


def _picture(app: WebApp, **values) -> np.ndarray:
    s = picture_settings({"width": 480, "height": 360, "background": "#ffffff", "floor": False, **values})
    return np.array(Image.open(io.BytesIO(render_picture(app.pictures.picture_props(s), app.scene.renderer, s))))


def test_the_picture_shows_the_other_figures_with_their_bodies(app: WebApp, tmp_path) -> None:
    """The view draws the other figures as tubes (a drag's frames stay cheap); a picture shows each with its
    body, as the selected one: the mannequin (in its tint) while the view shows the mannequin, a character's own
    skinned meshes, and the tubes when sticks are asked for."""
    app.scene.render_window.SetSize(480, 360)
    app.reset_camera("front")
    d = app.document
    other = d.find("Figure 1")
    chest = other.controller.result.positions[other.controller.scene.skeleton.index("spine_02")]
    side = d.slot.placement.to_local(other.placement.to_world(np.add(chest, [0.07, 0.0, 0.0])))  # (body, not tube)
    x, y = np.array(app.joint_drag.display_point(side)[:2])
    at = (slice(int(360 - y) - 1, int(360 - y) + 2), slice(int(x) - 1, int(x) + 2))
    assert app.state.show_mannequin
    assert _picture(app)[at][..., :3].max() < 245, "no body beside the other figure's spine"
    assert _picture(app, sticks=True)[at][..., :3].max() < 245
    app.state.show_mannequin = False  # (the view's Mannequin switch off: tubes, as the view draws them)
    assert _picture(app)[at][..., :3].min() > 245, "a body where the view shows none"
    app.state.show_mannequin = True
    # A character figure, not selected: its own meshes, skinned at its pose, where its figure stands.
    d.controller.load_character_file(write_character(tmp_path, "hero", "mixamo", armature=True))
    app.figures.select_figure("Figure 1")
    bodies = figure_bodies(d, True)
    hero = d.find("Figure 2").controller
    assert len(bodies["Figure 2"]) == len(hero.character.meshes)
    bounds = np.array(bodies["Figure 2"][0].GetBounds()).reshape(3, 2)  # (through its user matrix: the view's)
    pelvis = d.in_view(d.find("Figure 2"))[0][0]
    assert np.all(bounds[:, 0] - 0.05 <= pelvis) and np.all(pelvis <= bounds[:, 1] + 0.05)


@pytest.mark.parametrize(
    ("call", "args", "message"),
    [
        ("place_figure", ("a", "0", "0", "0"), "position.x: expected a number"),
        ("place_figure", ("0", "0", "1e9", "0"), "position: coordinates must be within"),
        ("add_figure", ("dragon",), "preset: expected one of"),
        ("add_prop", ("teapot",), "shape: expected one of"),
        ("flag_figure", ("Figure 1", "shiny", True), "flag: expected hidden or locked"),
        ("add_contact", ("hand_r", "nowhere", None), "on: expected a figure or a prop"),
        ("add_contact", ("elbow_l", "figure:Figure 1", "hand_r"), "not an end effector"),
        ("remove_contact", (0,), "contact: expected an index"),
        ("select_figure", ({"name": 1},), "no figure"),
    ],
)
def test_a_bad_call_from_a_page_names_the_problem_and_changes_nothing(app: WebApp, call, args, message) -> None:  # type: ignore[no-untyped-def]
    before = (app.state.figures, app.state.figure_place, app.state.stage_props, app.state.stage_contacts)
    getattr(app.figures, call)(*args)
    assert message in app.state.error_message
    assert (app.state.figures, app.state.figure_place, app.state.stage_props, app.state.stage_contacts) == before


def test_a_hand_on_a_prop_follows_the_prop_when_it_is_moved(app: WebApp) -> None:
    """A hand put on a prop's point (a block beside the figure, its corner within reach) stays on it when
    the prop is moved by typed values: the document solves the figures whose hands are on it
    (``Document.replace_prop``)."""
    name = sc.add_prop(app.document, "block")
    x, y, z = app.figures.prop_frame(name)["position"]
    app.figures.place_prop(name, x - 0.25, y + 0.5, z - 0.2, 0, 0, 0, 1)
    app.figures.add_contact("hand_l", f"prop:{name}")
    assert app.state.error_message == ""

    def hand_and_gap() -> tuple[np.ndarray, float]:
        hand = np.array(app.figures.stage_point(app.document.selected, "hand_l"))
        frame = app.figures.prop_frame(name)  # (unturned: the point is the prop's position and the offset)
        return hand, float(np.linalg.norm(hand - (np.array(frame["position"]) + app.document.contacts[0].offset)))

    before, gap = hand_and_gap()
    assert gap * 1e3 <= 5.0
    app.figures.place_prop(name, x - 0.25, y + 0.6, z - 0.1, 0, 0, 0, 1)
    assert app.state.error_message == ""
    after, gap = hand_and_gap()
    assert gap * 1e3 <= 5.0 and np.linalg.norm(after - before) > 0.12  # (the hand moved with the prop)


def test_the_timeline_shows_every_figure_at_its_frame(app: WebApp) -> None:
    """Figure 1 keyed (its left hand raised at frame 30), Figure 2 selected: going to frame 30, stepping
    back and playing show Figure 1 at those frames too (issue 52: the timeline played the selected
    figure only), in the view as well; the background bake then shows its baked frame."""
    from fabrik3d_web.document import stage_frames

    one = app.document.find("Figure 1").controller
    rest = one.result.positions[one.scene.skeleton.index("hand_l")].copy()
    one.set_key()
    one.go_to_frame(30)
    one.move_target("hand_l", np.add(rest, (0.0, 0.45, 0.25)))
    one.set_key()
    one.go_to_frame(0)
    assert app.document.selected == "Figure 2"

    def hand_one() -> np.ndarray:
        return np.array(app.figures.stage_point("Figure 1", "hand_l"))

    low = hand_one()
    app.timeline.scrub(30)  # (the page set the frame: a click on the ruler)
    assert app.controller.frame == 30 and one.frame == 30
    high = hand_one()
    assert high[1] - low[1] > 0.3
    drawn = app.figures.view._figures["Figure 1"].xyz  # (Figure 1's tubes: the bone ends in the view)
    assert np.max(drawn[:, 1]) - np.max(app.document.in_view(app.document.find("Figure 1"))[0][:, 1]) == 0.0
    app.timeline.step_frame(-15)
    assert one.frame == 15 and low[1] < hand_one()[1] < high[1]
    while stage_frames.bake_ahead(app.document, 4)[0]:
        pass
    assert one.previewing is None
    baked = one.result.positions.copy()
    one.go_to_frame(15)
    np.testing.assert_array_equal(one.result.positions, baked)  # (the frame shown is the baked one)
