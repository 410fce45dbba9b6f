"""Explicit rest frames (a scene may give them): validation, round trip and use by the solver."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import fabrik3d
from fabrik3d import Cone, Skeleton
from fabrik3d.io.scene import Scene, parse_scene
from fabrik3d.solver.rig import pose_frames

CHAIN = (["a", "b", "c"], [-1, 0, 1], [[0, 0, 0], [0, 1, 0], [0, 2, 0]])
TURN = [0.0, math.sin(0.3), 0.0, math.cos(0.3)]  # 0.6 rad about +Y: +Y stays along the bone


def test_explicit_rest_frames_replace_the_default_and_round_trip() -> None:
    s = Skeleton(*CHAIN, rest_frames={"a": TURN})
    np.testing.assert_allclose(s.rest_frames[0], TURN)
    np.testing.assert_allclose(s.rest_frames[1], [0, 0, 0, 1])  # the others keep the default rule
    again = Skeleton.from_dict(s.to_dict())
    np.testing.assert_array_equal(again.rest_frames, s.rest_frames)
    assert "rest_frame" not in Skeleton(*CHAIN).to_dict()["joints"][0]


def test_a_rest_frame_is_carried_through_solves() -> None:
    s = Skeleton(*CHAIN, constraints={"a": Cone(60)}, rest_frames={"a": TURN})
    r = fabrik3d.solve(s, {"c": [0.6, 1.6, 0.3]})
    assert r.converged
    # at rest the root's frame is the given one; posed, it is that frame swung with its bone
    np.testing.assert_allclose(np.abs(pose_frames(s, s.rest_positions)[0] @ TURN), 1.0, atol=1e-12)
    y = r.rotations[0]
    x, yq, z, w = y
    plus_y = np.array([2 * (x * yq - z * w), 1 - 2 * (x * x + z * z), 2 * (yq * z + x * w)])
    bone = (r.positions[1] - r.positions[0]) / np.linalg.norm(r.positions[1] - r.positions[0])
    np.testing.assert_allclose(plus_y, bone, atol=1e-9)


@pytest.mark.parametrize(
    ("frames", "message"),
    [
        ({"a": [math.sin(0.4), 0, 0, math.cos(0.4)]}, "joint 'a': rest_frame's +Y must point along the rest bone"),
        ({"a": [1, 2, 3, 4]}, "joint 'a': rest_frame: not a unit quaternion"),
        ({"a": [float("nan"), 0, 0, 1]}, "joint 'a': rest_frame: expected four finite numbers"),
        ({"zz": TURN}, "rest_frames: unknown joint 'zz'"),
    ],
)
def test_bad_rest_frames_are_named(frames: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("+", r"\+")):
        Skeleton(*CHAIN, rest_frames=frames)


def test_scene_files_carry_rest_frames_and_name_bad_ones() -> None:
    scene = Scene(Skeleton(*CHAIN, rest_frames={"b": TURN}))
    text = json.dumps(scene.to_dict())
    np.testing.assert_array_equal(parse_scene(text).skeleton.rest_frames, scene.skeleton.rest_frames)
    bad = scene.to_dict()
    bad["joints"][1]["rest_frame"] = [0, 0, 0, 2]
    with pytest.raises(ValueError, match=r"joints\[1\]\.rest_frame: not a unit quaternion"):
        parse_scene(json.dumps(bad), "scene.json")


def test_without_constraints_keeps_the_rest_frames() -> None:
    """Turning limits off (the web UI's switch) keeps explicit rest frames, so the solved rotations
    are this skeleton's frames; rebuilding from joints and rest pose alone loses them."""
    s = Skeleton(*CHAIN, constraints={"b": Cone(40)}, rest_frames={"a": TURN})
    free = s.without_constraints()
    assert free.constraints == {} and free.explicit_rest_frames == ("a",)
    np.testing.assert_array_equal(free.rest_frames, s.rest_frames)
    target = {"c": [0.5, 1.6, 0.2]}
    got = fabrik3d.solve(free, target).rotations
    want = fabrik3d.solve(Skeleton(*CHAIN, rest_frames={"a": TURN}), target).rotations
    np.testing.assert_array_equal(got, want)
    lost = fabrik3d.solve(Skeleton(*CHAIN), target).rotations
    assert np.abs(got - lost).max() > 0.1  # the rest frame's turn shows in the solved rotations
    plain = Skeleton(*CHAIN)
    assert plain.without_constraints() is plain
