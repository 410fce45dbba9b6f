"""The skeleton model: validation, derived structure, dict form and the presets."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from fabrik3d import Skeleton
from fabrik3d.model import presets

# A small tree used throughout:       e1
#                                     |
#   root - a - sub - b - e1           sub - c - e2
#                                      \
#                                       d (leaf)
NAMES = ("root", "a", "sub", "b", "e1", "c", "e2", "d")
PARENTS = (-1, 0, 1, 2, 3, 2, 5, 2)
REST = [
    [0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 2.0, 0.0],
    [0.0, 3.0, 0.0],
    [0.0, 4.0, 0.0],
    [1.0, 2.5, 0.0],
    [2.0, 3.0, 0.0],
    [-1.0, 2.0, 0.5],
]


def tree() -> Skeleton:
    return Skeleton(NAMES, PARENTS, REST)


def two(pos: list[list[float]] | None = None) -> tuple[list[str], list[int], list[list[float]]]:
    return ["a", "b"], [-1, 0], pos or [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


# -- construction and attributes -------------------------------------------------------------


def test_attributes_of_a_valid_tree() -> None:
    s = tree()
    assert s.names == NAMES
    assert s.parents.tolist() == list(PARENTS)
    np.testing.assert_array_equal(s.rest_positions, np.array(REST))
    expected = [0.0] + [math.dist(REST[j], REST[PARENTS[j]]) for j in range(1, len(NAMES))]
    np.testing.assert_allclose(s.bone_lengths, expected, rtol=1e-15)
    assert s.root == 0
    assert len(s) == 8


def test_root_need_not_be_first_and_order_puts_parents_first() -> None:
    s = Skeleton(["tip", "mid", "base"], [1, 2, -1], [[0, 2, 0], [0, 1, 0], [0, 0, 0]])
    assert s.root == 2
    assert s.order[0] == 2
    seen: set[int] = set()
    for j in s.order:
        assert s.parents[j] == -1 or s.parents[j] in seen
        seen.add(j)
    assert sorted(s.order) == [0, 1, 2]
    assert s.end_effectors == ("tip",)


def test_inputs_are_copied_and_the_attributes_read_only() -> None:
    rest = np.array(REST)
    parents = np.array(PARENTS)
    s = Skeleton(list(NAMES), parents, rest)
    rest[1, 1] = 99.0
    parents[3] = 0
    assert s.rest_positions[1, 1] == 1.0
    assert s.parents[3] == 2
    with pytest.raises(ValueError):
        s.rest_positions[0, 0] = 1.0
    with pytest.raises(ValueError):
        s.bone_lengths[1] = 2.0


def test_children_effectors_sub_bases_and_chains() -> None:
    s = tree()
    assert s.children(0) == (1,)
    assert s.children(2) == (3, 5, 7)
    assert s.children(4) == ()
    assert s.first_child(2) == 3
    assert s.first_child(7) == -1
    assert s.end_effectors == ("e1", "e2", "d")
    assert s.sub_bases == ("sub",)
    assert s.chains == ((0, 1, 2), (2, 3, 4), (2, 5, 6), (2, 7))
    assert s.path_to_root(6) == (0, 1, 2, 5, 6)
    assert s.path_to_root(0) == (0,)


def test_chains_from_a_branching_root() -> None:
    s = Skeleton(["r", "a", "b", "c"], [-1, 0, 0, 2], [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 2, 0]])
    assert s.sub_bases == ("r",)
    assert s.chains == ((0, 1), (0, 2, 3))


def test_chains_cover_every_bone_once() -> None:
    for name in presets.names():
        s = presets.get(name)
        bones = [(c[k], c[k + 1]) for c in s.chains for k in range(len(c) - 1)]
        core = set(s.core_joints.tolist())  # (riders are not solved: no chain holds them)
        assert sorted(bones) == sorted((int(s.parents[j]), j) for j in core if j != s.root)
        ends = {s.names[c[-1]] for c in s.chains}
        assert set(s.end_effectors) <= ends
        assert ends <= set(s.end_effectors) | set(s.sub_bases)


def test_index_and_its_error_lists_the_names() -> None:
    s = tree()
    assert s.index("e2") == 6
    with pytest.raises(ValueError, match=r"unknown joint 'nope'.*root, a, sub"):
        s.index("nope")


# -- rejected skeletons ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "parents", "rest", "pattern"),
    [
        (["a", "b", "a"], [-1, 0, 1], [[0, 0, 0], [0, 1, 0], [0, 2, 0]], r"'a'.*duplicate"),
        (["a", "", "c"], [-1, 0, 1], [[0, 0, 0], [0, 1, 0], [0, 2, 0]], r"joint 1.*non-empty"),
        (["a", None, "c"], [-1, 0, 1], [[0, 0, 0], [0, 1, 0], [0, 2, 0]], r"joint 1.*non-empty string"),
        (["a", "b"], [1, 0], [[0, 0, 0], [0, 1, 0]], r"no root"),
        (["a", "b", "c"], [-1, -1, 0], [[0, 0, 0], [0, 1, 0], [0, 2, 0]], r"several roots.*'a'.*'b'"),
        (["a", "b", "c", "d"], [-1, 2, 1, 0], [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], r"'b'.*cycle"),
        (["a", "b", "c"], [-1, 1, 0], [[0, 0, 0], [0, 1, 0], [0, 2, 0]], r"'b'.*cycle"),
        (["a", "b", "c"], [-1, 0, 3], [[0, 0, 0], [0, 1, 0], [0, 2, 0]], r"'c'.*parent index 3 out of range"),
        (["a", "b", "c"], [-1, 0, -2], [[0, 0, 0], [0, 1, 0], [0, 2, 0]], r"'c'.*out of range"),
        (["a", "b"], [-1, 0], [[0, 0, 0], [0, math.nan, 0]], r"'b'.*non-finite"),
        (["a", "b"], [-1, 0], [[math.inf, 0, 0], [0, 1, 0]], r"'a'.*non-finite"),
        (["a", "b"], [-1, 0], [[0, 0, 0], [1e200, 1e200, 0]], r"'b'.*beyond 1e\+09"),  # bone length would be inf
        (["a", "b"], [-1, 0], [[0, 0, 0], [10**400, 0, 0]], r"rest_positions"),  # no float that large
        (["a", "b", "c"], [-1, 0, 1], [[0, 0, 0], [0, 1, 0], [0, 1 + 1e-10, 0]], r"'c'.*shorter than 1e-09"),
        (["a", "b"], [-1, 0], [[0, 0, 0], [0, 0, 0]], r"'b'.*shorter"),
        (["a", "b"], [-1, 0], [[0, 0, 0], [0, 1]], r"rest_positions"),
        (["a", "b"], [-1, 0], [[0, 0, 0, 0], [0, 1, 0, 0]], r"rest_positions.*\(2, 3\)"),
        (["a", "b"], [-1, 0, 1], [[0, 0, 0], [0, 1, 0]], r"parents.*\(2,\)"),
        (["a", "b"], [[-1, 0]], [[0, 0, 0], [0, 1, 0]], r"parents.*\(2,\)"),
        (["a", "b"], [-1, 0.5], [[0, 0, 0], [0, 1, 0]], r"parents.*integer"),
        (["a", "b"], [-1, 0], [["x", 0, 0], [0, 1, 0]], r"rest_positions"),
        (["a"], [-1], [[0, 0, 0]], r"at least two joints"),
        ([], [], np.zeros((0, 3)), r"at least two joints"),
        ("ab", [-1, 0], [[0, 0, 0], [0, 1, 0]], r"names"),
    ],
)
def test_invalid_skeletons_are_rejected_naming_the_problem(names, parents, rest, pattern) -> None:
    with pytest.raises(ValueError, match=pattern):
        Skeleton(names, parents, rest)


def test_a_bone_of_exactly_the_minimum_length_is_accepted() -> None:
    s = Skeleton(*two([[0.0, 0.0, 0.0], [0.0, 0.0, 1e-9]]))
    assert s.bone_lengths[1] == pytest.approx(1e-9)


# -- dict form ---------------------------------------------------------------------------------


def test_to_dict_is_json_and_round_trips_exactly() -> None:
    for s in [tree(), *(presets.get(n) for n in presets.names())]:
        data = json.loads(json.dumps(s.to_dict()))
        back = Skeleton.from_dict(data)
        assert back.names == s.names
        np.testing.assert_array_equal(back.parents, s.parents)
        np.testing.assert_array_equal(back.rest_positions, s.rest_positions)
        np.testing.assert_array_equal(back.bone_lengths, s.bone_lengths)
        assert back.to_dict() == s.to_dict()


def test_to_dict_names_parents() -> None:
    joints = tree().to_dict()["joints"]
    assert joints[0] == {"name": "root", "parent": None, "position": [0.0, 0.0, 0.0]}
    assert joints[6]["parent"] == "c"


def _joints() -> dict:
    return tree().to_dict()


E = re.escape


@pytest.mark.parametrize(
    ("edit", "pattern"),
    [
        (lambda d: d["joints"][4].update(parent="hipp"), E("joints[4].parent: unknown joint 'hipp'")),
        (lambda d: d["joints"][4].update(parent=3), E("joints[4].parent: unknown joint 3")),
        (lambda d: d["joints"][2].update(name="a"), E("joints[2].name: duplicate joint name 'a'")),
        (lambda d: d["joints"][2].update(name=""), E("joints[2].name: expected a non-empty string")),
        (lambda d: d["joints"][2].pop("name"), E("joints[2].name: expected a non-empty string")),
        (lambda d: d["joints"][5].update(position=[1, 2]), E("joints[5].position: expected three finite numbers")),
        (lambda d: d["joints"][5].update(position=[1, "2", 3]), E("joints[5].position: expected three finite")),
        (lambda d: d["joints"][5].update(position=[1, True, 3]), E("joints[5].position: expected three finite")),
        (lambda d: d["joints"][5].update(position=[1, math.nan, 3]), E("joints[5].position: expected three finite")),
        (lambda d: d["joints"][5].update(position=[1, math.inf, 3]), E("joints[5].position: expected three finite")),
        (lambda d: d["joints"][5].update(position=None), E("joints[5].position: expected three finite numbers")),
        (lambda d: d["joints"][5].update(position=[10**400, 0, 0]), E("joints[5].position: expected three finite")),
        (lambda d: d["joints"][5].update(position=[1e300, 0, 0]), r"'c'.*beyond 1e\+09"),
        (lambda d: d["joints"].__setitem__(3, "b"), E("joints[3]: expected an object")),
        (lambda d: d["joints"][3].update(constraints="cone"), E("joints[3].constraints: expected a list")),
        (lambda d: d.update(joints={}), E("expected an object with a 'joints' list")),
        (lambda d: d.pop("joints"), E("expected an object with a 'joints' list")),
        (lambda d: d["joints"][0].update(parent="e1"), r"'root'.*cycle|no root"),
        (lambda d: d["joints"][3].update(parent=None), r"several roots.*'root'.*'b'"),
        (lambda d: d["joints"][4].update(position=[0.0, 3.0, 0.0]), r"'e1'.*shorter"),
    ],
)
def test_from_dict_errors_name_the_place(edit, pattern) -> None:
    data = _joints()
    edit(data)
    with pytest.raises(ValueError, match=pattern):
        Skeleton.from_dict(data)


def test_from_dict_prefixes_the_place_given() -> None:
    data = _joints()
    data["joints"][4]["parent"] = "hipp"
    with pytest.raises(ValueError, match=r"^scene\.joints\[4\]\.parent: unknown joint 'hipp'"):
        Skeleton.from_dict(data, where="scene.")


@pytest.mark.parametrize("data", [None, [], "joints", 3, {"joints": "x"}])
def test_from_dict_rejects_non_objects(data) -> None:
    with pytest.raises(ValueError, match="joints"):
        Skeleton.from_dict(data)


# -- presets -----------------------------------------------------------------------------------


def test_preset_names_and_unknown_preset() -> None:
    assert presets.names() == ("humanoid", "robot_arm", "octopus")
    with pytest.raises(ValueError, match=r"unknown preset 'cat'.*humanoid, robot_arm, octopus"):
        presets.get("cat")


def test_presets_are_fresh_objects() -> None:
    a, b = presets.get("humanoid"), presets.get("humanoid")
    assert a is not b
    assert a.names == b.names


def test_humanoid() -> None:
    s = presets.get("humanoid")
    pos = s.rest_positions
    height = pos[:, 1].max() - pos[:, 1].min()
    assert 1.6 <= height <= 1.9, height  # about 1.75 m, Y up
    assert s.names[s.root] == "pelvis"
    assert s.end_effectors == ("head", "hand_l", "hand_r", "toe_l", "toe_r")
    spine = [n for n in s.names if n.startswith("spine")]
    assert len(spine) >= 3
    for name in ("neck", "head"):
        assert name in s.names
    for side in ("l", "r"):
        for part in ("clavicle", "shoulder", "elbow", "wrist", "hand", "hip", "knee", "ankle", "toe"):
            assert f"{part}_{side}" in s.names
    i = s.index
    # Y up: head above pelvis above knees above toes; left (+X) and right mirror each other.
    assert pos[i("head"), 1] > pos[i("neck"), 1] > pos[i("pelvis"), 1] > pos[i("knee_l"), 1] > pos[i("toe_l"), 1]
    assert pos[i("hand_l"), 0] > 0.5 and pos[i("hand_r"), 0] < -0.5
    np.testing.assert_allclose(
        pos[[i(f"{p}_l") for p in ("hip", "knee", "hand")]][:, 0],
        -pos[[i(f"{p}_r") for p in ("hip", "knee", "hand")]][:, 0],
    )
    # The spine is a chain from the pelvis to the neck; the limbs hang from the right places.
    path = [s.names[j] for j in s.path_to_root(i("head"))]
    assert path[0] == "pelvis" and path[-2:] == ["neck", "head"] and set(spine) <= set(path)
    for side in ("l", "r"):
        arm = [s.names[j] for j in s.path_to_root(i(f"hand_{side}"))]
        assert arm[-5:] == [f"{p}_{side}" for p in ("clavicle", "shoulder", "elbow", "wrist", "hand")]
        assert "chest" in arm or "neck" in arm
        leg = [s.names[j] for j in s.path_to_root(i(f"toe_{side}"))]
        assert leg == ["pelvis"] + [f"{p}_{side}" for p in ("hip", "knee", "ankle", "toe")]


def test_robot_arm_is_a_serial_chain_of_at_least_six_joints() -> None:
    s = presets.get("robot_arm")
    assert len(s) >= 6
    assert s.sub_bases == ()
    assert len(s.end_effectors) == 1
    assert len(s.chains) == 1 and len(s.chains[0]) == len(s)


def test_octopus_has_eight_tentacles_of_at_least_eight_segments() -> None:
    s = presets.get("octopus")
    hubs = [j for j in range(len(s)) if len(s.children(j)) >= 8]
    assert len(hubs) == 1  # the body, where the tentacles branch off
    (body,) = hubs
    tentacles = []
    for c in s.children(body):
        segments, j = 1, c
        while len(s.children(j)) == 1:
            j = s.children(j)[0]
            segments += 1
        if not s.children(j):  # an unbranched arm ending in an effector
            tentacles.append(segments)
    assert len([t for t in tentacles if t >= 8]) == 8, tentacles
    assert len(s.end_effectors) >= 8


def test_preset_names_are_readable() -> None:
    for name in presets.names():
        for joint in presets.get(name).names:
            assert joint.isascii() and joint.replace("_", "").isalnum() and joint == joint.lower(), joint
