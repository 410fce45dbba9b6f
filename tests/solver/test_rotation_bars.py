"""Issue 29's library bars that the solve meets as it stands: a hand given an orientation within the
wrist's limits ends on it and keeps it through a drag of its position; the pelvis (the root's
orientation target) turned and tilted with both toes planted keeps the toes, the knees over the toes
and the targeted hands."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fabrik3d
from fabrik3d import rotations as rot

BODY = fabrik3d.presets.get("humanoid")
REST = fabrik3d.solve(BODY, {})


def angle_deg(a, b) -> float:
    return math.degrees(rot.angle_between(tuple(a), tuple(b)))


@pytest.mark.parametrize("seed", [0, 1])
def test_a_hand_given_an_orientation_ends_on_it_and_keeps_it_through_a_drag(seed: int) -> None:
    rng = np.random.default_rng(seed)
    hand = BODY.index("hand_l")
    shoulder = REST.positions[BODY.index("shoulder_l")]
    for _ in range(6):
        d = rng.normal(0, 1, 3)
        d[2], d[0] = abs(d[2]) + 0.2, abs(d[0])  # in front of and beside the body
        target = shoulder + rng.uniform(0.5, 0.8) * 0.63 * d / np.linalg.norm(d)
        start = fabrik3d.solve(BODY, {"hand_l": target})
        # the hand bent 30 deg from where the plain reach left it, about an axis across its bone
        now = tuple(start.rotations[hand])
        bone = np.array(rot.y_axis(now))
        axis = rng.normal(0, 1, 3)
        axis -= axis @ bone * bone
        wanted = rot.mul(rot.axis_angle(tuple(axis / np.linalg.norm(axis)), math.radians(30.0)), now)
        r = fabrik3d.solve(BODY, {"hand_l": fabrik3d.Target(target, wanted)}, positions=start.positions)
        assert np.linalg.norm(r.positions[hand] - target) <= 1e-3
        assert angle_deg(r.rotations[hand], wanted) <= 1.0
        step = np.array([-0.01, 0.0, 0.0])  # 20 cm across, 1 cm a frame
        for k in range(1, 21):
            r = fabrik3d.solve(BODY, {"hand_l": fabrik3d.Target(target + k * step, wanted)}, positions=r.positions)
            assert angle_deg(r.rotations[hand], wanted) <= 1.0
            assert np.linalg.norm(r.positions[hand] - (target + k * step)) <= 1e-3


@pytest.mark.parametrize(("yaw", "tilt"), [(30.0, 15.0), (-30.0, 15.0), (30.0, 0.0), (0.0, 15.0)])
def test_the_pelvis_turned_and_tilted_keeps_planted_toes_knees_and_hands(yaw: float, tilt: float) -> None:
    p0 = REST.positions
    toes = {n: p0[BODY.index(n)] for n in ("toe_l", "toe_r")}
    hands = {
        "hand_l": p0[BODY.index("shoulder_l")] + np.array([0.1, -0.3, 0.3]),
        "hand_r": p0[BODY.index("shoulder_r")] + np.array([-0.1, -0.3, 0.3]),
    }
    turn = rot.mul(
        rot.axis_angle((0.0, 1.0, 0.0), math.radians(yaw)), rot.axis_angle((1.0, 0.0, 0.0), math.radians(tilt))
    )
    wanted = rot.mul(turn, tuple(REST.rotations[BODY.root]))
    root = fabrik3d.Target(p0[BODY.root] + np.array([0.0, -0.03, 0.0]), wanted)
    r = fabrik3d.solve(BODY, {**toes, **hands}, root_target=root)
    assert max(r.errors.values()) <= 1e-3  # toes planted, hands on target
    assert angle_deg(r.rotations[BODY.root], wanted) <= 0.5
    p = r.positions
    for side in "lr":
        knee, ankle, toe = (p[BODY.index(f"{j}_{side}")] for j in ("knee", "ankle", "toe"))
        forward, out = (toe - ankle) * [1, 0, 1], (knee - ankle) * [1, 0, 1]
        assert forward @ out > 0.0, side  # the knee points over the toes, not back


TORSO = ("pelvis", "spine_01", "spine_02", "spine_03", "chest", "neck", "head", "shoulder_r", "hand_r")


@pytest.mark.parametrize("axis", [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (0, 1, 1)])
def test_a_hand_turned_past_what_its_arm_allows_turns_no_torso(axis) -> None:
    """An R-turn of 120 or 150 deg at the hand's place: the arm turns the hand toward it as far as it
    can (nearer than it started), and the torso, the head and the other arm stay where they were
    (before, the spine bent up to 21 cm and the head moved up to 50 cm to serve the orientation)."""
    hand = BODY.index("hand_l")
    start = fabrik3d.solve(BODY, {"hand_l": (0.45, 1.1, 0.35)})
    now = tuple(start.rotations[hand])
    for degrees in (120.0, 150.0):
        wanted = rot.mul(rot.axis_angle(rot.unit(axis), math.radians(degrees)), now)
        target = fabrik3d.Target(start.positions[hand], wanted)
        r = fabrik3d.solve(BODY, {"hand_l": target}, positions=start.positions, rotations=start.rotations)
        assert np.linalg.norm(r.positions[hand] - start.positions[hand]) <= 1e-3
        assert angle_deg(r.rotations[hand], wanted) < degrees - 5.0
        still = [BODY.index(n) for n in TORSO]
        assert np.abs(r.positions[still] - start.positions[still]).max() <= 1e-9, degrees
