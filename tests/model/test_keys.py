"""Keys and the curves between them (fabrik3d.model.keys, fabrik3d.model.curves)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik3d import rotations as rot
from fabrik3d.animation import MAX_FRAME, Animation, Key, interpolate, slerp_curve
from fabrik3d.model import presets
from fabrik3d.model.targets import Target

MODES = ("linear", "ease", "smooth")


frames_strategy = st.lists(st.integers(0, 500), min_size=2, max_size=7, unique=True).map(sorted)


@settings(max_examples=60, deadline=None)
@given(frames=frames_strategy, seed=st.integers(0, 2**31), mode=st.sampled_from(MODES))
def test_every_curve_passes_through_its_keys_exactly(frames: list[int], seed: int, mode: str) -> None:
    f = np.array(frames, dtype=float)
    v = np.random.default_rng(seed).uniform(-2, 2, (len(f), 3))
    np.testing.assert_allclose(interpolate(f, v, f, mode), v, rtol=0, atol=1e-12)
    # held before the first key and after the last
    np.testing.assert_array_equal(interpolate(f, v, [f[0] - 10, f[-1] + 10], mode), v[[0, -1]])


@settings(max_examples=60, deadline=None)
@given(frames=frames_strategy, seed=st.integers(0, 2**31), mode=st.sampled_from(("linear", "ease")))
def test_linear_and_ease_stay_between_their_neighbouring_keys(frames: list[int], seed: int, mode: str) -> None:
    f = np.array(frames, dtype=float)
    v = np.random.default_rng(seed).uniform(-2, 2, (len(f), 1))
    at = np.linspace(f[0], f[-1], 97)
    out = interpolate(f, v, at, mode)[:, 0]
    i = np.clip(np.searchsorted(f, at, side="right") - 1, 0, len(f) - 2)
    lo, hi = np.minimum(v[i, 0], v[i + 1, 0]), np.maximum(v[i, 0], v[i + 1, 0])
    assert np.all(out >= lo - 1e-12) and np.all(out <= hi + 1e-12)


def _velocity(f: np.ndarray, v: np.ndarray, at: float, mode: str, side: float, h: float = 1e-6) -> np.ndarray:
    a, b = (at, at + side * h) if side > 0 else (at - h, at)
    return (interpolate(f, v, [b], mode) - interpolate(f, v, [a], mode))[0] / h


@settings(max_examples=60, deadline=None)
@given(
    frames=st.lists(st.integers(0, 500), min_size=3, max_size=7, unique=True).map(sorted),
    seed=st.integers(0, 2**31),
)
def test_smooth_is_continuous_in_velocity_at_keys_and_still_at_its_ends(frames: list[int], seed: int) -> None:
    f = np.array(frames, dtype=float)
    v = np.random.default_rng(seed).uniform(-2, 2, (len(f), 3))
    for k in range(1, len(f) - 1):
        left, right = _velocity(f, v, f[k], "smooth", -1), _velocity(f, v, f[k], "smooth", +1)
        np.testing.assert_allclose(left, right, atol=1e-4)
        # the slope at an inner key is the slope from the key before to the key after
        np.testing.assert_allclose(right, (v[k + 1] - v[k - 1]) / (f[k + 1] - f[k - 1]), atol=1e-4)
    for end, side in ((f[0], +1), (f[-1], -1)):
        np.testing.assert_allclose(_velocity(f, v, end, "smooth", side), 0.0, atol=1e-4)


def test_the_modes_differ_as_documented() -> None:
    f, v = np.array([0.0, 10.0]), np.array([[0.0], [1.0]])
    assert interpolate(f, v, [5], "linear")[0, 0] == pytest.approx(0.5)
    assert interpolate(f, v, [2.5], "linear")[0, 0] == pytest.approx(0.25)
    assert interpolate(f, v, [2.5], "ease")[0, 0] == pytest.approx(0.15625)  # 3u^2 - 2u^3 at u = 1/4
    assert interpolate(f, v, [2.5], "smooth")[0, 0] == pytest.approx(0.15625)  # two keys: still at both ends
    # ease stops at every key; smooth runs through inner keys
    f3, v3 = np.array([0.0, 10.0, 20.0]), np.array([[0.0], [1.0], [2.0]])
    assert np.allclose(_velocity(f3, v3, 10.0, "ease", +1), 0.0, atol=1e-4)
    assert _velocity(f3, v3, 10.0, "smooth", +1)[0] == pytest.approx(0.1, abs=1e-4)


def test_slerp_curve_turns_along_the_shorter_arc_and_stays_unit() -> None:
    a = rot.IDENTITY
    b = rot.axis_angle((0.0, 1.0, 0.0), math.radians(90))
    f = np.array([0.0, 10.0])
    q = np.array([a, b])
    out = slerp_curve(f, q, np.linspace(0, 10, 11), "linear")
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(out[[0, -1]], q, atol=1e-12)
    assert math.degrees(rot.angle_between(tuple(out[5]), a)) == pytest.approx(45.0, abs=1e-6)
    # the same rotation with the other sign is not a turn the long way round
    out = slerp_curve(f, np.array([a, tuple(-x for x in b)]), [5.0], "linear")
    assert math.degrees(rot.angle_between(tuple(out[0]), a)) == pytest.approx(45.0, abs=1e-6)


# -- keys and animations ----------------------------------------------------------------------------------------


def test_each_goal_runs_through_the_keys_that_hold_it_and_holds_outside() -> None:
    anim = Animation(
        (
            Key(0, {"hand_l": [0.0, 1.0, 0.0]}),
            Key(10, {"hand_l": [1.0, 1.0, 0.0], "hand_r": [0.0, 2.0, 0.0]}, poles={"hand_l": [0, 0, -1]}),
            Key(20, {"hand_r": [0.0, 3.0, 0.0]}, root_target=[0, 1, 0]),
        ),
        interpolation="linear",
    )
    g = anim.goals([0, 5, 10, 15, 20, 30])
    np.testing.assert_allclose([x.targets["hand_l"].position[0] for x in g], [0, 0.5, 1, 1, 1, 1])
    np.testing.assert_allclose([x.targets["hand_r"].position[1] for x in g], [2, 2, 2, 2.5, 3, 3])
    assert all(x.root_target is not None and x.root_target.position[1] == 1.0 for x in g)
    assert all(np.array_equal(x.poles["hand_l"], [0, 0, -1]) for x in g)
    assert anim.goals_at(5).targets["hand_l"].position[0] == pytest.approx(0.5)
    assert Animation().goals_at(3) == ({}, None, {})  # no keys: nothing targeted


def test_orientation_targets_are_slerped_between_the_keys_that_hold_one() -> None:
    q90 = rot.axis_angle((0.0, 0.0, 1.0), math.radians(90))
    anim = Animation(
        (
            Key(0, {"hand_l": Target([0, 1, 0], rot.IDENTITY)}),
            Key(10, {"hand_l": [0.5, 1, 0]}),  # no orientation here: the orientation curve skips it
            Key(20, {"hand_l": Target([1, 1, 0], q90)}),
        ),
        interpolation="linear",
    )
    t = anim.goals_at(10).targets["hand_l"]
    assert math.degrees(rot.angle_between(tuple(t.orientation), rot.IDENTITY)) == pytest.approx(45.0, abs=1e-6)


def test_editing_keys_gives_new_animations() -> None:
    anim = Animation((Key(0, {"hand_l": [0, 1, 0]}), Key(30, {"hand_l": [1, 1, 0]})))
    assert [k.frame for k in anim.with_key(Key(15, {"hand_l": [0, 2, 0]})).keys] == [0, 15, 30]
    replaced = anim.with_key(Key(30, {"hand_l": [2, 2, 2]}))
    assert [k.frame for k in replaced.keys] == [0, 30] and replaced.key_at(30).targets["hand_l"].position[0] == 2
    assert [k.frame for k in anim.without_key(0).keys] == [30]
    moved = anim.with_key_moved(30, 45)
    assert [k.frame for k in moved.keys] == [0, 45] and moved.last == 45 and anim.last == 30
    with pytest.raises(ValueError, match="frame 30: there is a key on this frame already"):
        anim.with_key_moved(0, 30)
    with pytest.raises(ValueError, match="frame 7: there is no key on this frame"):
        anim.without_key(7)
    assert list(Animation(start=5).frames) == [5] and list(Animation(end=3).frames) == [0, 1, 2, 3]


def test_json_round_trip_keeps_every_goal() -> None:
    q = rot.axis_angle((0.0, 1.0, 0.0), 0.3)
    anim = Animation(
        (
            Key(
                0,
                {"hand_l": [0.1, 1.2, 0.3], "hand_r": Target([0, 1, 0], q, 0.5)},
                [0, 0.9, 0],
                {"hand_l": [0, 0, -1]},
            ),
            Key(12, {"hand_l": [0.2, 1.3, 0.3]}),
        ),
        fps=24,
        start=0,
        end=40,
        interpolation="ease",
    )
    back = Animation.from_dict(anim.to_dict())
    assert back.to_dict() == anim.to_dict()
    assert back.fps == 24 and back.end == 40 and back.interpolation == "ease"
    t = back.key_at(0).targets["hand_r"]
    np.testing.assert_allclose(t.orientation, q)
    assert t.weight == 0.5


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Key(-1), r"frame -1 is outside 0\.\."),
        (lambda: Key(MAX_FRAME + 1), r"is outside 0\.\."),
        (lambda: Key(1.5), "expected a whole frame number"),
        (lambda: Key(float("nan")), "expected a whole frame number"),
        (lambda: Key(True), "expected a frame number"),
        (lambda: Key(3, {"hand_l": [0, float("nan"), 0]}), r"key at frame 3: targets\.hand_l: coordinates must be"),
        (lambda: Key(3, {"hand_l": {"position": [0, 0, 0], "orientation": [0, 0, 0, 2]}}), "not a unit quaternion"),
        (lambda: Key(3, {"hand_l": {"pos": [0, 0, 0]}}), r"targets\.hand_l: expected \[x, y, z\]"),
        (lambda: Key(3, poles={"hand_l": [0, 0]}), r"poles\.hand_l: expected shape \(3,\)"),
        (lambda: Key(3, targets=[1, 2]), "targets: expected an object"),
        (lambda: Animation((Key(4), Key(4))), "two keys on frame 4"),
        (lambda: Animation(fps=0), "fps: must be finite and > 0"),
        (lambda: Animation(fps=float("inf")), "fps: must be finite and > 0"),
        (lambda: Animation(fps=5000), "fps: must be at most 1000"),
        (lambda: Animation(start=10, end=5), "end: frame 5 is before start 10"),
        (lambda: Animation(interpolation="cubic"), "interpolation: expected one of linear, ease, smooth"),
        (lambda: Animation.from_dict({"keys": [{"frame": 0}, {"frame": "x"}]}), r"animation\.keys\[1\]: .*frame"),
        (lambda: Animation.from_dict({"keys": [{"frame": 0, "extra": 1}]}), r"keys\[0\]: unknown field 'extra'"),
        (lambda: Animation.from_dict({"keys": {}}), r"animation\.keys: expected a list"),
        (lambda: Animation.from_dict({"speed": 2}), "unknown field 'speed'"),
        (lambda: Animation.from_dict({"fps": -1}), r"animation\.fps: must be finite"),
        (lambda: Animation().goals([float("nan")]), "frames: expected finite frame numbers"),
    ],
)
def test_bad_keys_fail_clearly(make, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_keys_on_joints_that_are_not_effectors_are_named() -> None:
    body = presets.get("humanoid")
    Animation((Key(0, {"hand_l": [0, 1, 0]}),)).check(body)
    with pytest.raises(ValueError, match=r"key at frame 2: targets\.elbow_l: not an end effector; valid names are"):
        Animation((Key(2, {"elbow_l": [0, 1, 0]}),)).check(body)
    with pytest.raises(ValueError, match=r"key at frame 5: poles\.hadn_l: not an end effector"):
        Animation((Key(5, poles={"hadn_l": [0, 1, 0]}),)).check(body)


def test_a_key_moved_out_of_the_range_is_refused_before_any_change() -> None:
    anim = Animation((Key(0, {"hand_l": [0, 1, 0]}), Key(30, {"hand_l": [1, 1, 0]})), start=0, end=40)
    for to in (41, 2_592_000):
        with pytest.raises(ValueError, match=rf"^to: frame {to} is outside the range 0\.\.40$"):
            anim.with_key_moved(30, to)
    assert [k.frame for k in anim.keys] == [0, 30]
    later = Animation((Key(10, {"hand_l": [0, 1, 0]}),), start=5)
    with pytest.raises(ValueError, match=r"^to: frame 4 is outside the range 5\.\.10$"):
        later.with_key_moved(10, 4)
    assert [k.frame for k in later.with_key_moved(10, 50).keys] == [50]  # (no end: the range grows)
    assert [k.frame for k in anim.with_key_moved(30, 40).keys] == [0, 40]


@settings(max_examples=60, deadline=None)
@given(
    frame=st.integers(0, MAX_FRAME),
    points=st.dictionaries(
        st.sampled_from(["hand_l", "hand_r", "head", "toe_l"]),
        st.tuples(*[st.one_of(st.floats(-1e9, 1e9), st.integers(-(10**9), 10**9))] * 3).map(list),
        max_size=4,
    ),
)
def test_a_plain_key_reads_as_the_checked_one(frame: int, points: dict) -> None:
    """The common form (an integer frame, targets as three numbers) is read on a fast path
    (``keys._plain_key``): it gives the key the checked constructor gives."""
    read = Key.from_dict({"frame": frame, "targets": points})
    made = Key(frame, {k: Target(np.array(v, dtype=float)) for k, v in points.items()})
    assert read.to_dict() == made.to_dict()
    for k, t in read.targets.items():
        assert t.position.dtype == np.float64 and t.orientation is None and t.weight == 1.0
        assert t.position.flags.writeable and not np.shares_memory(t.position, made.targets[k].position)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"frame": True, "targets": {}}, "key: key at frame True: frame: expected a frame number"),
        ({"frame": MAX_FRAME + 1, "targets": {}}, "is outside 0..2592000"),
        ({"frame": 3, "targets": {"hand_l": [1.0, 2.0]}}, r"targets.hand_l: expected shape \(3,\)"),
        ({"frame": 3, "targets": {"hand_l": [1.0, math.nan, 2.0]}}, "targets.hand_l: coordinates must be finite"),
        ({"frame": 3, "targets": {"hand_l": [1.0, True, 2.0]}}, "targets.hand_l: expected three numbers"),
        ({"frame": 3, "targets": {3: [1.0, 1.0, 2.0]}}, "targets: expected an object mapping effector names"),
    ],
)
def test_what_the_fast_path_does_not_read_gets_the_checked_errors(data: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Key.from_dict(data)
