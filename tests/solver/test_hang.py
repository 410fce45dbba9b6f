"""Free limbs hang (issue 50, ``fabrik3d.solver.hang``): a limb of ``Posing.hang`` without a target hangs
under gravity beside the body, as the body under it leans or turns; off, the free arm rides the chest
(up to overhead on a low reach, as before)."""

from __future__ import annotations

import dataclasses
import json
import math
import pickle

import numpy as np
import pytest
from helpers import naturalness as nt
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik3d
from fabrik3d import Posing, Target, presets
from fabrik3d import rotations as rot
from fabrik3d.io.scene import Scene, parse_scene
from fabrik3d.solver import fk
from fabrik3d.solver.hang import hang_free_limbs, limb_of

SK = presets.get("humanoid")
DOWN = np.array([0.0, -1.0, 0.0])
TOES = {t: SK.rest_positions[SK.index(t)] for t in ("toe_l", "toe_r")}


def arm_down_deg(sk: fabrik3d.Skeleton, p: np.ndarray, side: str) -> tuple[float, float]:
    """The angles (degrees) of the upper arm and the forearm of ``side`` from straight down."""
    out = []
    for a, b in ((f"shoulder_{side}", f"elbow_{side}"), (f"elbow_{side}", f"wrist_{side}")):
        v = p[sk.index(b)] - p[sk.index(a)]
        out.append(math.degrees(math.acos(float(np.clip(v @ DOWN / np.linalg.norm(v), -1.0, 1.0)))))
    return out[0], out[1]


def hand_below_shoulder(sk: fabrik3d.Skeleton, p: np.ndarray, side: str) -> float:
    """How far the hand of ``side`` is below its shoulder, in arm lengths."""
    length = nt.arm_length(sk, side)
    return float(p[sk.index(f"shoulder_{side}")][1] - p[sk.index(f"hand_{side}")][1]) / length


def low_reaches(seed: int, count: int) -> list[np.ndarray]:
    """Points low in front (0.1-0.55 m high, 0.25-0.55 m before the toes), left of the midline a little."""
    rng = np.random.default_rng(seed)
    toe = float(SK.rest_positions[SK.index("toe_l")][2])
    return [
        np.array([rng.uniform(-0.05, 0.3), rng.uniform(0.1, 0.55), toe + rng.uniform(0.25, 0.55)]) for _ in range(count)
    ]


def drag_to(sk: fabrik3d.Skeleton, target: np.ndarray, frames: int = 20, **kw) -> fabrik3d.SolveResult:
    """The left hand dragged from where it hangs to ``target`` in ``frames`` warm frames, toes pinned."""
    r = fabrik3d.solve(sk, dict(TOES), **kw)
    start = r.positions[sk.index("hand_l")]
    for k in range(1, frames + 1):
        goal = start + (target - start) * k / frames
        r = fabrik3d.solve(sk, {**TOES, "hand_l": goal}, positions=r.positions, rotations=r.rotations, **kw)
    return r


def test_the_body_opens_on_a_relaxed_stance() -> None:
    """No target: both arms hang, a little bent at the elbow, out from the hips; nothing else moves."""
    r = fabrik3d.solve(SK, {})
    for side in "lr":
        upper, fore = arm_down_deg(SK, r.positions, side)
        assert upper < 10.0 and 10.0 < fore < 25.0
        assert hand_below_shoulder(SK, r.positions, side) > 0.9
        hand, hip = r.positions[SK.index(f"hand_{side}")], r.positions[SK.index(f"hip_{side}")]
        assert abs(hand[0]) > abs(hip[0]) + 0.1  # (out from the hip, not through it)
    others = [j for j in range(len(SK)) if not nt.is_arm(SK, j)]
    np.testing.assert_allclose(r.positions[others], SK.rest_positions[others], atol=1e-12)


