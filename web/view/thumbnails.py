"""Thumbnails of the starter poses (issue 51, item 6), rendered by the project itself: each starter pose
applied to the humanoid's relaxed stance, its mannequin skinned into the pose and rendered off screen by
the Picture renderer (``fabrik3d_web.view.picture.render_picture``), ``SIZE`` pixels square; a hand shape
(a pose of finger bones only) shows the left hand close up.

Made once per server process, on a worker thread after the server is up (``starter_thumbnails``; about
1 s for the 18 poses here, 3 to 4 s with the two cores busy), so a cold server starts as fast as before
(1.84 s to answering with them, 1.85 s without; the library's rows get their pictures when the renders
are done), and kept in memory (``cached``).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import vtkmodules.vtkRenderingOpenGL2  # noqa: F401  (the OpenGL render window)
from vtkmodules.vtkRenderingCore import vtkRenderer

import fabrik3d
from fabrik3d.model.mannequin import Mannequin, mannequin_mesh
from fabrik3d.model.pose_library import part_of

from .body_view import WOOD
from .picture import PictureSettings, render_picture
from .vtk_parts import body_actor

SIZE = 112  # pixels, square
BACKGROUND = (0.95, 0.95, 0.96)
# Where the camera looks from (toward the body's front, a little from its left and above), and for a
# hand shape (the back of the left hand, from its outer side).
BODY_VIEW = (0.55, 0.25, 1.0)
HAND_VIEW = (-1.0, 0.2, 0.6)
HAND = "wrist_l"  # (its subtree: the palm and the fingers)
MARGIN = 1.08  # the framing's room around the body

_made: dict[str, bytes] = {}
_lock = threading.Lock()


def cached() -> dict[str, bytes]:
    """The thumbnails made so far (name -> PNG bytes; empty until ``starter_thumbnails`` ran)."""
    return _made


def starter_thumbnails() -> dict[str, bytes]:
    """name -> PNG bytes of every starter pose (rendered the first time, then the cache; thread safe)."""
    with _lock:
        if not _made:
            _made.update(render_thumbnails(fabrik3d.starter_poses()))
    return _made


def render_thumbnails(poses: dict[str, Any], size: int = SIZE) -> dict[str, bytes]:
    """name -> PNG of each pose of ``poses`` (``fabrik3d.Pose``) on the humanoid, ``size`` pixels square."""
    from ..document.controller import Controller  # (the relaxed stance the page opens on)

    c = Controller(None, "humanoid")
    sk, base = c.scene.skeleton, c.result
    joints = mannequin_mesh(sk)[2]  # (each vertex's joint, in ``Mannequin.of``'s order)
    body = Mannequin.of(sk)
    hand = _subtree(sk, sk.index(HAND))
    in_hand = np.isin(joints, hand)
    out = {}
    for name, pose in poses.items():
        positions, rotations = fabrik3d.apply_pose(sk, base.positions, base.rotations, pose)
        points, norms = body.skinned(positions, rotations)
        hand_only = bool(pose.bones) and all(part_of(r) == "hands" for r in pose.bones) and pose.pelvis is None
        triangles = body.triangles[in_hand[body.triangles].all(axis=1)] if hand_only else body.triangles
        actor = body_actor(points, norms, triangles, WOOD)
        framed = points[in_hand] if hand_only else points
        renderer = vtkRenderer()
        _frame(renderer, framed, HAND_VIEW if hand_only else BODY_VIEW)
        settings = PictureSettings(width=size, height=size, background=BACKGROUND, light="studio")
        out[name] = render_picture([actor], renderer, settings)
    return out


def _subtree(sk: Any, root: int) -> list[int]:
    inside, found = {root}, True
    while found:
        found = False
        for j, parent in enumerate(sk.parents):
            if parent in inside and j not in inside:
                inside.add(j)
                found = True
    return sorted(inside)


def _frame(renderer: vtkRenderer, points: np.ndarray, toward: tuple[float, float, float]) -> None:
    """An orthographic camera looking from direction ``toward`` (Y up) framing ``points`` tightly."""
    d = np.asarray(toward, dtype=float)
    d /= np.linalg.norm(d)
    right = np.cross((0.0, 1.0, 0.0), d)
    right /= np.linalg.norm(right)
    up = np.cross(d, right)
    x, y = points @ right, points @ up
    centre = points.mean(axis=0)
    mid = centre + right * ((x.max() + x.min()) / 2 - centre @ right) + up * ((y.max() + y.min()) / 2 - centre @ up)
    half = MARGIN * max(x.max() - x.min(), y.max() - y.min()) / 2
    reach = float(np.ptp(points @ d)) + 4.0 * half
    camera = renderer.GetActiveCamera()
    camera.SetParallelProjection(True)
    camera.SetFocalPoint(*mid)
    camera.SetPosition(*(mid + d * reach))
    camera.SetViewUp(*up)
    camera.SetParallelScale(max(half, 1e-3))
