"""OpenPose's JSON: the keypoints of the people in a picture, as OpenPose writes them (``--write_json``,
format version 1.3) with the canvas's size that ControlNet's OpenPose editor reads.

``{"version": 1.3, "people": [{"person_id": [-1], "pose_keypoints_2d": [x0, y0, c0, x1, ...],
"face_keypoints_2d": [], "hand_left_keypoints_2d": [...], "hand_right_keypoints_2d": [...],
"pose_keypoints_3d": [], "face_keypoints_3d": [], "hand_left_keypoints_3d": [],
"hand_right_keypoints_3d": []}, ...], "canvas_width": W, "canvas_height": H}``: one person per figure,
pixel coordinates (x right, y down), a missing keypoint ``0, 0, 0``; hands not asked for are ``[]``.
Coordinates are written to ``DECIMALS`` places.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.pictures.camera import check_size

VERSION = 1.3
DECIMALS = 3
# person dict key -> JSON key, and the keypoint counts each may have.
KEYS = {"pose": "pose_keypoints_2d", "hand_left": "hand_left_keypoints_2d", "hand_right": "hand_right_keypoints_2d"}
COUNTS = {"pose": (18, 25), "hand_left": (0, 21), "hand_right": (0, 21)}


def check_people(people: Any) -> list[dict[str, np.ndarray]]:
    """The people of ``openpose_keypoints`` checked: each a mapping with ``"pose"`` ``(18 or 25, 3)`` and
    optional ``"hand_left"``, ``"hand_right"`` ``(21 or 0, 3)``, finite; ``ValueError`` naming ``people``."""
    if isinstance(people, Mapping) or not isinstance(people, (list, tuple)):
        raise ValueError(f"people: expected a list of openpose_keypoints dicts, got {type(people).__name__}")
    out = []
    for i, person in enumerate(people):
        if not isinstance(person, Mapping) or "pose" not in person:
            got = "a dict without 'pose'" if isinstance(person, Mapping) else type(person).__name__
            raise ValueError(f"people[{i}]: expected a dict with 'pose' (openpose_keypoints), got {got}")
        checked = {}
        for key, counts in COUNTS.items():
            if key not in person:
                checked[key] = np.zeros((0, 3))
                continue
            try:
                arr = checks.real_array(person[key]).reshape(-1, 3) if np.size(person[key]) else np.zeros((0, 3))
            except (TypeError, ValueError, OverflowError):
                raise ValueError(f"people[{i}][{key!r}]: expected an (k, 3) array of x, y, confidence") from None
            if len(arr) not in counts or np.shape(person[key]) not in ((len(arr), 3), (0,), (0, 3)):
                want = " or ".join(f"({c}, 3)" for c in counts)
                raise ValueError(f"people[{i}][{key!r}]: expected shape {want}, got {np.shape(person[key])}")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"people[{i}][{key!r}]: keypoints must be finite (no NaN or inf)")
            checked[key] = arr
        out.append(checked)
    return out


def openpose_json(people: Any, width: Any, height: Any) -> dict[str, Any]:
    """The OpenPose JSON of ``people`` (``openpose_keypoints`` dicts) on a ``width`` x ``height`` canvas
    (module docstring); ``ValueError`` naming the argument for bad people or sizes (16..4096)."""
    checked = check_people(people)
    w, h = check_size(width, "width"), check_size(height, "height")

    def flat(arr: np.ndarray) -> list[float]:
        return [round(float(v), DECIMALS) for v in arr.reshape(-1)]

    return {
        "version": VERSION,
        "people": [
            {
                "person_id": [-1],
                "pose_keypoints_2d": flat(person["pose"]),
                "face_keypoints_2d": [],
                "hand_left_keypoints_2d": flat(person["hand_left"]),
                "hand_right_keypoints_2d": flat(person["hand_right"]),
                "pose_keypoints_3d": [],
                "face_keypoints_3d": [],
                "hand_left_keypoints_3d": [],
                "hand_right_keypoints_3d": [],
            }
            for person in checked
        ],
        "canvas_width": w,
        "canvas_height": h,
    }


def openpose_people(data: Any) -> tuple[list[dict[str, np.ndarray]], int, int]:
    """``(people, width, height)`` read back from an OpenPose JSON (a dict, as ``json.load`` gives it):
    the inverse of ``openpose_json``. ``ValueError`` naming ``data`` for anything else."""
    if not isinstance(data, Mapping) or not isinstance(data.get("people"), list):
        raise ValueError("data: expected an OpenPose JSON object with a 'people' list")
    w, h = (
        check_size(data.get("canvas_width"), "data['canvas_width']"),
        check_size(data.get("canvas_height"), "data['canvas_height']"),
    )
    people = []
    for i, person in enumerate(data["people"]):
        if not isinstance(person, Mapping):
            raise ValueError(f"data['people'][{i}]: expected an object, got {checks.quoted(person)}")
        raw = {}
        for key, name in KEYS.items():
            values = person.get(name, [])
            try:
                if not isinstance(values, list) or len(values) % 3:
                    raise TypeError
                raw[key] = np.array(values, dtype=float).reshape(-1, 3) if values else np.zeros((0, 3))
            except (TypeError, ValueError, OverflowError):
                raise ValueError(f"data['people'][{i}][{name!r}]: expected a flat list of x, y, confidence") from None
        people.append(raw)
    return check_people(people), w, h