@pytest.mark.parametrize("how", ["cold", "drag", "balance"])
def test_a_free_arm_hangs_on_low_reaches(how: str) -> None:
    """The issue's bar: toes pinned, the left hand placed (cold) or dragged (20 warm frames from rest)
    low in front: the right arm within 30 deg of straight down (p95), its hand at least 0.4 of the
    arm below its shoulder; the same with ``balance=True, floor=0.0``."""
    angles, below, errors = [], [], []
    kw = {"balance": True, "floor": 0.0} if how == "balance" else {}
    for target in low_reaches(50, 12 if how == "cold" else 6):
        if how == "cold":
            r = fabrik3d.solve(SK, {**TOES, "hand_l": target})
        else:
            r = drag_to(SK, target, **kw)
        angles += arm_down_deg(SK, r.positions, "r")
        below.append(hand_below_shoulder(SK, r.positions, "r"))
        errors.append(r.errors["hand_l"])
    assert np.percentile(angles, 95) <= 30.0, angles
    assert min(below) >= 0.4, below
    assert np.median(errors) <= 0.01


def test_without_the_rule_the_free_arm_rides_the_chest_overhead() -> None:
    """The rule off (``Posing.hang`` empty): the free arm keeps its T from the rest pose, carried by the
    bending torso to above its shoulder: the issue's complaint, shown to be this rule's doing."""
    off = nt.followed(SK)
    worst = 0.0
    for target in low_reaches(50, 6):
        r = fabrik3d.solve(off, {**TOES, "hand_l": target})
        worst = max(worst, max(arm_down_deg(off, r.positions, "r")))
        on = fabrik3d.solve(SK, {**TOES, "hand_l": target})
        assert max(arm_down_deg(SK, on.positions, "r")) <= 30.0
    assert worst > 90.0


def test_a_hanging_arm_turns_with_the_body_and_stays_down() -> None:
    """The whole body turned 90 deg about the vertical (the root's target): the arms hang as before,
    their elbows' bend turned with the body; tilted 40 deg forward: still straight down."""
    rest = fabrik3d.solve(SK, {})
    pelvis = SK.rest_positions[SK.root]
    quarter = (0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4))
    frame = tuple(SK.rest_frames[SK.root].tolist())  # (the root target's orientation: the root's world frame)
    turned = fabrik3d.solve(SK, {}, root_target=Target(pelvis, rot.mul(quarter, frame)))
    turn = fabrik3d.rotations.quat_to_matrix(np.array(quarter))
    np.testing.assert_allclose(
        turned.positions - pelvis, (rest.positions - pelvis) @ turn.T, atol=1e-9
    )  # (the relaxed stance, turned)
    tilt = (math.sin(math.radians(20.0)), 0.0, 0.0, math.cos(math.radians(20.0)))
    leaning = fabrik3d.solve(SK, {}, root_target=Target(pelvis, rot.mul(tilt, frame)))
    for side in "lr":
        assert arm_down_deg(SK, leaning.positions, side)[0] < 10.0


def test_a_targeted_or_poled_limb_does_not_hang_and_a_posed_one_follows() -> None:
    rest = fabrik3d.solve(SK, {})
    pinned = fabrik3d.pin({}, SK, SK.rest_positions, "hand_r")  # (pinned at its T: it stays there)
    r = fabrik3d.solve(SK, pinned)
    assert np.linalg.norm(r.positions[SK.index("hand_r")] - SK.rest_positions[SK.index("hand_r")]) <= 1e-3
    assert arm_down_deg(SK, r.positions, "l")[0] < 10.0  # (the other one hangs)
    # a limb the user posed (an FK turn): without it in ``hang`` it keeps its turn from its parent
    p, q = fk.turn_joint(
        SK, rest.positions, rest.rotations, "shoulder_r", fabrik3d.rotations.from_euler_xyz((0, 0, 60))
    )
    posed = dataclasses.replace(SK.posing, hang=frozenset({"hand_l"}))
    r = fabrik3d.solve(
        SK, {"hand_l": rest.positions[SK.index("hand_l")] + [0.0, 0.1, 0.1]}, positions=p, rotations=q, posing=posed
    )
    for name in ("shoulder_r", "elbow_r", "wrist_r"):
        np.testing.assert_allclose(fk.joint_turn(SK, r.rotations, name), fk.joint_turn(SK, q, name), atol=1e-9)


