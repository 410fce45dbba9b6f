"""Takes: the fabrik3d.take JSON format, its round trip and its errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import fabrik3d
from fabrik3d.io.take import Take, load_take, parse_take, save_take, take_to_json
from fabrik3d.model import presets

FRAMES = 10


def _recorded(name: str = "robot_arm") -> tuple[fabrik3d.Skeleton, list[fabrik3d.SolveResult], np.ndarray]:
    """Warm-started solves of a preset along a circle: a recording as the web UI makes it."""
    skeleton = presets.get(name)
    effector = skeleton.end_effectors[0]
    start = skeleton.rest_positions[skeleton.index(effector)]
    results, positions = [], None
    for k in range(FRAMES):
        a = 2.0 * math.pi * k / FRAMES
        target = start + 0.2 * np.array([math.cos(a) - 1.0, math.sin(a), 0.5 * math.sin(a)])
        result = fabrik3d.solve(skeleton, {effector: target}, positions=positions, max_iterations=20)
        positions = result.positions
        results.append(result)
    return skeleton, results, np.arange(FRAMES) / 30.0


def test_a_take_of_solve_results_holds_their_poses() -> None:
    skeleton, results, times = _recorded()
    take = Take.from_frames(skeleton, results, times)
    assert take.positions.shape == (FRAMES, len(skeleton), 3)
    assert take.rotations.shape == (FRAMES, len(skeleton), 4)
    assert np.array_equal(take.times, times)
    for k, r in enumerate(results):
        assert np.array_equal(take.positions[k], r.positions)
        assert np.allclose(take.rotations[k], r.rotations, atol=1e-15)
    assert np.ptp(take.positions, axis=0).max() > 0.1  # the joints really move
    pairs = Take.from_frames(skeleton, [(r.positions, r.rotations) for r in results], times)
    assert np.array_equal(pairs.positions, take.positions) and np.array_equal(pairs.rotations, take.rotations)


@pytest.mark.parametrize("name", presets.names())
def test_save_then_load_gives_the_same_take_bit_for_bit(tmp_path: Path, name: str) -> None:
    skeleton, results, times = _recorded(name)
    take = Take.from_frames(skeleton, results, times)
    save_take(take, tmp_path / "take.json")
    back = load_take(tmp_path / "take.json")
    assert np.array_equal(back.times, take.times)
    assert np.array_equal(back.positions, take.positions)
    assert np.array_equal(back.rotations, take.rotations)
    assert back.skeleton.to_dict() == skeleton.to_dict()  # names, hierarchy, rest pose and joint limits
    assert [p.name for p in tmp_path.iterdir()] == ["take.json"]


def test_the_json_form() -> None:
    skeleton, results, times = _recorded()
    text = take_to_json(Take.from_frames(skeleton, results, times))
    data = json.loads(text)
    assert data["format"] == "fabrik3d.take" and data["version"] == 1
    assert data["skeleton"] == skeleton.to_dict()
    assert data["times"] == times.tolist()
    assert len(data["frames"]) == FRAMES
    assert data["frames"][4] == {
        "positions": results[4].positions.tolist(),
        "rotations": data["frames"][4]["rotations"],
    }
    assert np.allclose(data["frames"][4]["rotations"], results[4].rotations, atol=1e-15)
    assert len(text.splitlines()) == FRAMES + 4  # one frame per line
    assert parse_take(text).times.tolist() == times.tolist()


def _damaged(change) -> str:
    skeleton, results, times = _recorded()
    data = json.loads(take_to_json(Take.from_frames(skeleton, results, times)))
    change(data)
    return json.dumps(data)


def _scale_frame(data: dict, k: int, s: float) -> None:
    data["frames"][k]["positions"] = (np.array(data["frames"][k]["positions"]) * s).tolist()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="fabrik3d.scene"), "format: expected 'fabrik3d.take'"),
        (lambda d: d.update(version=2), "version: expected 1"),
        (lambda d: d.pop("skeleton"), "skeleton: expected an object"),
        (lambda d: d["skeleton"]["joints"][2].update(parent="nope"), r"skeleton\.joints\[2\]\.parent: unknown joint"),
        (lambda d: d.pop("frames"), "frames: expected a list"),
        (lambda d: d["frames"].__setitem__(0, [1, 2]), r"frames\[0\]: expected an object"),
        (lambda d: d["frames"][3]["positions"].pop(), r"frames\[3\]\.positions: expected 7 joints, got 6"),
        (lambda d: d["frames"][3]["rotations"].append([0, 0, 0, 1]), r"frames\[3\]\.rotations: expected 7 joints"),
        (lambda d: d["frames"][1]["positions"][2].append(0.0), r"frames\[1\]\.positions: .*shape \(7, 3\)"),
        (lambda d: d["frames"][1]["positions"][2].__setitem__(0, "1.5"), r"frames\[1\]\.positions: expected an array"),
        (lambda d: d["frames"][1]["positions"][2].__setitem__(0, None), r"frames\[1\]\.positions: expected an array"),
        (
            lambda d: d["frames"][2]["rotations"].__setitem__(1, [0, 0, 0, 0]),
            r"frames\[2\]\.rotations\[1\] \(shoulder\)",
        ),
        (lambda d: d["frames"][6]["positions"][4].__setitem__(1, 1e12), r"frames\[6\]\.positions\[4\] \(wrist_2\)"),
        (lambda d: _scale_frame(d, 5, 1.1), r"frames\[5\]\.positions\[1\] \(shoulder\): bone from 'base'"),
        (lambda d: d["times"].pop(), "frames: 10 frames but 9 times"),
        (lambda d: d["times"].__setitem__(4, d["times"][3]), r"times\[4\]: must be greater than times\[3\]"),
        (lambda d: d["times"].__setitem__(0, -0.5), r"times\[0\]: must be finite and at least 0"),
        (lambda d: d.update(times="fast"), r"times: expected an array of numbers of shape \(m,\)"),
        (lambda d: d.update(times=[], frames=[]), "times: expected at least one frame"),
    ],
)
def test_bad_takes_name_the_place(change, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        parse_take(_damaged(change), "recording.json")
    assert str(info.value).startswith("recording.json: ")


def test_non_finite_numbers_in_the_json_are_refused() -> None:
    text = _damaged(lambda d: d["frames"][7]["positions"][3].__setitem__(2, float("nan")))
    assert "NaN" in text  # Python's json writes the token, and reads it back as nan
    with pytest.raises(ValueError, match=r"frames\[7\]\.positions\[3\] \(wrist_1\): coordinates must be finite"):
        parse_take(text)
    with pytest.raises(ValueError, match=r"times\[2\]: must be finite"):
        parse_take(_damaged(lambda d: d["times"].__setitem__(2, float("inf"))))


@pytest.mark.parametrize(
    ("text", "message"),
    [("{not json", "not valid JSON"), ("[1, 2]", "expected a JSON object"), ("[" * 100000, "nested too deeply")],
)
def test_garbage_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_take(text)


def test_bad_arrays_given_directly_name_the_problem() -> None:
    skeleton, results, times = _recorded()
    positions = np.array([r.positions for r in results])
    rotations = np.array([r.rotations for r in results])
    with pytest.raises(ValueError, match=r"positions: expected shape \(10, 7, 3\), got \(9, 7, 3\)"):
        Take(skeleton, times, positions[:-1], rotations)
    with pytest.raises(ValueError, match="rotations: expected 7 joints, got 6"):
        Take(skeleton, times, positions, rotations[:, :-1])
    with pytest.raises(ValueError, match="skeleton: expected a Skeleton"):
        Take("humanoid", times, positions, rotations)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"frames\[2\]: expected a SolveResult"):
        Take.from_frames(skeleton, [results[0], results[1], None], times[:3])


def test_saving_to_an_unwritable_place_fails_clearly_and_leaves_nothing(tmp_path: Path) -> None:
    skeleton, results, times = _recorded()
    take = Take.from_frames(skeleton, results, times)
    with pytest.raises(ValueError, match="cannot write"):
        save_take(take, tmp_path / "missing" / "take.json")
    (tmp_path / "take.json").mkdir()
    with pytest.raises(ValueError, match="cannot write"):
        save_take(take, tmp_path / "take.json")
    assert [p.name for p in tmp_path.iterdir()] == ["take.json"] and not any((tmp_path / "take.json").iterdir())
    with pytest.raises(ValueError, match="cannot read"):
        load_take(tmp_path / "absent.json")
