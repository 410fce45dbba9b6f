"""Scene files: round trip, atomic saves, and errors that name the place."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from fabrik3d import Skeleton
from fabrik3d.io import files
from fabrik3d.io.scene import Scene, load_scene, parse_scene, save_scene
from fabrik3d.model import presets


def plain_humanoid() -> Skeleton:
    s = presets.get("humanoid")
    return Skeleton(s.names, s.parents, s.rest_positions)


def full_scene(skeleton: Skeleton | None = None) -> Scene:
    return Scene(
        skeleton or plain_humanoid(),
        targets={"hand_l": np.array([0.5, 1.2, 0.3]), "toe_r": [-0.1, 0.05, 0.25]},
        root_target=[0.0, 0.9, 0.05],
        weights={"hand_l": 2.5, "toe_r": 1.0},
        tolerance=1e-4,
        max_iterations=77,
    )


def scene_json(**changes) -> dict:
    data = json.loads(json.dumps(full_scene().to_dict()))
    data.update(changes)
    return data


def assert_same_scene(a: Scene, b: Scene) -> None:
    assert a.skeleton.names == b.skeleton.names
    np.testing.assert_array_equal(a.skeleton.parents, b.skeleton.parents)
    np.testing.assert_array_equal(a.skeleton.rest_positions, b.skeleton.rest_positions)
    assert a.skeleton.to_dict() == b.skeleton.to_dict()
    assert set(a.targets) == set(b.targets)
    for k in a.targets:
        np.testing.assert_array_equal(a.targets[k], b.targets[k])
    if a.root_target is None:
        assert b.root_target is None
    else:
        np.testing.assert_array_equal(a.root_target, b.root_target)
    assert a.weights == b.weights
    assert (a.tolerance, a.max_iterations) == (b.tolerance, b.max_iterations)


# -- round trip ----------------------------------------------------------------------------------


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    scene = full_scene()
    path = tmp_path / "scene.json"
    save_scene(scene, path)
    back = load_scene(path)
    assert_same_scene(scene, back)
    a, b = scene.solve(), back.solve()
    assert a.positions.tobytes() == b.positions.tobytes()
    assert a.iterations == b.iterations
    data = json.loads(path.read_text())
    assert data["format"] == "fabrik3d.scene" and data["version"] == 3
    assert data["solver"] == {"tolerance": 1e-4, "max_iterations": 77}
    assert data["targets"]["hand_l"] == [0.5, 1.2, 0.3]
    assert data["joints"][0] == {"name": "pelvis", "parent": None, "position": [0.0, 0.95, 0.0]}


@pytest.mark.parametrize("name", presets.names())
def test_every_preset_round_trips_through_a_file(tmp_path: Path, name: str) -> None:
    scene = Scene(presets.get(name))
    save_scene(scene, tmp_path / f"{name}.json")
    assert_same_scene(scene, load_scene(tmp_path / f"{name}.json"))


def test_minimal_scene_takes_the_defaults() -> None:
    text = json.dumps(
        {
            "format": "fabrik3d.scene",
            "version": 1,
            "joints": [
                {"name": "a", "parent": None, "position": [0, 0, 0]},
                {"name": "b", "parent": "a", "position": [0, 1, 0]},
            ],
        }
    )
    scene = parse_scene(text)
    assert scene.targets == {} and scene.root_target is None and scene.weights is None
    assert (scene.tolerance, scene.max_iterations) == (1e-3, 100)


def test_scene_solve_uses_its_settings() -> None:
    scene = full_scene()
    res = scene.solve()
    np.testing.assert_allclose(res.positions[scene.skeleton.root], [0.0, 0.9, 0.05], atol=1e-12)
    assert set(res.errors) == {"hand_l", "toe_r"}
    assert res.iterations <= 77


def test_save_replaces_an_existing_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "scene.json"
    path.write_text("old contents")
    save_scene(full_scene(), path)
    assert json.loads(path.read_text())["format"] == "fabrik3d.scene"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scene.json"]


# -- atomic saves --------------------------------------------------------------------------------


def test_save_into_a_missing_folder_fails_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "folder" / "scene.json"
    with pytest.raises(ValueError, match=r"scene\.json"):
        save_scene(full_scene(), path)
    assert not (tmp_path / "no").exists()


def test_save_onto_a_folder_fails_and_leaves_nothing_behind(tmp_path: Path) -> None:
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "inside.txt").write_text("keep")
    with pytest.raises(ValueError, match="taken"):
        save_scene(full_scene(), folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
    assert (folder / "inside.txt").read_text() == "keep"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_save_into_a_read_only_folder_fails_cleanly(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "scene.json").write_text("old")
    folder.chmod(0o555)
    try:
        with pytest.raises(ValueError, match=r"scene\.json"):
            save_scene(full_scene(), folder / "scene.json")
        assert sorted(p.name for p in folder.iterdir()) == ["scene.json"]
        assert (folder / "scene.json").read_text() == "old"
    finally:
        folder.chmod(0o755)


def test_a_write_failing_halfway_leaves_the_old_file_untouched(tmp_path: Path) -> None:
    # A real failure in the middle of writing: the file size limit (RLIMIT_FSIZE) is hit after 200 bytes,
    # in a child process so that the limit does not touch the test run.
    path = tmp_path / "scene.json"
    path.write_text("old contents\n")
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from fabrik3d.model import presets
        from fabrik3d.io.scene import Scene, save_scene
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        scene = Scene(presets.get("octopus"))
        resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))
        try:
            save_scene(scene, {str(path)!r})
        except ValueError as exc:
            print("ValueError:", exc)
            sys.exit(3)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "scene.json" in proc.stdout and "Traceback" not in proc.stderr
    assert path.read_text() == "old contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scene.json"]


def test_a_scene_that_cannot_be_serialised_leaves_the_old_file_untouched(tmp_path: Path) -> None:
    path = tmp_path / "scene.json"
    path.write_text("old contents\n")
    scene = full_scene()
    scene.tolerance = float("nan")  # fields are plain attributes; a broken one must not reach the disk
    with pytest.raises(ValueError):
        save_scene(scene, path)
    assert path.read_text() == "old contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scene.json"]


def test_write_atomic_and_read_bytes(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    files.write_atomic(path, b"\x00\x01abc")
    assert files.read_bytes(path) == b"\x00\x01abc"
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)
    with pytest.raises(ValueError, match="too large"):
        files.read_bytes(path, limit=3)
    with pytest.raises(ValueError, match=r"missing\.bin"):
        files.read_bytes(tmp_path / "missing.bin")


# -- errors that name the place ------------------------------------------------------------------


def _bad(**changes) -> str:
    return json.dumps(scene_json(**changes))


def _posed(fn) -> str:
    """The humanoid preset's scene (its natural posing included), changed by ``fn``."""
    data = json.loads(json.dumps(Scene(presets.get("humanoid")).to_dict()))
    fn(data)
    return json.dumps(data)