def test_hang_free_limbs_hangs_the_arms_of_a_pose_turned_by_hand() -> None:
    rest = fabrik3d.solve(SK, {})
    p, q = rest.positions, rest.rotations
    for spine in ("spine_01", "spine_02", "spine_03"):  # (bent forward, as far as each joint goes)
        p, q = fk.turn_joint(SK, p, q, spine, rot.from_euler_xyz((50, 0, 0)))
    assert arm_down_deg(SK, p, "r")[0] > 40.0  # (FK carried the arm with the spine)
    hp, _ = hang_free_limbs(SK, p, q)
    assert arm_down_deg(SK, hp, "r")[0] < 10.0 and arm_down_deg(SK, hp, "l")[0] < 10.0
    kept = [j for j in range(len(SK)) if not nt.is_arm(SK, j)]
    np.testing.assert_array_equal(hp[kept], p[kept])
    bp, _ = hang_free_limbs(SK, p, q, busy=["hand_r"])  # (a targeted hand does not hang)
    assert arm_down_deg(SK, bp, "r")[0] > 40.0 and arm_down_deg(SK, bp, "l")[0] < 10.0
    with pytest.raises(ValueError, match="positions"):
        hang_free_limbs(SK, p[:3], q)


@settings(max_examples=25, deadline=None)
@given(st.floats(-60, 60), st.floats(-45, 45), st.floats(-40, 40))
def test_a_hanging_arm_stays_within_its_limits_and_below_its_shoulder(pitch: float, roll: float, yaw: float) -> None:
    """However the pelvis is turned (within a standing body's range), the hung arm is within its joints'
    limits and its hand below its shoulder; no NaN."""
    q = rot.mul(rot.from_euler_xyz((pitch, yaw, roll)), tuple(SK.rest_frames[SK.root].tolist()))
    r = fabrik3d.solve(SK, {}, root_target=Target(SK.rest_positions[SK.root], q))
    assert np.isfinite(r.positions).all() and np.isfinite(r.rotations).all()
    for name in ("shoulder_l", "elbow_l", "wrist_l", "shoulder_r", "elbow_r", "wrist_r"):
        turn = fk.joint_turn(SK, r.rotations, name)
        clamped = fk.limited_turn(SK, name, turn)
        assert abs(abs(float(turn @ clamped)) - 1.0) < 1e-9, name
    for side in "lr":
        assert hand_below_shoulder(SK, r.positions, side) > 0.3


def test_which_limbs_can_hang() -> None:
    """An arm hangs from its stiff clavicle; a leg (no stiff joint above its free ones) and the head
    (stiff itself, a neck) do not."""
    names = {SK.names[j] for j in limb_of(SK, SK.posing, SK.index("hand_l"))}
    assert names == {"shoulder_l", "elbow_l", "wrist_l"}
    assert limb_of(SK, SK.posing, SK.index("toe_l")) == []
    assert limb_of(SK, Posing(), SK.index("hand_l")) == []  # (no stiff trunk: nothing to hang from)


def test_posing_hang_is_checked_kept_in_scene_files_and_pickled() -> None:
    assert SK.posing.hang == frozenset({"hand_l", "hand_r"})
    data = Scene(SK).to_dict()
    assert data["posing"]["hang"] == ["hand_l", "hand_r"]
    assert parse_scene(json.dumps(data)).skeleton.posing == SK.posing
    assert pickle.loads(pickle.dumps(SK.posing)) == SK.posing
    for bad, message in (
        ("hand_l", "hang: expected a list of effector names"),
        ([1], "hang: expected effector names"),
        ({"hand_l": 1}, "hang: expected a list"),
    ):
        with pytest.raises(ValueError, match=message):
            Posing(hang=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"posing\.hang: 'elbow_l' is not an end effector"):
        SK.with_posing(Posing(hang=frozenset({"elbow_l"})))
    broken = Scene(SK).to_dict()
    broken["posing"]["hang"] = "hand_l"
    with pytest.raises(ValueError, match="hang: expected a list of effector names"):
        parse_scene(json.dumps(broken))
    none = Scene(nt.followed(SK)).to_dict()
    assert "hang" not in none["posing"]  # (a file without it: nothing hangs, as before)
