"""End to end, the undo history across scenes (issue 18, item 6): switching preset or opening a file is an
undo step; Ctrl+Z brings the previous scene back with its pose and targets, Ctrl+Shift+Z goes forward
again. The real ``fabrik3d serve`` and Debian's headless chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import web as wh

from fabrik3d.io.scene import Scene
from fabrik3d.model import presets

pytestmark = pytest.mark.browser


def test_undo_brings_the_scene_before_a_preset_switch_and_a_file_open_back(page, tmp_path: Path) -> None:
    wh.trigger(page, "type_coordinate", ["hand_l", 0, "0.5"])
    wh.wait_until(page, "() => window.trame.state.get('targets').hand_l !== undefined")
    pose = wh.get_state(page, "pose")
    page.evaluate("() => window.trame.state.set('preset', 'robot_arm')")
    wh.wait_until(page, "() => window.trame.state.get('joint_names').includes('tool')")
    page.locator("#view3d").click(position={"x": 20, "y": 300})
    page.keyboard.press("Control+z")
    wh.wait_until(page, "() => window.trame.state.get('joint_names').includes('hand_l')")
    assert wh.get_state(page, "preset") == "humanoid"
    assert wh.get_state(page, "targets")["hand_l"][0] == pytest.approx(0.5)
    assert wh.get_state(page, "pose") == pose
    page.keyboard.press("Control+Shift+z")
    wh.wait_until(page, "() => window.trame.state.get('joint_names').includes('tool')")
    assert wh.get_state(page, "preset") == "robot_arm"
    # an opened file, then undo: the arm again
    octopus = tmp_path / "octopus.json"
    octopus.write_text(json.dumps(Scene(presets.get("octopus")).to_dict()))
    page.locator("#scene-upload").set_input_files(str(octopus))
    count = len(presets.get("octopus"))
    wh.wait_until(page, f"() => window.trame.state.get('joint_names').length === {count}")
    page.locator("#view3d").click(position={"x": 20, "y": 300})
    page.keyboard.press("Control+z")
    wh.wait_until(page, "() => window.trame.state.get('joint_names').includes('tool')")
    assert wh.get_state(page, "error_message") == ""