def _edit(fn) -> str:
    data = scene_json()
    fn(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("{not json", r"^in\.json: not valid JSON"),
        ("", r"^in\.json: not valid JSON"),
        (b"\xff\xfe\xfa", r"^in\.json: not valid JSON"),
        ("[1, 2, 3]", r"^in\.json: scene: expected a JSON object"),
        ('"a string"', r"^in\.json: scene: expected a JSON object"),
        ("null", r"^in\.json: scene: expected a JSON object"),
        (_bad(format="fabrik3d.pose"), r"^in\.json: format: expected 'fabrik3d\.scene', got 'fabrik3d\.pose'"),
        (_bad(format=None), r"^in\.json: format: expected 'fabrik3d\.scene'"),
        (_bad(version=5), r"^in\.json: version: expected one of \(1, 2, 3, 4\), got 5"),
        (_bad(version=4), r"^in\.json: figures: expected a list of one figure or more"),
        (_bad(version="1"), r"^in\.json: version: expected one of \(1, 2, 3, 4\), got '1'"),
        (_edit(lambda d: d.pop("version")), r"^in\.json: version: expected one of \(1, 2, 3, 4\), got None"),
        (_posed(lambda d: d.update(version=1)), r"^in\.json: posing: needs version 2"),
        (_posed(lambda d: d["posing"]["stiffness"].update(chest=2)), r"^in\.json: posing\.stiffness\.chest: expected"),
        (
            _posed(lambda d: d["posing"]["reach"].update(hand_l="hip_l")),
            r"^in\.json: skeleton: posing\.reach\.hand_l: 'hip_l' is not a joint above 'hand_l'",
        ),
        (
            _posed(lambda d: d["posing"]["swivel"]["hand_l"].update(direction=[0, 0, 0])),
            r"^in\.json: posing\.swivel\.hand_l: swivel\.direction: expected a non-zero direction",
        ),
        (
            _edit(lambda d: d["joints"][4].update(parent="hipp")),
            r"^in\.json: joints\[4\]\.parent: unknown joint 'hipp'",
        ),
        (_edit(lambda d: d["joints"][3].update(position=[0, "x", 0])), r"^in\.json: joints\[3\]\.position: expected"),
        (_edit(lambda d: d["joints"][2].update(name="pelvis")), r"joints\[2\]\.name: duplicate joint name 'pelvis'"),
        (_edit(lambda d: d.pop("joints")), r"^in\.json: skeleton: expected an object with a 'joints' list"),
        (_bad(targets={"hand_x": [0, 1, 0]}), r"^in\.json: targets\.hand_x: not an end effector.*head, hand_l"),
        (_bad(targets={"elbow_l": [0, 1, 0]}), r"^in\.json: targets\.elbow_l: not an end effector"),
        (_bad(targets={"hand_l": [0, 1]}), r"^in\.json: targets\.hand_l: expected three finite numbers"),
        (_bad(targets={"hand_l": [0, 1e999, 0]}), r"^in\.json: targets\.hand_l: expected three finite numbers"),
        (_bad(targets={"hand_l": [0, 1e300, 0]}), r"^in\.json: targets\.hand_l: coordinates must be at most"),
        (_bad(targets=[[0, 1, 0]]), r"^in\.json: targets: expected an object"),
        (_bad(root_target=[0, 1]), r"^in\.json: root_target: expected three finite numbers"),
        (_bad(root_target="up"), r"^in\.json: root_target: expected three finite numbers"),
        (_bad(weights={"hand_l": 0}), r"^in\.json: weights\.hand_l: must be finite and > 0"),
        (_bad(weights={"hand_l": -2}), r"^in\.json: weights\.hand_l: must be finite and > 0"),
        (_bad(weights={"hand_l": "heavy"}), r"^in\.json: weights\.hand_l: expected a number"),
        (_bad(weights={"hand_l": True}), r"^in\.json: weights\.hand_l: expected a number"),
        (_bad(weights={"pelvis": 1.0}), r"^in\.json: weights\.pelvis: not an end effector"),
        (_bad(weights=[1.0]), r"^in\.json: weights: expected an object"),
        (_bad(solver={"tolerance": 0}), r"^in\.json: .*tolerance: must be finite and > 0"),
        (_bad(solver={"tolerance": "small"}), r"^in\.json: .*tolerance: expected a number"),
        (_bad(solver={"max_iterations": 0}), r"^in\.json: .*max_iterations: must be >= 1"),
        (_bad(solver={"max_iterations": 2.5}), r"^in\.json: .*max_iterations: expected an integer"),
        (_bad(solver={"tolerence": 0.1}), r"^in\.json: solver: unknown settings \['tolerence'\]"),
        (_bad(solver=[]), r"^in\.json: solver: expected an object"),
    ],
)
def test_parse_errors_name_the_place(text: str | bytes, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        parse_scene(text, "in.json")


def test_non_finite_positions_are_rejected_naming_the_joint() -> None:
    for literal in ("NaN", "Infinity", "-Infinity", "1e999"):
        text = _edit(lambda d: d["joints"][5].update(position=[0, 0, 0]))
        text = text.replace('"position": [0, 0, 0]', f'"position": [0, {literal}, 0]', 1)
        with pytest.raises(ValueError, match=r"^in\.json: joints\[5\]\.position: expected three finite numbers"):
            parse_scene(text, "in.json")


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("[" * 100_000 + "]" * 100_000, r"^in\.json: JSON nested too deeply"),
        ('{"a":' * 50_000 + "1" + "}" * 50_000, r"^in\.json: JSON nested too deeply"),
        ("1" * 5000, r"^in\.json: not valid JSON"),  # an integer too long to convert
    ],
)
def test_huge_or_deeply_nested_garbage_is_rejected_clearly(text: str, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        parse_scene(text, "in.json")


def test_huge_numbers_in_a_scene_are_rejected_naming_the_place() -> None:
    big = 10**400
    text = _edit(lambda d: d["joints"][5].update(position=[0, big, 0]))
    with pytest.raises(ValueError, match=r"^in\.json: joints\[5\]\.position: expected three finite numbers"):
        parse_scene(text, "in.json")
    with pytest.raises(ValueError, match=r"^in\.json: .*tolerance: must be finite"):
        parse_scene(_bad(solver={"tolerance": big}), "in.json")
    with pytest.raises(ValueError, match=r"^in\.json: weights\.hand_l: must be finite"):
        parse_scene(_bad(weights={"hand_l": big}), "in.json")
    with pytest.raises(ValueError, match=r"^in\.json: targets\.hand_l: expected three finite numbers"):
        parse_scene(_bad(targets={"hand_l": [big, 0, 0]}), "in.json")


def test_garbage_of_the_wrong_kinds_is_rejected_clearly() -> None:
    garbage = [
        _bad(joints=[1, 2, 3]),
        _bad(joints=[{"name": ["x"], "parent": None, "position": [0, 0, 0]}]),
        _bad(joints=[{"name": "a", "parent": {"x": 1}, "position": [0, 0, 0]}]),
        _bad(joints=[{"name": "a", "parent": None, "position": {"x": 0}}]),
        _bad(joints=[{}] * 1000),
        _bad(targets={"hand_l": {"x": 1}}),
        _bad(targets={"hand_l": [[0, 0, 0]]}),
        _bad(weights={"hand_l": [1]}),
        _bad(solver={"tolerance": None}),
        _bad(root_target={"x": 1}),
    ]
    for text in garbage:
        with pytest.raises(ValueError, match=r"^in\.json: "):
            parse_scene(text, "in.json")


def test_load_scene_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"missing\.json"):
        load_scene(tmp_path / "missing.json")
    with pytest.raises(ValueError, match=re.escape(str(tmp_path))):
        load_scene(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "fabrik3d.scene", "version": 1, "joints": [')
    with pytest.raises(ValueError, match=r"bad\.json: not valid JSON"):
        load_scene(bad)
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:  # sparse: larger than the limit without writing 64 MB
        fh.truncate(files.MAX_FILE_BYTES + 1)
    with pytest.raises(ValueError, match=r"big\.json: file is too large"):
        load_scene(big)


def test_scene_constructor_checks_its_fields() -> None:
    s = plain_humanoid()
    with pytest.raises(ValueError, match=r"^targets\.pelvis: not an end effector"):
        Scene(s, targets={"pelvis": [0, 0, 0]})
    with pytest.raises(ValueError, match=r"^targets\.hand_l"):
        Scene(s, targets={"hand_l": [0, np.nan, 0]})
    with pytest.raises(ValueError, match=r"^root_target"):
        Scene(s, root_target=[0, 0])
    with pytest.raises(ValueError, match=r"^weights\.hand_l"):
        Scene(s, weights={"hand_l": -1.0})
    with pytest.raises(ValueError, match=r"^tolerance"):
        Scene(s, tolerance=0.0)
    with pytest.raises(ValueError, match=r"^max_iterations"):
        Scene(s, max_iterations=0)


def test_a_scene_over_a_joint_bound_is_refused_before_it_is_built() -> None:
    text = json.dumps(Scene(presets.get("humanoid")).to_dict())
    assert len(parse_scene(text, "ok.json", max_joints=65).skeleton) == 65
    with pytest.raises(ValueError, match=r"^big.json: joints: 65 joints, more than the 64 allowed here$"):
        parse_scene(text, "big.json", max_joints=64)
