"""Fingers on the humanoid preset (riders) and hand shapes (issue 30, items 1 and 3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.cli import assert_one_line_error, run
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik3d
from fabrik3d.io.gltf_import import _local_matrix, _parse_container, node_parents
from fabrik3d.model import mirror
from fabrik3d.model.presets import FINGERS
from fabrik3d.solver.fk import joint_turn, limited_turn, turn_joint
from fabrik3d.solver.hands import SHAPES, palm_center, shape_hand

BODY = fabrik3d.presets.get("humanoid")
REST = fabrik3d.solve(BODY, {})
SIDES = ("l", "r")


def finger_names(side: str) -> list[str]:
    return [f"{f}_{k}_{side}" for f in FINGERS for k in ("01", "02", "03", "end")]


def bend_deg(skeleton: fabrik3d.Skeleton, rotations: np.ndarray, name: str) -> float:
    q = joint_turn(skeleton, rotations, name)
    return math.degrees(2.0 * math.acos(min(1.0, abs(float(q[3])))))


def outside_limits_deg(skeleton: fabrik3d.Skeleton, rotations: np.ndarray, names: list[str]) -> float:
    worst = 0.0
    for n in names:
        t = joint_turn(skeleton, rotations, n)
        lim = limited_turn(skeleton, n, t)
        worst = max(worst, math.degrees(2.0 * math.acos(min(1.0, abs(float(np.dot(t, lim)))))))
    return worst


def test_the_preset_has_five_fingers_a_hand_that_stays_an_effector() -> None:
    for side in SIDES:
        for name in finger_names(side):
            assert name in BODY and name in BODY.riders
    assert BODY.end_effectors == ("head", "hand_l", "hand_r", "toe_l", "toe_r")
    assert len(BODY.core) == 25 and BODY.core.names == tuple(n for n in BODY.names if n not in BODY.riders)
    back = fabrik3d.Skeleton.from_dict(BODY.to_dict())
    assert back.riders == BODY.riders and back.end_effectors == BODY.end_effectors


@settings(max_examples=25, deadline=None)
@given(
    st.tuples(*[st.floats(-0.5, 0.5)] * 3),
    st.sampled_from(SHAPES),
    st.sampled_from(["hand_l", "hand_r", "head", "toe_l"]),
)
def test_a_solve_moves_no_finger_relative_to_its_hand(offset, shape, effector) -> None:
    """Fingers ride: through any solve given the pose's frames, each finger joint keeps its place and
    rotation in the frame of the wrist it hangs from. (From positions alone a finger's turn about its
    bone is not known: the swing rule's frames hold; the web and the notebook pass the frames.)"""
    p, q = shape_hand(BODY, REST.positions, REST.rotations, "l", shape)
    target = p[BODY.index(effector)] + np.array(offset)
    r = fabrik3d.solve(BODY, {effector: target}, positions=p, rotations=q)
    assert np.all(np.isfinite(r.positions)) and np.all(np.isfinite(r.rotations))
    for side in SIDES:
        wrist = BODY.index(f"wrist_{side}")
        for name in finger_names(side):
            j = BODY.index(name)
            before = fabrik3d.rotations.rotate_inv(tuple(q[wrist]), tuple(p[j] - p[wrist]))
            after = fabrik3d.rotations.rotate_inv(tuple(r.rotations[wrist]), tuple(r.positions[j] - r.positions[wrist]))
            assert np.allclose(before, after, atol=1e-9), name
        assert outside_limits_deg(BODY, r.rotations, finger_names(side)[:-1]) < 1e-4


def test_a_hand_target_solves_as_the_core_does() -> None:
    """The core's joints solve exactly as a skeleton without fingers."""
    target = {"hand_l": [0.35, 1.15, 0.4], "toe_r": [-0.15, 0.1, 0.2]}
    whole, core = fabrik3d.solve(BODY, target), fabrik3d.solve(BODY.core, target)
    np.testing.assert_array_equal(whole.positions[BODY.core_joints], core.positions)
    np.testing.assert_array_equal(whole.rotations[BODY.core_joints], core.rotations)
    batch = fabrik3d.solve_batch(BODY, {k: np.array([v, v]) for k, v in target.items()})
    np.testing.assert_allclose(batch.positions[0], whole.positions, atol=1e-12)


@pytest.mark.parametrize("side", SIDES)
def test_shapes_meet_the_bars(side: str) -> None:
    fingers = finger_names(side)
    joints = [n for n in fingers if not n.endswith("_end_" + side)]
    above = [j for j in range(len(BODY)) if BODY.names[j] not in fingers]
    start = fabrik3d.solve(BODY, {f"hand_{side}": [0.4 if side == "l" else -0.4, 1.2, 0.35]})
    for shape in SHAPES:
        p, q = shape_hand(BODY, start.positions, start.rotations, side, shape)
        assert np.abs(p[above] - start.positions[above]).max() <= 1e-9, shape  # (the hand and above stay)
        assert np.abs(q[above] - start.rotations[above]).max() <= 1e-9, shape
        assert outside_limits_deg(BODY, q, joints) < 1e-4, shape
        centre = palm_center(BODY, p, side)
        tips = {f: float(np.linalg.norm(p[BODY.index(f"{f}_end_{side}")] - centre)) for f in FINGERS}
        if shape == "fist":
            assert max(tips[f] for f in ("index", "middle", "ring", "pinky")) <= 0.03, tips
        if shape == "pinch":  # (the thumb's tip on the index's)
            assert np.linalg.norm(p[BODY.index(f"thumb_end_{side}")] - p[BODY.index(f"index_end_{side}")]) <= 0.005
        if shape == "open":
            assert max(bend_deg(BODY, q, n) for n in joints if not n.startswith("thumb")) <= 5.0
        if shape == "point":
            assert max(bend_deg(BODY, q, f"index_{k}_{side}") for k in ("01", "02", "03")) <= 5.0
            fist = shape_hand(BODY, start.positions, start.rotations, side, "fist")[1]
            for f in ("middle", "ring", "pinky"):
                for k in ("01", "02", "03"):
                    n = f"{f}_{k}_{side}"
                    assert abs(bend_deg(BODY, q, n) - bend_deg(BODY, fist, n)) <= 1e-6


def test_amount_blends_and_curls_and_spread_override() -> None:
    _, q = shape_hand(BODY, REST.positions, REST.rotations, "l", "fist", amount=0.5)
    half = bend_deg(BODY, q, "index_02_l")
    full = bend_deg(BODY, shape_hand(BODY, REST.positions, REST.rotations, "l", "fist")[1], "index_02_l")
    assert half == pytest.approx(0.5 * full, abs=0.5)
    q2 = shape_hand(BODY, REST.positions, REST.rotations, "l", "open", curls={"ring": 1.0})[1]
    assert bend_deg(BODY, q2, "ring_02_l") > 90.0 and bend_deg(BODY, q2, "index_02_l") < 1e-4
    q3 = shape_hand(BODY, REST.positions, REST.rotations, "l", "open", spread=10.0)[1]
    assert bend_deg(BODY, q3, "index_01_l") == pytest.approx(10.0, abs=1e-6)


def test_a_shape_mirrored_onto_the_other_hand_is_its_mirror_image() -> None:
    for shape in SHAPES:
        left = shape_hand(BODY, REST.positions, REST.rotations, "l", shape)[0]
        right = shape_hand(BODY, REST.positions, REST.rotations, "r", shape)[0]
        pairs = mirror.mirror_pairs(BODY)
        for name in finger_names("l"):
            a = mirror.reflect(BODY, left[BODY.index(name)])
            assert np.linalg.norm(a - right[BODY.index(pairs[name])]) <= 1e-3, (shape, name)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((REST.positions, REST.rotations, "x", "fist"), "^side: expected 'l' or 'r'"),
        ((REST.positions, REST.rotations, "l", "claw"), "^shape: expected one of open, relaxed"),
        ((REST.positions, REST.rotations, "l", "fist", 1.5), "^amount: expected a number from 0 to 1"),
        ((REST.positions, REST.rotations, "l", "fist", math.nan), "^amount: expected a finite number"),
    ],
)
def test_bad_shape_arguments_fail_clearly(args, message) -> None:
    with pytest.raises(ValueError, match=message):
        shape_hand(BODY, *args)
    with pytest.raises(ValueError, match="no fingers"):
        shape_hand(BODY.core, REST.positions[BODY.core_joints], REST.rotations[BODY.core_joints], "l", "fist")


