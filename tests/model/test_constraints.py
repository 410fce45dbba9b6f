"""Joint constraints (issue 3): constructors, validation against a skeleton, targets, scene JSON."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from fabrik3d import Cone, EllipticalCone, Hinge, Rigid, Scene, Skeleton, Target, Twist, solve
from fabrik3d.io.scene import load_scene, parse_scene, save_scene
from fabrik3d.model import presets
from fabrik3d.model.constraints import TYPES, constraint_from_dict


def chain(constraints: dict | None = None) -> Skeleton:
    """a - b - c - d along +Y, bones 1 long."""
    return Skeleton(["a", "b", "c", "d"], [-1, 0, 1, 2], [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], constraints)


def fork(constraints: dict | None = None) -> Skeleton:
    """a - b, then b forks into c (up-right) and d (up-left)."""
    return Skeleton(["a", "b", "c", "d"], [-1, 0, 1, 1], [[0, 0, 0], [0, 1, 0], [1, 2, 0], [-1, 2, 0]], constraints)


# -- constructors ----------------------------------------------------------------------------------


def test_constructors_keep_their_arguments_as_floats() -> None:
    assert Cone(30).max_deg == 30.0 and isinstance(Cone(30).max_deg, float)
    e = EllipticalCone(10, 20, 30, 40, right_axis=[0, 0, 2])
    assert (e.left_deg, e.right_deg, e.up_deg, e.down_deg) == (10.0, 20.0, 30.0, 40.0)
    assert e.right_axis == (0.0, 0.0, 2.0)
    assert EllipticalCone(1, 2, 3, 4).right_axis == (1.0, 0.0, 0.0)
    h = Hinge(np.array([1, 0, 0]), -30, 120)
    assert (h.axis, h.min_deg, h.max_deg) == ((1.0, 0.0, 0.0), -30.0, 120.0)
    t = Twist(-180, 180)
    assert (t.min_deg, t.max_deg) == (-180.0, 180.0)
    assert Cone(0).max_deg == 0.0 and Cone(179.9).max_deg == 179.9
    assert Hinge((0, 0, 1), 0, 0).max_deg == 0.0
    assert Rigid() == Rigid()


BAD_CONSTRUCTORS = [
    (lambda: Cone(-1), "max_deg", "must be >= 0"),
    (lambda: Cone(-1e-9), "max_deg", "must be >= 0"),
    (lambda: Cone(180), "max_deg", "< 180"),
    (lambda: Cone(250), "max_deg", "< 180"),
    (lambda: Cone(math.nan), "max_deg", "finite"),
    (lambda: Cone(math.inf), "max_deg", "finite"),
    (lambda: Cone("30"), "max_deg", "number"),
    (lambda: Cone(True), "max_deg", "number"),
    (lambda: EllipticalCone(-5, 10, 10, 10), "left_deg", "must be >= 0"),
    (lambda: EllipticalCone(5, -10, 10, 10), "right_deg", "must be >= 0"),
    (lambda: EllipticalCone(5, 10, 180, 10), "up_deg", "< 180"),
    (lambda: EllipticalCone(5, 10, 10, 200), "down_deg", "< 180"),
    (lambda: EllipticalCone(5, 10, 10, 10, right_axis=(0, 0, 0)), "right_axis", "non-zero"),
    (lambda: EllipticalCone(5, 10, 10, 10, right_axis=(1, 0)), "right_axis", "three numbers"),
    (lambda: EllipticalCone(5, 10, 10, 10, right_axis=(1, math.nan, 0)), "right_axis", "finite"),
    (lambda: Hinge((0, 0, 0), -10, 10), "axis", "non-zero"),
    (lambda: Hinge((0, 0, 1e-12), -10, 10), "axis", "non-zero"),
    (lambda: Hinge("xyz", -10, 10), "axis", "three numbers"),
    (lambda: Hinge(None, -10, 10), "axis", "three numbers"),
    (lambda: Hinge((1, 0, 0), 10, -10), "min_deg", "<= max_deg"),
    (lambda: Hinge((1, 0, 0), -190, 10), "min_deg", "-180"),
    (lambda: Hinge((1, 0, 0), -10, 180.5), "max_deg", "180"),
    (lambda: Hinge((1, 0, 0), 10, 20), "min_deg", "rest pose"),
    (lambda: Hinge((1, 0, 0), -20, -10), "min_deg", "rest pose"),
    (lambda: Twist(10, -10), "min_deg", "<= max_deg"),
    (lambda: Twist(-181, 10), "min_deg", "-180"),
    (lambda: Twist(-10, 360), "max_deg", "180"),
    (lambda: Twist(5, 10), "min_deg", "rest pose"),
    (lambda: Twist(math.nan, 10), "min_deg", "finite"),
]


@pytest.mark.parametrize(("make", "field", "words"), BAD_CONSTRUCTORS)
def test_bad_constructor_arguments_name_the_field(make, field: str, words: str) -> None:
    with pytest.raises(ValueError) as info:
        make()
    message = str(info.value)
    assert message.startswith(f"{field}:"), message
    assert words in message, message


# -- constraints on a skeleton ---------------------------------------------------------------------


BAD_ON_SKELETON = [
    # (skeleton factory, constraints, joint, field or None, words)
    (chain, {"b": Hinge((0, 1, 0), -10, 10)}, "b", "axis", "not perpendicular"),
    (chain, {"b": Hinge((1, 1, 0), -10, 10)}, "b", "axis", "not perpendicular"),
    (chain, {"b": Hinge((1, 1e-5, 0), -10, 10)}, "b", "axis", "not perpendicular"),
    (chain, {"b": EllipticalCone(10, 10, 10, 10, right_axis=(0, -3, 0))}, "b", "right_axis", "parallel"),
    (chain, {"b": [Cone(10), Hinge((1, 0, 0), -10, 10)]}, "b", None, "at most one swing"),
    (chain, {"b": [Cone(10), EllipticalCone(1, 2, 3, 4)]}, "b", None, "at most one swing"),
    (chain, {"c": [Twist(-1, 1), Twist(-2, 2)]}, "c", None, "at most one twist"),
    (chain, {"d": Cone(10)}, "d", None, "leaf"),
    (chain, {"d": Hinge((1, 0, 0), -10, 10)}, "d", None, "leaf"),
    (chain, {"b": Rigid()}, "b", None, "two or more children"),
    (chain, {"d": Rigid()}, "d", None, "two or more children"),
    (fork, {"b": Cone(10)}, "b", None, "several children"),
    (fork, {"b": EllipticalCone(1, 2, 3, 4)}, "b", None, "several children"),
    (chain, {"b": "Cone(10)"}, "b", None, "constraint"),
]


@pytest.mark.parametrize(("make", "constraints", "joint", "field", "words"), BAD_ON_SKELETON)
def test_constraints_that_do_not_fit_their_joint_name_joint_and_field(
    make, constraints: dict, joint: str, field: str | None, words: str
) -> None:
    with pytest.raises(ValueError) as info:
        make(constraints)
    message = str(info.value)
    assert f"joint {joint!r}" in message, message
    if field is not None:
        assert f".{field}:" in message, message
    assert words in message, message


def test_a_constraint_on_an_unknown_joint_is_named() -> None:
    with pytest.raises(ValueError, match="unknown joint 'elbow'"):
        chain({"elbow": Cone(10)})
    with pytest.raises(ValueError, match="constraints: expected a mapping"):
        chain([Cone(10)])  # type: ignore[arg-type]


def test_valid_constraint_sets_are_kept_per_joint() -> None:
    s = chain({"a": Cone(30), "b": [Hinge((1, 0, 0), -90, 0), Twist(-10, 10)], "c": (EllipticalCone(1, 2, 3, 4),)})
    assert s.constraints == {
        "a": (Cone(30),),
        "b": (Hinge((1, 0, 0), -90, 0), Twist(-10, 10)),
        "c": (EllipticalCone(1, 2, 3, 4),),
    }
    # a twist limit on a leaf (an effector's twist), Rigid with a swing limit on a fork, a hinge axis
    # perpendicular within the documented 1e-6
    assert fork({"b": [Rigid(), Cone(10), Twist(-5, 5)], "d": Twist(-5, 5)}).constraints["b"][1] == Cone(10)
    assert chain({"b": Hinge((1, 1e-7, 0), -10, 10)}).constraints["b"][0].axis == (1.0, 1e-7, 0.0)
    assert chain({"b": []}).constraints == {}
    assert chain().constraints == {}


def test_skeleton_round_trips_its_constraints_through_to_dict() -> None:
    s = presets.get("humanoid")
    d = json.loads(json.dumps(s.to_dict()))
    back = Skeleton.from_dict(d)
    assert back.constraints == s.constraints
    np.testing.assert_array_equal(back.rest_positions, s.rest_positions)


@pytest.mark.parametrize(
    "constraint",
    [Cone(30), EllipticalCone(10, 20, 30, 40, right_axis=(0, 0, 1)), Hinge((1, 0, 0), -45, 90), Twist(-5, 5), Rigid()],
)
def test_each_constraint_type_round_trips_through_json(constraint) -> None:
    d = constraint.to_dict()
    assert d["type"] == type(constraint).__name__ and d["type"] in TYPES
    assert constraint_from_dict(json.loads(json.dumps(d)), "c") == constraint


# -- targets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field", "words"),
    [
        ({"orientation": (0, 0, 0, 2)}, "orientation", "unit"),
        ({"orientation": (0, 0, 0, 0)}, "orientation", "unit"),
        ({"orientation": (0.1, 0, 0, 1)}, "orientation", "unit"),
        ({"orientation": (0, 0, math.nan, 1)}, "orientation", "finite"),
        ({"orientation": (0, 0, math.inf, 1)}, "orientation", "finite"),
        ({"orientation": (0, 0, 1)}, "orientation", "four"),
        ({"orientation": "up"}, "orientation", "quaternion"),
        ({"weight": 0}, "weight", "> 0"),
        ({"weight": -0.5}, "weight", "> 0"),
        ({"weight": 1.0000001}, "weight", "(0, 1]"),
        ({"weight": 2}, "weight", "(0, 1]"),
        ({"weight": math.nan}, "weight", ""),
        ({"weight": "1"}, "weight", "number"),
    ],
)
def test_bad_targets_name_the_field(kwargs: dict, field: str, words: str) -> None:
    with pytest.raises(ValueError) as info:
        Target((0, 3, 0), **kwargs)
    message = str(info.value)
    assert message.startswith(f"{field}:") and words in message, message


def test_bad_target_positions_are_rejected() -> None:
    with pytest.raises(ValueError, match="position"):
        Target((0, math.nan, 0))
    with pytest.raises(ValueError, match="position"):
        Target((0, 1))


def test_targets_accept_unit_quaternions_within_1e_6_and_any_weight_in_0_1() -> None:
    q = np.array([0.0, 0.0, 0.0, 1.0 + 5e-7])
    t = Target([0, 3, 0], q, weight=1e-3)
    assert abs(np.linalg.norm(t.orientation) - 1.0) < 1e-12
    assert t.weight == 1e-3
    assert Target([0, 3, 0]).orientation is None and Target([0, 3, 0]).weight == 1.0


def test_solve_checks_targets_root_target_and_poles() -> None:
    s = chain({"b": Cone(30)})
    with pytest.raises(ValueError, match="orientation"):
        solve(s, {"d": [0, 3, 0]}, root_target=Target([0, 0, 0], [0, 0, 0, 2]))
    with pytest.raises(ValueError, match="root_target"):
        solve(s, {"d": [0, 3, 0]}, root_target=[0, math.nan, 0])
    with pytest.raises(ValueError, match=re.escape("poles['d']")):
        solve(s, {"d": [0, 3, 0]}, poles={"d": [math.nan, 0, 0]})
    with pytest.raises(ValueError, match="poles: 'c' is not an end effector"):
        solve(s, {"d": [0, 3, 0]}, poles={"c": [1, 0, 0]})
    with pytest.raises(ValueError, match="targets: 'c' is not an end effector"):
        solve(s, {"c": Target([0, 2, 0])})
    with pytest.raises(ValueError, match=re.escape("targets['d']")):
        solve(s, {"d": [0, 3]})


# -- scene JSON ------------------------------------------------------------------------------------


def humanoid_scene_dict() -> dict:
    scene = Scene(presets.get("humanoid"), targets={"hand_l": np.array([0.6, 1.3, 0.2])})
    return json.loads(json.dumps(scene.to_dict()))


def test_scene_json_lists_constraints_with_constructor_argument_names() -> None:
    d = humanoid_scene_dict()
    by_name = {j["name"]: j for j in d["joints"]}
    assert by_name["pelvis"]["constraints"] == [{"type": "Rigid"}]
    assert by_name["spine_01"]["constraints"][0] == {"type": "Cone", "max_deg": 20.0}
    assert by_name["elbow_l"]["constraints"][0] == {
        "type": "Hinge",
        "axis": [0.0, 1.0, 0.0],
        "min_deg": -150.0,
        "max_deg": 0.0,
    }
    shoulder = by_name["shoulder_l"]["constraints"][0]
    assert set(shoulder) == {"type", "left_deg", "right_deg", "up_deg", "down_deg", "right_axis"}
    assert "constraints" not in by_name["toe_l"]


def test_scene_file_round_trip_keeps_constraints_and_solves_the_same(tmp_path) -> None:
    scene = Scene.from_dict(humanoid_scene_dict())
    path = tmp_path / "h.json"
    save_scene(scene, path)
    back = load_scene(path)
    assert back.skeleton.constraints == presets.get("humanoid").constraints
    a, b = scene.solve(), back.solve()
    np.testing.assert_array_equal(a.positions, b.positions)
    np.testing.assert_array_equal(a.rotations, b.rotations)


def test_scene_json_accepts_hand_written_constraints() -> None:
    text = json.dumps(
        {
            "format": "fabrik3d.scene",
            "version": 1,
            "joints": [
                {"name": "a", "parent": None, "position": [0, 0, 0], "constraints": [{"type": "Cone", "max_deg": 30}]},
                {
                    "name": "b",
                    "parent": "a",
                    "position": [0, 1, 0],
                    "constraints": [
                        {"type": "Hinge", "axis": [1, 0, 0], "min_deg": -90, "max_deg": 45},
                        {"type": "Twist", "min_deg": -10, "max_deg": 10},
                    ],
                },
                {"name": "c", "parent": "b", "position": [0, 2, 0], "constraints": []},
            ],
            "targets": {"c": [0.5, 1.5, 0]},
        }
    )
    scene = parse_scene(text)
    assert scene.skeleton.constraints == {"a": (Cone(30),), "b": (Hinge((1, 0, 0), -90, 45), Twist(-10, 10))}


def _with(edit) -> str:
    d = humanoid_scene_dict()
    edit(d["joints"])
    return json.dumps(d)


BAD_SCENES = [
    (lambda js: js[4]["constraints"][1].update(max_deg=200), "joints[4].constraints[1].max_deg: "),
    (
        lambda js: js[4]["constraints"].__setitem__(1, {"type": "Cone", "max_deg": -5}),
        "joints[4].constraints[1].max_deg: ",
    ),
    (lambda js: js[1]["constraints"].__setitem__(0, {"type": "Cone"}), "joints[1].constraints[0].max_deg: missing"),
    (lambda js: js[1]["constraints"].__setitem__(0, {"type": "Kone", "max_deg": 3}), "joints[1].constraints[0].type: "),
    (lambda js: js[1]["constraints"][0].update(min_deg=3), "joints[1].constraints[0]: unknown fields"),
    (lambda js: js[1]["constraints"].__setitem__(0, "Cone"), "joints[1].constraints[0]: "),
    (lambda js: js[1].__setitem__("constraints", {"type": "Cone"}), "joints[1].constraints: expected a list"),
    (lambda js: js[9]["constraints"][0].update(min_deg=10), "joints[9].constraints[0].min_deg: "),
    (lambda js: js[9]["constraints"][0].update(axis=[1, 0, 0]), "joints[9].constraints[0].axis: not perpendicular"),
    (lambda js: js[9]["constraints"][0].update(axis=[0, 0, 0]), "joints[9].constraints[0].axis: "),
    (lambda js: js[9]["constraints"][1].update(min_deg=True), "joints[9].constraints[1].min_deg: "),
    (
        lambda js: js[8]["constraints"][0].update(right_axis=[-0.28, 0, 0.02]),
        "joints[8].constraints[0].right_axis: parallel",
    ),
    (
        lambda js: js[1]["constraints"].append({"type": "Hinge", "axis": [1, 0, 0], "min_deg": -1, "max_deg": 1}),
        "joints[1].constraints[2]: ",
    ),
    (lambda js: js[6].__setitem__("constraints", [{"type": "Cone", "max_deg": 3}]), "joints[6].constraints[0]: "),
    (lambda js: js[0].__setitem__("constraints", [{"type": "Cone", "max_deg": 3}]), "joints[0].constraints[0]: "),
    (lambda js: js[1].__setitem__("constraints", [{"type": "Rigid"}]), "joints[1].constraints[0]: "),
]


@pytest.mark.parametrize(("edit", "place"), BAD_SCENES)
def test_bad_scene_constraints_name_the_place(edit, place: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_scene(_with(edit), "pose.json")
    message = str(info.value)
    assert message.startswith(f"pose.json: {place}"), message
    assert "\n" not in message
