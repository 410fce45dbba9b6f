"""Bad input at the library's boundary: what is not a skeleton, and coordinates that are not real
numbers (complex, booleans, strings), are refused with an error naming the argument (issue 15)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fabrik3d
from fabrik3d import Skeleton, Target, solve, solve_batch
from fabrik3d.model import presets
from fabrik3d.solver.rig import pose_frames

HUMANOID = presets.get("humanoid")
HAND = [0.45, 1.2, 0.35]
NOT_REAL = {
    "complex in a list": [0.3 + 1j, 1.2, 0.3],
    "complex array with no imaginary part": np.array(HAND, dtype=complex),
    "booleans": [True, False, True],
    "numeric strings": ["0.45", "1.2", "0.35"],
}


@pytest.mark.parametrize("call", [solve, solve_batch, lambda s, t: pose_frames(s, np.zeros((65, 3)))])
@pytest.mark.parametrize("skeleton", ["humanoid", None, {"joints": []}, HUMANOID.to_dict()])
def test_what_is_not_a_skeleton_is_a_type_error_naming_the_argument(call, skeleton) -> None:
    with pytest.raises(TypeError, match=r"^skeleton: expected a fabrik3d\.Skeleton, got "):
        call(skeleton, {})


def test_a_preset_name_in_place_of_a_skeleton_says_how_to_get_one() -> None:
    with pytest.raises(TypeError, match=r"fabrik3d\.presets\.get\('humanoid'\)"):
        solve("humanoid", {"hand_l": HAND})
    with pytest.raises(ValueError):  # solve_batch's callers caught a ValueError before: still one
        solve_batch("humanoid", {"hand_l": HAND})


@pytest.mark.parametrize("value", NOT_REAL.values(), ids=NOT_REAL.keys())
def test_coordinates_must_be_real_numbers_everywhere(value) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning either: refused before any cast
        with pytest.raises(ValueError, match=r"^targets\['hand_l'\]: expected three numbers, got"):
            solve(HUMANOID, {"hand_l": value})
        with pytest.raises(ValueError, match=r"^position: expected three numbers, got"):
            Target(value)
        with pytest.raises(ValueError, match=r"^root_target"):
            solve(HUMANOID, {"hand_l": HAND}, root_target=value)
        with pytest.raises(ValueError, match=r"^poles\['hand_l'\]"):
            solve(HUMANOID, {"hand_l": HAND}, poles={"hand_l": value})
        with pytest.raises(ValueError, match=r"^positions"):
            solve(HUMANOID, {"hand_l": HAND}, positions=np.array([value] * len(HUMANOID)))
        with pytest.raises(ValueError, match=r"^targets\['hand_l'\]"):
            solve_batch(HUMANOID, {"hand_l": np.array([value] * 3)})
        with pytest.raises(ValueError, match=r"^rest_positions"):
            Skeleton(["a", "b"], [-1, 0], [[0.0, 0.0, 0.0], value])


def test_a_complex_quaternion_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^orientation: expected a quaternion"):
        Target(HAND, [0.0, 0.0, 0.0, 1.0 + 0j])
    with pytest.raises(ValueError, match=r"orientations"):
        solve_batch(HUMANOID, {"hand_l": (np.array([HAND] * 3), np.array([[0, 0, 0, 1 + 0j]] * 3))})


def test_real_numbers_of_every_kind_are_still_taken() -> None:
    want = solve(HUMANOID, {"hand_l": HAND}).positions
    for value in ([45 / 100, 1.2, 0.35], [np.float64(0.45), np.float64(1.2), 0.35], (0.45, 1.2, 0.35)):
        np.testing.assert_array_equal(solve(HUMANOID, {"hand_l": value}).positions, want)
    ints = solve(HUMANOID, {"hand_l": [0, 1, 0]})
    assert np.isfinite(ints.positions).all()
    assert fabrik3d.solve_chain(np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0]]), [1, 1, 0]).reached