def test_fk_turns_a_finger_within_its_limits_and_keys_keep_it() -> None:
    p, q = turn_joint(
        BODY, REST.positions, REST.rotations, "index_02_l", fabrik3d.rotations.axis_angle((0, 0, 1), -2.5)
    )
    assert outside_limits_deg(BODY, q, ["index_02_l"]) < 1e-4
    assert np.abs(p[BODY.index("index_01_l")] - REST.positions[BODY.index("index_01_l")]).max() == 0.0


def test_the_exported_file_carries_the_finger_rotations(tmp_path) -> None:
    """A fist exported by fabrik3d export: every finger joint's node, read back from the file's node
    transforms, sits within 1 mm of where the library put it."""
    out = tmp_path / "fist.glb"
    proc = run("export", "humanoid", "--hand", "l=fist", "--hand", "r=point", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    p, q = shape_hand(BODY, REST.positions, REST.rotations, "l", "fist")
    p, _ = shape_hand(BODY, p, q, "r", "point")
    doc, _ = _parse_container(out.read_bytes())
    parents = node_parents(doc)
    world: dict[int, np.ndarray] = {}
    for k in range(len(doc["nodes"])):
        chain = [k]
        while parents[chain[-1]] >= 0:
            chain.append(parents[chain[-1]])
        m = np.eye(4)
        for i in reversed(chain):
            m = m @ _local_matrix(doc["nodes"][i])
        world[k] = m
    at = {doc["nodes"][k].get("name"): world[k][:3, 3] for k in world}
    for side in SIDES:
        for name in finger_names(side):
            assert np.linalg.norm(at[name] - p[BODY.index(name)]) <= 1e-3, name
    bad = run("export", "humanoid", "--hand", "l=claw", "-o", str(out))
    assert_one_line_error(bad, "--hand 'l=claw': shape: expected one of")
