"""Proportions of the humanoid (issue 31, item 2): ``presets.humanoid(height, head=..., ...)``, the
default body bit for bit, natural posing on a 1.5 m and a 2.0 m body (the bars of
tests/solver/test_naturalness.py's first two tests), ``presets.repose`` keeping the joint turns,
one clear error per bad value, and scene files keeping the proportions."""

from __future__ import annotations

import hashlib
import json
import math
import re

import numpy as np
import pytest
from helpers import naturalness as nt

import fabrik3d
from fabrik3d import presets
from fabrik3d import rotations as rot
from fabrik3d.io.scene import Scene, load_scene, save_scene
from fabrik3d.model.proportions import Proportions
from fabrik3d.solver.fk import joint_turn, turn_joint

# The default humanoid's rest positions and JSON form before proportions existed (sha256); the JSON
# form since its wrists hold (posing.stiffness wrist_l, wrist_r: presets.WRIST_STIFFNESS, issue 29).
REST_SHA = "99f37c3604ff2d58d34ddfa504d3d71fbe60f6725709e1c2271ae95b2f152f89"
# (its arms hang: issue 50; its fingers' flexion axes converge toward the palm, so a fist closes: issue 51)
JSON_SHA = "ad6bfe3799d359f5b6ad5f67d4d03e1bf16c1b4aec56ea4f5632bec44b7b6926"
FRAMES_SHA = "7bb147a949daad603bae4514888306fd1cba33f34326919a8b81607e6097a014"
ODD = {"head": 1.3, "shoulder_width": 1.2, "hip_width": 0.8, "arm": 1.15, "leg": 0.9, "torso": 1.1, "hand": 1.3}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_default_humanoid_is_the_same_bit_for_bit() -> None:
    sk = presets.get("humanoid")
    assert _sha(sk.rest_positions.tobytes()) == REST_SHA
    assert _sha(sk.rest_frames.tobytes()) == FRAMES_SHA
    assert _sha(json.dumps(sk.to_dict(), sort_keys=True).encode()) == JSON_SHA
    for same in (presets.humanoid(), presets.humanoid(1.75, arm=1.0, hand=1)):
        assert same.to_dict() == sk.to_dict()
        assert same.rest_positions.tobytes() == sk.rest_positions.tobytes()
    assert presets.proportions_of(sk) is None and "proportions" not in Scene(sk).to_dict()


@pytest.mark.parametrize("kw", [{"height": 1.5}, {"height": 2.0}, {"height": 0.5, **ODD}, {"height": 2.5, "leg": 2.0}])
def test_a_proportioned_body_keeps_its_joints_bone_directions_limits_and_posing(kw: dict) -> None:
    base, sk = presets.get("humanoid"), presets.humanoid(**kw)
    assert sk.names == base.names and np.array_equal(sk.parents, base.parents) and sk.riders == base.riders
    assert sk.rest_positions[sk.index("head")][1] == pytest.approx(kw["height"], abs=1e-12)
    if len(kw) == 1:  # the default body, scaled
        assert np.allclose(sk.rest_positions, base.rest_positions * kw["height"] / 1.75, atol=1e-12)
    for j in range(1, len(sk)):
        p = sk.parents[j]
        u, v = sk.rest_positions[j] - sk.rest_positions[p], base.rest_positions[j] - base.rest_positions[p]
        assert np.allclose(u / np.linalg.norm(u), v / np.linalg.norm(v), atol=1e-12), sk.names[j]
    assert np.allclose(sk.rest_frames, base.rest_frames, atol=1e-12)
    limits, base_limits = (
        json.dumps({k: [c.to_dict() for c in v] for k, v in s.constraints.items()}) for s in (sk, base)
    )
    # the same limits; the finger axes, computed from the rest pose, to rounding
    assert _words(limits) == _words(base_limits) and np.allclose(_numbers(limits), _numbers(base_limits), atol=1e-12)
    assert sk.posing.to_dict() == base.posing.to_dict()
    assert presets.proportions_of(sk) == Proportions(**kw)


