"""Pictures for image generators: OpenPose's keypoints of a posed figure, their JSON, and OpenPose's picture.

A layer above the solver (docs/architecture.md), on numpy only. ``Camera`` and ``project``
(``camera``): a camera as VTK's defines it and the projection of world points into its picture;
``openpose_keypoints`` (``openpose``): one person's keypoints, from its joints and the landmarks of
``landmarks`` (face, feet, hands), hidden ones by ``occlusion``; ``openpose_json`` and
``openpose_people`` (``json_format``): OpenPose's JSON and back; ``draw_openpose`` (``draw``): the
picture. The conventions and their sources: docs/control-images.md.
"""

from fabrik3d.pictures.camera import Camera, project
from fabrik3d.pictures.draw import draw_openpose
from fabrik3d.pictures.json_format import openpose_json, openpose_people
from fabrik3d.pictures.openpose import BODY_25, COCO_18, HAND_21, openpose_keypoints

__all__ = [
    "BODY_25",
    "COCO_18",
    "HAND_21",
    "Camera",
    "draw_openpose",
    "openpose_json",
    "openpose_keypoints",
    "openpose_people",
    "project",
]
