"""Figures solved together (issue 52): contacts kept through solves of either figure, held props following
their joint, and only the figures a change touches solved."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import fabrik3d
from fabrik3d.io.scene import Scene, scene_or_preset
from fabrik3d.io.stage_pose import StagePose, prop_transform, solve_stage
from fabrik3d.model.placement import quat_conj, quat_mul
from fabrik3d.solver import together
from fabrik3d.stage import Contact, Figure, Hold, Placement, Prop, Stage, Transform

HANDSHAKE_MM = 5.0  # the bar: hands within 5 mm while either figure's pelvis is dragged 20 cm


def humanoid() -> Scene:
    return scene_or_preset("humanoid")


def handshake(locked: bool = False) -> Stage:
    return Stage(
        [Figure("Ada", humanoid()), Figure("Ben", humanoid(), Placement([-0.35, 0.0, 0.8], 180), locked=locked)],
        contacts=[Contact("Ada", "hand_r", "Ben", "hand_r")],
    )


def world_point(pose: StagePose, figure: int, joint: str) -> np.ndarray:
    positions, _ = pose.world(figure)
    return positions[pose.stage.figures[figure].scene.skeleton.index(joint)]


def with_root(stage: Stage, figure: int, shift: np.ndarray) -> Stage:
    """``stage`` with figure ``figure``'s pelvis dragged by ``shift`` (its own coordinates)."""
    f = stage.figures[figure]
    root = f.scene.skeleton.rest_positions[f.scene.skeleton.root] + shift
    figures = list(stage.figures)
    figures[figure] = dataclasses.replace(f, scene=dataclasses.replace(f.scene, root_target=root))
    return dataclasses.replace(stage, figures=figures)


def angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    return math.degrees(2 * math.acos(min(1.0, abs(float(np.dot(a, b))))))


def test_a_handshake_closes_where_the_hands_meet_halfway() -> None:
    stage = handshake()
    pose = solve_stage(stage)
    gap = np.linalg.norm(world_point(pose, 0, "hand_r") - world_point(pose, 1, "hand_r"))
    assert gap * 1e3 <= 2.0
    for i in (0, 1):  # both arms reach out: neither hand hangs by its hip
        hand, shoulder = world_point(pose, i, "hand_r"), world_point(pose, i, "shoulder_r")
        assert hand[1] > shoulder[1] - 0.6


@pytest.mark.parametrize("figure", [0, 1])
@pytest.mark.parametrize("direction", [(0, 0, -1), (1, 0, 0), (-1, 0, 0), (0, -1, 0), (0.6, -0.3, 0.74)])
def test_dragging_either_pelvis_20_cm_keeps_the_handshake_within_5_mm(figure: int, direction: tuple) -> None:
    stage = handshake()
    start = solve_stage(stage)
    before = world_point(start, figure, "pelvis")
    shift = 0.2 * np.asarray(direction, float) / np.linalg.norm(direction)
    pose = solve_stage(with_root(stage, figure, shift), start.poses, changed=[stage.figures[figure].name])
    assert np.linalg.norm(world_point(pose, figure, "pelvis") - before) == pytest.approx(0.2, abs=1e-6)
    gap = np.linalg.norm(world_point(pose, 0, "hand_r") - world_point(pose, 1, "hand_r"))
    assert gap * 1e3 <= HANDSHAKE_MM, f"the hands are {gap * 1e3:.1f} mm apart"
    assert max(pose.gaps.values()) * 1e3 <= HANDSHAKE_MM
    for i in (0, 1):
        assert np.all(np.isfinite(pose.poses[i].positions))


def test_a_locked_figure_is_not_pulled_and_the_other_hand_goes_to_it() -> None:
    stage = handshake(locked=True)
    alone = solve_stage(Stage([stage.figures[1]]))
    start = solve_stage(stage)
    np.testing.assert_allclose(start.poses[1].positions, alone.poses[0].positions, atol=1e-9)
    pose = solve_stage(with_root(stage, 0, np.array([0.0, -0.05, 0.15])), start.poses, changed=["Ada"])
    np.testing.assert_allclose(pose.poses[1].positions, start.poses[1].positions, atol=1e-9)
    assert np.linalg.norm(world_point(pose, 0, "hand_r") - world_point(pose, 1, "hand_r")) * 1e3 <= 1.5


def test_a_hand_on_a_shoulder_follows_the_shoulder_and_does_not_pull_it() -> None:
    stage = Stage(
        [Figure("Ada", humanoid()), Figure("Ben", humanoid(), Placement([0.0, 0.0, 0.55], 180))],
        contacts=[Contact("Ada", "hand_l", "Ben", "shoulder_r", offset=(0.0, 0.04, 0.0))],
    )
    start = solve_stage(stage)
    moved = with_root(stage, 1, np.array([0.1, -0.1, 0.0]))
    pose = solve_stage(moved, start.poses, changed=["Ben"])
    ben_alone = solve_stage(Stage([moved.figures[1]]), [start.poses[1]])
    np.testing.assert_allclose(pose.poses[1].positions, ben_alone.poses[0].positions, atol=1e-6)
    positions, frames = pose.world(1)
    j = stage.figures[1].scene.skeleton.index("shoulder_r")
    anchor = positions[j] + fabrik3d.model.placement.rotate(frames[j], [0.0, 0.04, 0.0])
    assert np.linalg.norm(world_point(pose, 0, "hand_l") - anchor) * 1e3 <= 1.5