def test_a_factor_scales_its_segment() -> None:
    base, long_arms = presets.get("humanoid"), presets.humanoid(arm=1.2)
    ratio = long_arms.bone_lengths[1:] / base.bone_lengths[1:]
    s = ratio[long_arms.index("spine_01") - 1]  # the whole body, scaled back to 1.75 m
    assert ratio[long_arms.index("elbow_l") - 1] == pytest.approx(1.2 * s) and s == pytest.approx(1.0)
    wide = presets.humanoid(shoulder_width=1.5)
    w = wide.rest_positions[wide.index("shoulder_l")][0] - wide.rest_positions[wide.index("shoulder_r")][0]
    assert w == pytest.approx(1.5 * 0.36, rel=1e-9)


def _words(text: str) -> str:
    return re.sub(r"-?\d[\d.e+-]*", "#", text)


def _numbers(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d[\d.e+-]*", text)]


# -- natural posing on a 1.5 m and a 2.0 m body ------------------------------------------------
@pytest.fixture(scope="module", params=[1.5, 2.0], ids=["1.5m", "2.0m"])
def body(request) -> tuple[fabrik3d.Skeleton, list]:
    sk = presets.humanoid(request.param)
    return sk, nt.arm_reaches(sk, seed=11, count=80)


def test_arm_reaches_move_the_arm_not_the_body(body) -> None:
    sk, reaches = body
    cold = nt.cold_reaches(nt.natural, sk, reaches).summary()
    assert cold["converged %"] >= 98.0
    assert cold["chest deg p50"] <= 2.0 and cold["chest deg p95"] <= 5.0
    assert cold["head cm p50"] <= 1.0 and cold["head cm p95"] <= 3.0
    assert cold["free hand cm p95"] <= 1.0
    assert cold["bad elbows %"] <= 2.0


def test_chained_warm_drags_keep_the_body_and_the_placed_hand(body) -> None:
    sk, reaches = body
    tally, ratios = nt.chained_drags(nt.natural, sk, reaches[:40])
    warm = tally.summary()
    assert warm["converged %"] >= 98.0
    assert warm["chest deg p50"] <= 2.0 and warm["chest deg p95"] <= 5.0
    assert warm["head cm p50"] <= 1.0 and warm["head cm p95"] <= 3.0
    assert warm["free hand cm p95"] <= 1.0
    assert warm["bad elbows %"] <= 2.0
    assert max(ratios) <= 3.0


def test_the_measures_scale_with_the_body() -> None:
    sk = presets.humanoid(2.0)
    assert nt.body_scale(sk) == pytest.approx(2.0 / 1.75) and nt.body_scale(nt.humanoid()) == 1.0


# -- repose: the same joint turns on another body ----------------------------------------------
def _angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    c = rot.mul(rot.conj(tuple(a)), tuple(b))  # type: ignore[arg-type]
    return math.degrees(2.0 * math.atan2(math.sqrt(c[0] ** 2 + c[1] ** 2 + c[2] ** 2), abs(c[3])))


def _pose(sk: fabrik3d.Skeleton) -> tuple[np.ndarray, np.ndarray]:
    r = fabrik3d.solve(
        sk, {"hand_l": (0.3, 1.3, 0.4), "hand_r": (-0.5, 1.0, 0.2), "toe_r": (-0.15, 0.3, 0.3)}, root_target=(0, 0.8, 0)
    )
    p, q = turn_joint(sk, r.positions, r.rotations, "index_01_l", rot.from_euler_xyz((40.0, 0.0, 10.0)))
    return turn_joint(sk, p, q, "head", rot.from_euler_xyz((0.0, 30.0, 0.0)))


@pytest.mark.parametrize("kw", [{"height": 1.5}, {"height": 2.0}, {"height": 1.6, **ODD}])
def test_repose_keeps_every_joint_turn(kw: dict) -> None:
    old, new = presets.get("humanoid"), presets.humanoid(**kw)
    p, q = _pose(old)
    p2, q2 = presets.repose(old, new, p, q)
    worst = max(_angle_deg(joint_turn(old, q, n), joint_turn(new, q2, n)) for n in old.names)
    assert worst <= 1e-6
    bones = np.linalg.norm(p2[1:] - p2[new.parents[1:]], axis=1)
    assert np.allclose(bones, new.bone_lengths[1:], atol=1e-12)
    # the root keeps its offset from rest, scaled by the pelvis's height above the lowest joint (the toes)
    drop = (old.rest_positions[0] - p[0]) * _pelvis_height(new) / _pelvis_height(old)
    assert np.allclose(new.rest_positions[0] - p2[0], drop, atol=1e-12)
    back_p, back_q = presets.repose(new, old, p2, q2)
    assert np.allclose(back_p, p, atol=1e-9) and np.allclose(back_q, q, atol=1e-9)


def test_repose_key_carries_a_keys_pose_targets_root_and_poles() -> None:
    from fabrik3d.model.key_poses import KeyPose
    from fabrik3d.model.keys import Key

    old, new = presets.get("humanoid"), presets.humanoid(1.5)
    p, q = _pose(old)
    turned = rot.from_euler_xyz((0.0, 0.0, 30.0))
    hand, toe = p[old.index("hand_l")], p[old.index("toe_r")]
    key = Key(12, {"hand_l": fabrik3d.Target(hand, turned, 0.5), "toe_r": toe}, fabrik3d.Target(p[0]),
              {"hand_l": p[old.index("elbow_l")] + [0.0, 0.0, -0.3]}, KeyPose(p, q))  # fmt: skip
    carried = presets.repose_key(old, new, key, key.pose)
    p2, q2 = presets.repose(old, new, p, q)
    assert carried.frame == 12
    np.testing.assert_array_equal(carried.pose.positions, p2)
    np.testing.assert_array_equal(carried.pose.rotations, q2)
    for name in ("hand_l", "toe_r"):  # (where the joints went)
        np.testing.assert_array_equal(carried.targets[name].position, p2[new.index(name)])
    assert carried.targets["hand_l"].orientation == pytest.approx(turned) and carried.targets["hand_l"].weight == 0.5
    assert carried.targets["toe_r"].orientation is None
    np.testing.assert_array_equal(carried.root_target.position, p2[0])
    np.testing.assert_allclose(carried.poles["hand_l"] - key.poles["hand_l"], p2[0] - p[0], atol=1e-12)
    # a key without a pose of its own is carried from the pose given (the one baked at its frame)
    bare = presets.repose_key(old, new, Key(3, {"hand_l": hand}), KeyPose(p, q))
    assert bare.pose is None and np.allclose(bare.targets["hand_l"].position, p2[new.index("hand_l")])


def _pelvis_height(sk: fabrik3d.Skeleton) -> float:
    return float(sk.rest_positions[0][1] - sk.rest_positions[:, 1].min())


def test_repose_refuses_another_skeleton() -> None:
    sk = presets.get("humanoid")
    r = fabrik3d.solve(sk, {})
    with pytest.raises(ValueError, match=r"^new: expected a skeleton of the same joints"):
        presets.repose(sk, presets.get("robot_arm"), r.positions, r.rotations)
    with pytest.raises(ValueError, match=r"^positions: expected shape"):
        presets.repose(sk, presets.humanoid(1.5), r.positions[:3], r.rotations)


# -- bad values ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"height": 0}, r"^height: expected a height in metres from 0\.5 to 2\.5, got 0$"),
        ({"height": -1.7}, r"^height: .*got -1\.7$"),
        ({"height": float("nan")}, r"^height: .*got nan$"),
        ({"height": 100}, r"^height: .*got 100$"),
        ({"height": 10**400}, r"^height: .*got 1000"),
        ({"height": "1.8"}, r"^height: .*got '1\.8'$"),
        ({"height": None}, r"^height: .*got None$"),
        ({"arm": 0.0}, r"^arm: expected a factor from 0\.5 to 2\.0 \(1\.0: the default body's\), got 0\.0$"),
        ({"leg": float("inf")}, r"^leg: .*got inf$"),
        ({"head": True}, r"^head: .*got True$"),
        ({"hand": [1.0]}, r"^hand: .*got \[1\.0\]$"),
        ({"torso": -1}, r"^torso: "),
        ({"shoulder_width": 2.01}, r"^shoulder_width: "),
        ({"hip_width": 0.49}, r"^hip_width: "),
    ],
)
def test_a_bad_value_is_one_error_naming_the_argument(kw: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        presets.humanoid(**kw)


def test_the_bounds_themselves_build() -> None:
    for kw in ({"height": 0.5}, {"height": 2.5}, dict.fromkeys(ODD, 0.5), dict.fromkeys(ODD, 2.0)):
        presets.humanoid(**kw)


# -- scene files --------------------------------------------------------------------------------
def test_a_scene_keeps_the_proportions(tmp_path) -> None:
    sk = presets.humanoid(1.6, **ODD)
    save_scene(Scene(sk, targets={"hand_l": [0.3, 1.1, 0.3]}), tmp_path / "s.json")
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["version"] == 3 and data["proportions"] == {"height": 1.6, **ODD}
    back = load_scene(tmp_path / "s.json")
    assert back.proportions == Proportions(1.6, **ODD) == presets.proportions_of(back.skeleton)
    assert back.skeleton.rest_positions.tobytes() == sk.rest_positions.tobytes()
    assert back.to_dict() == Scene(sk, targets={"hand_l": [0.3, 1.1, 0.3]}).to_dict()
    # a reader without proportions reads the same body from the joints
    data.pop("proportions")
    plain = Scene.from_dict(data)
    assert plain.proportions is None and plain.skeleton.to_dict() == sk.to_dict()


def test_older_scenes_load_without_proportions() -> None:
    data = Scene(presets.get("humanoid")).to_dict()
    for version in (1, 2, 3):
        old = {k: v for k, v in data.items() if version > 1 or k != "posing"} | {"version": version}
        assert Scene.from_dict(old).proportions is None


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(proportions={"arm": 1.3}), r"^proportions: joint '\w+' is .* m from where"),
        (lambda d: d.update(proportions={"arm": "long"}), r"^proportions\.arm: expected a factor"),
        (lambda d: d.update(proportions={"height": 3.0}), r"^proportions\.height: expected a height"),
        (lambda d: d.update(proportions={"legs": 1.0}), r"^proportions\.legs: unknown proportion; they are height,"),
        (lambda d: d.update(proportions=[1.5]), r"^proportions: expected an object"),
        (lambda d: d["joints"][-1].update(name="tip"), r"^proportions: the joints are not the humanoid's"),
    ],
)
def test_scene_proportions_that_do_not_fit_are_one_error(edit, message: str) -> None:
    data = Scene(presets.humanoid(1.5)).to_dict()
    edit(data)
    with pytest.raises(ValueError, match=message):
        Scene.from_dict(data)


def test_a_scene_given_proportions_checks_them() -> None:
    sk = presets.humanoid(1.5)
    assert Scene(sk, proportions=Proportions(1.5)).proportions == Proportions(1.5)
    with pytest.raises(ValueError, match=r"^proportions: joint '\w+' is .* m from where"):
        Scene(presets.get("humanoid"), proportions=Proportions(1.5))
    with pytest.raises(ValueError, match=r"^proportions: expected a Proportions, got dict$"):
        Scene(sk, proportions={"height": 1.5})  # type: ignore[arg-type]
