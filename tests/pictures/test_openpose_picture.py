"""OpenPose's JSON (format, round trip) and picture (controlnet_aux's limb and hand colours, sticks, dots)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fabrik3d
from fabrik3d.pictures import COCO_18, Camera, draw_openpose, openpose_json, openpose_keypoints, openpose_people
from fabrik3d.pictures.draw import HAND_EDGES, LIMBS, stick_width

SK = fabrik3d.presets.get("humanoid")
# controlnet_aux open_pose/util.py: its 18 colours, its limbs (1-based) and its limbs' 0.6 of the colour.
OPENPOSE_COLORS = [[255, 0, 0], [255, 85, 0], [255, 170, 0], [255, 255, 0], [170, 255, 0], [85, 255, 0], [0, 255, 0],
                   [0, 255, 85], [0, 255, 170], [0, 255, 255], [0, 170, 255], [0, 85, 255], [0, 0, 255], [85, 0, 255],
                   [170, 0, 255], [255, 0, 255], [255, 0, 170], [255, 0, 85]]  # fmt: skip
OPENPOSE_LIMBS = [[2, 3], [2, 6], [3, 4], [4, 5], [6, 7], [7, 8], [2, 9], [9, 10], [10, 11], [2, 12], [12, 13],
                  [13, 14], [2, 1], [1, 15], [15, 17], [1, 16], [16, 18]]  # fmt: skip


def person(camera: Camera, **kwargs) -> dict:
    r = fabrik3d.solve(SK, {"hand_l": (0.55, 1.0, 0.3), "hand_r": (-0.55, 1.0, 0.3)})
    return openpose_keypoints(SK, r.positions, r.rotations, camera, **kwargs)


FRONT = Camera((0.0, 1.0, 4.0), (0.0, 0.95, 0.0), (0.0, 1.0, 0.0), view_angle=32.0, width=512, height=640)


def test_the_json_is_openposes_with_the_canvas() -> None:
    kp = person(FRONT)
    data = json.loads(json.dumps(openpose_json([kp, kp], 512, 640)))
    assert data["version"] == 1.3 and data["canvas_width"] == 512 and data["canvas_height"] == 640
    assert len(data["people"]) == 2
    one = data["people"][0]
    assert len(one["pose_keypoints_2d"]) == 54
    assert len(one["hand_left_keypoints_2d"]) == 63 and len(one["hand_right_keypoints_2d"]) == 63
    assert one["face_keypoints_2d"] == [] and one["pose_keypoints_3d"] == []
    np.testing.assert_allclose(np.reshape(one["pose_keypoints_2d"], (18, 3)), kp["pose"], atol=5e-4)
    no_hands = openpose_json([person(FRONT, hands=False)], 512, 640)["people"][0]
    assert no_hands["hand_left_keypoints_2d"] == [] and no_hands["hand_right_keypoints_2d"] == []
    feet = openpose_json([person(FRONT, feet=True)], 512, 640)["people"][0]
    assert len(feet["pose_keypoints_2d"]) == 75


def test_the_json_reads_back() -> None:
    kp = person(FRONT, feet=True)
    people, w, h = openpose_people(json.loads(json.dumps(openpose_json([kp], 512, 640))))
    assert (w, h) == (512, 640) and len(people) == 1
    for key in ("pose", "hand_left", "hand_right"):
        np.testing.assert_allclose(people[0][key], kp[key], atol=5e-4)
    np.testing.assert_array_equal(draw_openpose(people, w, h), draw_openpose([kp], w, h))


@settings(max_examples=30, deadline=None)
@given(
    pose=hnp.arrays(float, st.sampled_from([(18, 3), (25, 3)]), elements=st.floats(0, 4000)),
    hand=hnp.arrays(float, (21, 3), elements=st.floats(0, 4000)),
    width=st.integers(16, 4096),
    height=st.integers(16, 4096),
)
def test_any_people_round_trip(pose, hand, width, height) -> None:
    data = openpose_json([{"pose": pose, "hand_left": hand, "hand_right": hand[::-1]}], width, height)
    people, w, h = openpose_people(json.loads(json.dumps(data)))
    assert (w, h) == (width, height)
    np.testing.assert_allclose(people[0]["pose"], pose, atol=5e-4)
    np.testing.assert_allclose(people[0]["hand_right"], hand[::-1], atol=5e-4)


def test_limb_and_joint_colours_are_openposes() -> None:
    kp = person(FRONT)
    image = draw_openpose([kp], 512, 640)
    assert image.shape == (640, 512, 3) and image.dtype == np.uint8
    assert (image[0, 0] == 0).all() and (image[-1, -1] == 0).all()
    pose = kp["pose"]
    checked = 0
    for i, (a, b) in enumerate(OPENPOSE_LIMBS):
        pa, pb = pose[a - 1, :2], pose[b - 1, :2]
        if np.linalg.norm(pa - pb) < 40:
            continue  # (a short limb's middle lies under its joints' dots)
        mx, my = int((pa[0] + pb[0]) / 2), int((pa[1] + pb[1]) / 2)
        later = [pose[[c - 1, d - 1], :2] for c, d in OPENPOSE_LIMBS[i + 1 :]]
        if any(_near_segment(s, (mx, my), 2 * stick_width(512, 640) + 2) for s in later):
            continue  # (a limb drawn later covers this one's middle)
        want = [int(float(c) * 0.6) for c in OPENPOSE_COLORS[i]]
        assert image[my, mx].tolist() == want, (i, image[my, mx].tolist(), want)
        checked += 1
    assert checked >= 12
    for name in ("shoulder_r", "elbow_l", "knee_r", "ankle_l", "hip_l"):
        k = COCO_18.index(name)
        x, y = int(pose[k, 0]), int(pose[k, 1])
        assert image[y, x].tolist() == OPENPOSE_COLORS[k], name


def _near_segment(seg: np.ndarray, point: tuple[int, int], distance: float) -> bool:
    a, b = seg
    ab = b - a
    t = np.clip(np.dot(np.array(point) - a, ab) / max(np.dot(ab, ab), 1e-9), 0, 1)
    return float(np.linalg.norm(a + t * ab - np.array(point))) < distance


def synthetic_hand(x0: float, y0: float) -> np.ndarray:
    """A big open hand: the wrist at (x0, y0), each finger a straight ray of four keypoints 40 px apart."""
    out = [[x0, y0, 1.0]]
    for f in range(5):
        angle = math.radians(-150 + 30 * f)
        out += [[x0 + 40 * k * math.cos(angle), y0 + 40 * k * math.sin(angle), 1.0] for k in range(1, 5)]
    return np.array(out)


def test_hand_bones_take_openposes_hsv_colours_and_dots_are_blue() -> None:
    import colorsys

    hand = synthetic_hand(300.0, 300.0)
    none = np.zeros((18, 3))
    image = draw_openpose([{"pose": none, "hand_left": hand, "hand_right": np.zeros((0, 3))}], 600, 600)
    for i, (a, b) in enumerate(HAND_EDGES):
        mx, my = (int(hand[a, 0]) + int(hand[b, 0])) // 2, (int(hand[a, 1]) + int(hand[b, 1])) // 2
        want = [round(v * 255) for v in colorsys.hsv_to_rgb(i / 20, 1.0, 1.0)]
        assert np.abs(image[my, mx].astype(int) - want).max() <= 1, (i, image[my, mx].tolist(), want)
    for x, y, _ in hand:
        assert image[int(y), int(x)].tolist() == [0, 0, 255]
    assert (draw_openpose([{"pose": none, "hand_left": hand}], 600, 600, hands=False) == 0).all()


def test_missing_keypoints_and_their_limbs_are_not_drawn() -> None:
    pose = np.zeros((18, 3))
    pose[COCO_18.index("shoulder_r")] = (100, 100, 1)
    pose[COCO_18.index("elbow_r")] = (100, 200, 0)  # (missing)
    image = draw_openpose([{"pose": pose}], 256, 256)
    assert image[150, 100].tolist() == [0, 0, 0]
    assert image[100, 100].tolist() == OPENPOSE_COLORS[2]


def test_the_stick_is_scaled_to_the_canvas() -> None:
    for size, half in ((256, 4), (512, 8), (1024, 12), (2048, 16)):
        pose = np.zeros((18, 3))
        pose[COCO_18.index("neck")] = (size * 0.2, size * 0.5, 1)
        pose[COCO_18.index("shoulder_r")] = (size * 0.8, size * 0.5, 1)
        image = draw_openpose([{"pose": pose}], size, size)
        column = image[:, size // 2]
        lit = np.flatnonzero(column.any(axis=1))
        assert len(lit) == 2 * stick_width(size, size) + 1, size
        assert stick_width(size, size) == (4 if size < 500 else half), size


def test_a_body_25_person_is_drawn_with_its_feet() -> None:
    kp = person(Camera((2.0, 0.4, 2.0), (0.0, 0.2, 0.0), (0.0, 1.0, 0.0), view_angle=25.0), feet=True)
    image = draw_openpose([kp], 512, 512)
    for k, color in ((19, [0, 0, 255]), (22, [0, 255, 255])):
        if kp["pose"][k, 2]:
            x, y = int(kp["pose"][k, 0]), int(kp["pose"][k, 1])
            assert image[y, x].tolist() == color


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: openpose_json([], 4097, 512), "width"),
        (lambda: openpose_json([], 512, 0), "height"),
        (lambda: openpose_json({"pose": np.zeros((18, 3))}, 512, 512), "people"),
        (lambda: openpose_json([{"pose": np.zeros((17, 3))}], 512, 512), "people"),
        (lambda: openpose_json([{"pose": np.full((18, 3), np.nan)}], 512, 512), "people"),
        (lambda: openpose_json([{"hand_left": np.zeros((21, 3))}], 512, 512), "people"),
        (lambda: draw_openpose([], 8, 512), "width"),
        (lambda: draw_openpose([], 512, 512.5), "height"),
        (lambda: draw_openpose([{"pose": np.zeros((18, 3)), "hand_left": np.zeros((20, 3))}], 64, 64), "people"),
        (lambda: draw_openpose([], 64, 64, hands="no"), "hands"),
        (lambda: openpose_people({"people": "x"}), "data"),
        (lambda: openpose_people({"people": [], "canvas_width": 9000, "canvas_height": 64}), "canvas_width"),
        (
            lambda: openpose_people(
                {"people": [{"pose_keypoints_2d": ["a", 1, 2]}], "canvas_width": 64, "canvas_height": 64}
            ),
            "pose_keypoints_2d",
        ),
    ],
)
def test_bad_input_is_a_one_line_error_naming_the_argument(call, named) -> None:
    with pytest.raises(ValueError, match=named) as info:
        call()
    assert "\n" not in str(info.value)


def test_limbs_table_is_openposes() -> None:
    assert [[a + 1, b + 1] for a, b in LIMBS] == OPENPOSE_LIMBS
