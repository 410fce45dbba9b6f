"""The web UI's joint-limits switch keeps a scene's explicit rest frames (issue 13's bug)."""

from __future__ import annotations

import json
import math

import numpy as np
from fabrik3d_web.document.controller import Controller

import fabrik3d
from fabrik3d import Cone, Skeleton
from fabrik3d.io.scene import Scene, parse_scene

CHAIN = (["a", "b", "c"], [-1, 0, 1], [[0, 0, 0], [0, 1, 0], [0, 2, 0]])
TURN = [0.0, math.sin(0.3), 0.0, math.cos(0.3)]  # 0.6 rad about +Y: +Y stays along the bone


def test_the_web_limits_switch_keeps_a_scene_s_rest_frames() -> None:
    """A scene whose joint sets ``rest_frame``: the web controller with limits off solves the same
    rotations as the skeleton without its limits, rest frames kept."""
    data = Scene(Skeleton(*CHAIN, constraints={"b": Cone(40)}, rest_frames={"a": TURN})).to_dict()
    scene = parse_scene(json.dumps(data), "scene")
    assert scene.skeleton.explicit_rest_frames == ("a",)
    c = Controller(scene=scene)
    c.set_limits(False)
    c.set_targets({"c": [0.5, 1.6, 0.2]})
    want = fabrik3d.solve(scene.skeleton.without_constraints(), {"c": [0.5, 1.6, 0.2]})
    np.testing.assert_allclose(c.result.rotations, want.rotations, atol=1e-12)