def test_a_hand_on_a_free_prop_stays_on_its_point() -> None:
    wall = Prop("wall", "wall", transform=Transform([0.0, 1.2, 0.45], [0.0, 0.0, 0.0, 1.0]))
    stage = Stage(
        [Figure("Ada", humanoid())], [wall], [Contact("Ada", "hand_l", on_prop="wall", offset=(0.3, 0.1, -0.05))]
    )
    pose = solve_stage(stage)
    point = wall.transform.apply(np.array([0.3, 0.1, -0.05]))
    assert np.linalg.norm(world_point(pose, 0, "hand_l") - point) <= 1e-3 + 1e-9


def test_a_held_prop_turns_with_its_hand() -> None:
    stick = Prop(
        "stick",
        "cylinder",
        transform=Transform([0.0, 0.06, 0.02], [0.0, 0.0, 0.38, 0.92]),
        parent=Hold("Ada", "hand_r"),
    )
    scene = humanoid()
    stage = Stage([Figure("Ada", scene, Placement([0.3, 0.0, -0.2], 90))], [stick])
    j = scene.skeleton.index("hand_r")
    before = solve_stage(stage)
    turn = np.array([math.sin(math.radians(22.5)), 0.0, 0.0, math.cos(math.radians(22.5))])  # 45 deg about x
    hand = before.poses[0].positions[j]
    goal = fabrik3d.Target(hand, quat_mul(turn, before.poses[0].rotations[j]))

    def turned(figure: Figure, extra: dict, start: object) -> fabrik3d.SolveResult:
        return fabrik3d.solve(figure.scene.skeleton, {"hand_r": goal}, positions=before.poses[0].positions)

    after = solve_stage(stage, before.poses, solve=turned)
    hand_turn = angle_deg(after.poses[0].rotations[j], before.poses[0].rotations[j])
    assert hand_turn == pytest.approx(45.0, abs=3.0)
    a, b = prop_transform(stage, before.poses, "stick"), prop_transform(stage, after.poses, "stick")
    assert angle_deg(a.rotation, b.rotation) == pytest.approx(hand_turn, abs=1.0)
    # the grip is the same: the prop relative to the hand's world frame is what was attached, within 1 deg and 1 mm
    _, frames = after.world(0)
    relative = quat_mul(quat_conj(frames[j]), b.rotation)
    assert angle_deg(relative, stick.transform.rotation) <= 1.0
    assert (
        np.linalg.norm(
            b.position - (after.world(0)[0][j] + fabrik3d.model.placement.rotate(frames[j], [0.0, 0.06, 0.02]))
        )
        <= 1e-3
    )


def test_only_the_figures_a_change_touches_are_solved() -> None:
    calls: list[str] = []

    def counted(figure: Figure, extra: dict, start: fabrik3d.SolveResult | None) -> fabrik3d.SolveResult:
        calls.append(figure.name)
        return figure.scene.solve(None if start is None else start.positions, extra)

    stage = Stage(
        [
            *handshake().figures,
            Figure("Cy", humanoid(), Placement([2.0, 0.0, 0.0])),
            Figure("Di", humanoid(), Placement([-2.0, 0.0, 0.0])),
        ],
        contacts=handshake().contacts,
    )
    start = solve_stage(stage, solve=counted)
    calls.clear()
    pose = solve_stage(stage, start.poses, changed=["Cy"], solve=counted)
    assert set(calls) == {"Cy"}
    assert pose.poses[0] is start.poses[0] and pose.poses[3] is start.poses[3]
    calls.clear()
    solve_stage(stage, start.poses, changed=["Ben"], solve=counted)
    assert set(calls) == {"Ada", "Ben"}
    assert together.groups(4, together_links(stage)) == [[0, 1], [2], [3]]


def together_links(stage: Stage) -> list[together.Link]:
    from fabrik3d.io.stage_pose import links

    return links(stage)


def test_figures_too_far_apart_stay_as_near_as_they_reach_and_report_the_gap() -> None:
    stage = Stage(
        [Figure("Ada", humanoid()), Figure("Ben", humanoid(), Placement([0.0, 0.0, 4.0], 180))],
        contacts=[Contact("Ada", "hand_r", "Ben", "hand_r")],
    )
    pose = solve_stage(stage)
    gap = pose.gaps[0]
    assert 2.0 < gap < 4.0
    assert gap == pytest.approx(np.linalg.norm(world_point(pose, 0, "hand_r") - world_point(pose, 1, "hand_r")))
    for p in pose.poses:
        assert np.all(np.isfinite(p.positions)) and np.all(np.isfinite(p.rotations))
