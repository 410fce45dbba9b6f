"""Control images from the notebook view (issue 54): ``SkeletonView.control_images`` gives the pose
shown as OpenPose, depth, normal and outline pictures (the web package's renderer), the keypoints
where the library puts them for the same camera."""

from __future__ import annotations

import numpy as np
from conftest import require_notebook

import fabrik3d

SkeletonView = require_notebook().SkeletonView

BODY = fabrik3d.presets.get("humanoid")


def test_the_notebook_view_renders_the_pose_shown_as_control_images() -> None:
    view = SkeletonView(BODY, {"hand_l": [0.35, 1.7, 0.2]})
    got = view.control_images(size=(256, 320))
    for name in ("openpose", "normal"):
        assert getattr(got, name).shape == (320, 256, 3)
    assert got.depth.shape == (320, 256) and got.outline.shape[:2] == (320, 256)
    assert float(got.depth.max()) > 0.0 and float(got.depth[0, 0]) == 0.0  # (the body near, the corner empty)
    assert np.count_nonzero(got.openpose) > 100  # (the skeleton drawn on black)
    people = got.keypoints["people"]
    assert len(people) == 1 and got.keypoints["canvas_width"] == 256
    # (the raised left hand: OpenPose's left wrist above its left shoulder in the picture, y down)
    pose = np.array(people[0]["pose_keypoints_2d"]).reshape(-1, 3)
    assert pose[7, 1] < pose[5, 1]
