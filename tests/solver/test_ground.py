"""Centre of mass, support area, balance and the floor (issue 31, items 3 and 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik3d
from fabrik3d.model.mass import center_of_mass, distance_inside, support_area

BODY = fabrik3d.presets.get("humanoid")
REST = BODY.rest_positions
TOES = {t: REST[BODY.index(t)] for t in ("toe_l", "toe_r")}
PELVIS = REST[BODY.index("pelvis")]


def inside(positions: np.ndarray, margin: float = 0.0) -> bool:
    poly = support_area(BODY, positions, 0.0)
    return distance_inside(poly, center_of_mass(BODY, positions)[[0, 2]]) >= margin - 1e-9


def test_the_rest_humanoids_centre_of_mass_is_where_the_tables_put_it() -> None:
    """de Leva's segments give a standing adult's centre at about 0.55-0.57 of the height; the rest
    pose holds its arms out (a T), which lifts it a little: within 3 cm of 0.57."""
    height = float(REST[:, 1].max())  # (the head's top; the ground is at 0)
    com = center_of_mass(BODY, REST)
    assert abs(com[1] - 0.57 * height) <= 0.03
    assert abs(com[0]) < 1e-9  # (left and right alike)
    octopus = fabrik3d.presets.get("octopus")
    p = octopus.rest_positions
    bones = [j for j in range(len(octopus)) if octopus.parents[j] >= 0]
    lengths = np.array([octopus.bone_lengths[j] for j in bones])
    middles = np.array([(p[j] + p[octopus.parents[j]]) / 2 for j in bones])
    np.testing.assert_allclose(center_of_mass(octopus, p), lengths @ middles / lengths.sum(), atol=1e-12)


def test_the_support_area_is_the_soles_on_the_ground() -> None:
    both = support_area(BODY, REST, 0.0)
    assert len(both) >= 4 and inside(REST, 0.05)
    width = both[:, 0].max() - both[:, 0].min()
    assert 0.2 < width < 0.35  # (both feet, heel to toe tip)
    lifted = fabrik3d.solve(BODY, {"toe_l": TOES["toe_l"] + [0.0, 0.2, 0.1], "toe_r": TOES["toe_r"]})
    one = support_area(BODY, lifted.positions, 0.0)
    assert one[:, 0].max() < 0.0  # (only the right foot, on the -X side)
    up = fabrik3d.solve(BODY, {}, root_target=PELVIS + np.array([0.0, 0.5, 0.0]))
    assert support_area(BODY, up.positions, 0.0).shape == (0, 2)
    with pytest.raises(ValueError, match="positions: expected shape"):
        center_of_mass(BODY, REST[:3])


def test_a_crouch_with_balance_keeps_the_centre_over_the_feet() -> None:
    """Both toes planted, the pelvis lowered 10-45 cm warm frame by frame: with balance on, the
    centre's ground point lies inside the support area (1 cm margin) in >= 95% of frames, the toes
    stay within 1 mm, no knee flips (each bends forward of its hip-to-ankle line)."""
    r, frames, held = None, 0, 0
    for depth in np.linspace(0.10, 0.45, 36):
        warm = {} if r is None else {"positions": r.positions, "rotations": r.rotations}
        r = fabrik3d.solve(
            BODY, TOES, root_target=PELVIS - [0.0, depth, 0.0], balance=True, floor=0.0, tolerance=5e-4, **warm
        )
        frames += 1
        held += inside(r.positions, 0.01)
        for t, p in TOES.items():
            assert np.linalg.norm(r.positions[BODY.index(t)] - p) <= 1e-3, (depth, t)
        for s in ("l", "r"):
            hip, knee, ankle = (r.positions[BODY.index(f"{j}_{s}")] for j in ("hip", "knee", "ankle"))
            line = (ankle - hip) / np.linalg.norm(ankle - hip)
            off = (knee - hip) - line * float((knee - hip) @ line)
            assert off[2] > 0.0, (depth, s)  # (the knee in front)
    assert held >= 0.95 * frames


def test_reaches_beyond_the_arm_with_balance_move_the_pelvis_back() -> None:
    """Reaches 0.65-1.0 m in front: the nearer ones the body keeps well over the feet alone; the
    farther ones bring the centre of mass near the toes' edge or past it without balance, and balance
    moves the pelvis back (issue 50: it keeps the centre ``BALANCE_MARGIN`` inside)."""
    rng = np.random.default_rng(7)
    solves, held, back = 0, 0, 0
    for _ in range(24):
        target = np.array([rng.uniform(-0.2, 0.4), rng.uniform(0.8, 1.5), rng.uniform(0.65, 1.0)])
        plain = fabrik3d.solve(BODY, {**TOES, "hand_l": target}, floor=0.0)
        r = fabrik3d.solve(BODY, {**TOES, "hand_l": target}, balance=True, floor=0.0)
        solves += 1
        held += inside(r.positions)
        front = support_area(BODY, plain.positions, 0.0)[:, 1].max()
        if center_of_mass(BODY, plain.positions)[2] > front - 0.03:  # (at the edge: the pelvis goes back)
            back += 1
            assert r.positions[BODY.root, 2] < plain.positions[BODY.root, 2] - 0.005
    assert held >= 0.95 * solves and back >= 3


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(["hand_l", "hand_r", "toe_l", "head"]),
    st.tuples(st.floats(-0.6, 0.6), st.floats(-0.3, 0.6), st.floats(-0.4, 0.6)),
    st.floats(0.0, 0.5),
)
def test_no_joint_goes_below_the_floor(effector: str, target, drop: float) -> None:
    r = fabrik3d.solve(BODY, {effector: np.array(target)}, root_target=PELVIS - [0.0, drop, 0.0], floor=0.0)
    assert r.positions[:, 1].min() >= -1e-3  # (fingers included)
    assert np.all(np.isfinite(r.positions))


def test_a_foot_that_meets_the_floor_lies_on_it() -> None:
    r = fabrik3d.solve(BODY, {"toe_l": TOES["toe_l"] - [0.0, 0.2, 0.0], "toe_r": TOES["toe_r"]}, floor=0.0)
    assert r.positions[BODY.index("toe_l"), 1] == pytest.approx(TOES["toe_l"][1], abs=1e-3)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"floor": math.nan}, "^floor: expected a finite height"),
        ({"floor": "0"}, "^floor"),
        ({"balance": 1}, "^balance"),
    ],
)
def test_bad_floor_and_balance_fail_clearly(kw, message) -> None:
    with pytest.raises(ValueError, match=message):
        fabrik3d.solve(BODY, TOES, **kw)
    for bad, said in (({"nope": [0, 1, 0]}, "not an end effector"), ([1, 2], "expected a mapping")):
        with pytest.raises(ValueError, match=said):  # (the solve's own messages, with a floor too)
            fabrik3d.solve(BODY, bad, floor=0.0, balance=True)


def test_scenes_keep_the_floor_and_balance_and_the_cli_uses_them(tmp_path) -> None:
    import json

    from helpers.cli import assert_one_line_error, run

    from fabrik3d.io.scene import Scene, load_scene, parse_scene, save_scene, scene_or_preset

    assert scene_or_preset("humanoid").floor == pytest.approx(0.0)  # (the humanoid stands on a floor)
    scene = Scene(BODY, {"toe_l": [0.09, -0.3, 0.13]}, floor=0.0, balance=True)
    save_scene(scene, tmp_path / "s.json")
    back = load_scene(tmp_path / "s.json")
    assert back.floor == 0.0 and back.balance is True
    r = back.solve()
    assert r.positions[:, 1].min() >= -1e-3 and not r.converged  # (the floor holds the toe up)
    assert r.errors["toe_l"] == pytest.approx(np.linalg.norm(r.positions[BODY.index("toe_l")] - [0.09, -0.3, 0.13]))
    data = json.loads((tmp_path / "s.json").read_text())
    data["solver"]["floor"] = "low"
    with pytest.raises(ValueError, match=r"solver\.floor: expected a height or null"):
        parse_scene(json.dumps(data), "s.json")
    errors = {}
    for floor in ("0", "none"):
        proc = run("solve", str(tmp_path / "s.json"), "--floor", floor)
        assert proc.returncode == 0, proc.stderr
        errors[floor] = float(proc.stdout.split("toe_l: error ")[1].split()[0])
    assert errors["0"] == pytest.approx(0.32, abs=0.01) and errors["none"] < 0.3  # (without it, the leg reaches down)
    assert_one_line_error(run("solve", "humanoid", "--floor", "abc"), "--floor 'abc': expected a height or none")
