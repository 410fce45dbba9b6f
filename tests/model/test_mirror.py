"""Mirroring a pose: side names of the common rigs, the reflection, and the goals it makes."""

from __future__ import annotations

import numpy as np
import pytest

import fabrik3d
from fabrik3d import Skeleton, presets
from fabrik3d.model.mirror import mirror_goals, mirror_name, mirror_pairs, mirror_positions, reflect, side_of


@pytest.mark.parametrize(
    ("name", "side", "other"),
    [
        ("hand_l", "left", "hand_r"),
        ("upper_arm.L", "left", "upper_arm.R"),
        ("thigh_R", "right", "thigh_L"),
        ("foot.r", "right", "foot.l"),
        ("mixamorig:LeftHand", "left", "mixamorig:RightHand"),
        ("rightUpperLeg", "right", "leftUpperLeg"),
        ("LEFT_FOOT", "left", "RIGHT_FOOT"),
        ("spine_01", None, None),
        ("pelvis", None, None),
        ("tentacle_3_8", None, None),
    ],
)
def test_sides_are_read_from_the_names_of_the_common_rigs(name: str, side, other) -> None:
    assert side_of(name) == side
    assert mirror_name(name) == other
    if other is not None:
        assert mirror_name(other) == name


def test_the_humanoid_mirrors_into_itself() -> None:
    h = presets.get("humanoid")
    pairs = mirror_pairs(h)
    assert pairs["hand_l"] == "hand_r" and pairs["knee_r"] == "knee_l" and "spine_01" not in pairs
    # the rest pose is symmetric: each joint's reflection is its counterpart's rest position
    rest = h.rest_positions
    for a, b in pairs.items():
        np.testing.assert_allclose(reflect(h, rest[h.index(a)]), rest[h.index(b)], atol=1e-12)


def test_mirrored_goals_pose_the_other_side_as_the_mirror_image() -> None:
    h = presets.get("humanoid")
    start = fabrik3d.solve(h, {"hand_l": [0.4, 1.25, 0.3]})
    pole = np.array([0.6, 0.9, -0.2])
    targets, poles = mirror_goals(h, {"hand_l": [0.4, 1.25, 0.3]}, start.positions, {"hand_l": pole})
    np.testing.assert_allclose(targets["hand_r"], [-0.4, 1.25, 0.3])
    np.testing.assert_allclose(poles["hand_r"], [-0.6, 0.9, -0.2])
    assert "toe_r" not in targets  # (a free one's counterpart stays free: issue 32, item 6)
    freed, _ = mirror_goals(h, {"hand_l": [0.4, 1.25, 0.3], "toe_r": [-0.1, 0.02, 0.2]}, start.positions)
    assert "toe_r" not in freed  # (even where it had a target of its own: the mirror image is free)
    assert "head" not in targets  # (the middle line keeps its own)
    r = fabrik3d.solve(h, targets, positions=mirror_positions(h, start.positions), poles=poles)
    assert r.converged
    # (the effectors within the tolerance, 1 mm; the joints between them within a few)
    for name in ("shoulder", "elbow", "wrist", "knee", "ankle"):
        np.testing.assert_allclose(
            r.positions[h.index(f"{name}_r")], reflect(h, r.positions[h.index(f"{name}_l")]), atol=5e-3
        )
    # right to left gives the left side the right one's goals
    back, _ = mirror_goals(h, {"hand_r": [-0.2, 1.0, 0.3]}, start.positions, source="right")
    np.testing.assert_allclose(back["hand_l"], [0.2, 1.0, 0.3])


def test_a_solve_from_the_mirrored_positions_gives_the_exact_mirror_image() -> None:
    h = presets.get("humanoid")
    start = fabrik3d.solve(h, {"hand_l": [0.45, 1.43, -0.01]})  # (a warm history on the left only)
    targets, _ = mirror_goals(h, {"hand_l": [0.45, 1.43, -0.01]}, start.positions)
    seed = mirror_positions(h, start.positions)
    for name in ("shoulder_r", "elbow_r", "wrist_r", "hand_r"):
        np.testing.assert_allclose(seed[h.index(name)], reflect(h, start.positions[h.index(mirror_name(name))]))
    for name in ("spine_01", "head", "elbow_l"):  # (the middle line and the source side stay)
        assert np.array_equal(seed[h.index(name)], start.positions[h.index(name)])
    r = fabrik3d.solve(h, targets, positions=seed)
    for name in ("elbow", "wrist", "hand"):
        np.testing.assert_allclose(
            r.positions[h.index(f"{name}_r")], reflect(h, r.positions[h.index(f"{name}_l")]), atol=1e-3
        )


def test_bad_mirrors_are_refused() -> None:
    h = presets.get("humanoid")
    with pytest.raises(ValueError, match="source must be 'left' or 'right'"):
        mirror_goals(h, {}, h.rest_positions, source="up")
    chain = Skeleton(["a", "b", "c"], [-1, 0, 1], [[0, 0, 0], [0, 1, 0], [0, 2, 0]])
    with pytest.raises(ValueError, match="no end effector of this skeleton has a counterpart"):
        mirror_goals(chain, {}, chain.rest_positions)
