"""A character's fingers in the web UI's hand panel (issue 30, items 2 and 3): a rig whose finger bones
map onto the finger roles gets the panel, and its shapes move only that hand's fingers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from fabrik3d_web.document.controller import Controller
from helpers.character_asset import write_character

from fabrik3d.solver.hands import finger_joints


def test_a_characters_hand_takes_shapes_curls_and_the_mirror(tmp_path: Path) -> None:
    c = Controller()
    c.load_character_file(write_character(tmp_path, "hero", "mixamo", fingers=True))
    assert c.hand_sides() == ["l", "r"]
    sk = c.scene.skeleton
    left = {j for js in finger_joints(sk, "l").values() for j in js}
    before = c.result.positions.copy()
    c.shape_hand("l", "fist")
    moved = np.flatnonzero(np.abs(c.result.positions - before).max(axis=1) > 1e-9)
    assert moved.size and all(j in left or int(sk.parents[j]) in left for j in moved)
    c.curl_finger("l", "index", 0.0)
    c.mirror_hand("l")
    curls = c.hand_state("r")["hand_curls"]
    assert curls["index"] < 0.1 and curls["middle"] > 0.9
    assert c.undo()  # (one step each)
