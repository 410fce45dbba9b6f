"""Which keypoints the body hides from the camera: a depth test against the mannequin's parts.

The body is the skeleton's mannequin (``fabrik3d.model.mannequin``: ellipsoids round the bones, balls at
the joints, the head and the pelvis; for a character, the mannequin of its roles: an approximation of
its own mesh), posed. A keypoint is hidden when a triangle of the mannequin covers its pixel more than
``MARGIN`` (scene units at a 1.75 m body, scaled with it) nearer the camera than the keypoint, the parts
of its own joints left out: a joint lies inside its own ball and bones (those bound to the joint and to
its parent), a surface point (the face's) on its own part's surface, which the margin leaves out. It is
approximate: the mannequin's ellipsoids are polygons (16 round, 10 along), and the parts of a keypoint's
own joints never hide it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fabrik3d.model.mannequin import Mannequin, mannequin_mesh
from fabrik3d.pictures.camera import Camera, project
from fabrik3d.pictures.landmarks import body_scale

# A surface this far in front of a keypoint hides it (scene units at a 1.75 m body).
MARGIN = 0.01


def _body(skeleton: Any) -> tuple[Mannequin, np.ndarray]:
    """The skeleton's mannequin and the joint each triangle is bound to (cached on the skeleton)."""
    made = skeleton.__dict__.get("_pictures_body")
    if made is None:
        joints = mannequin_mesh(skeleton)[2]
        m = Mannequin.of(skeleton)
        made = skeleton.__dict__["_pictures_body"] = (m, joints[m.triangles[:, 0]].astype(np.int64))
    return made


def hidden(
    skeleton: Any,
    positions: np.ndarray,
    rotations: np.ndarray,
    camera: Camera,
    points: np.ndarray,
    owners: Sequence[Sequence[int]],
) -> np.ndarray:
    """``(m,)`` bool: which of ``points`` ``(m, 3)`` the posed mannequin hides from ``camera``; ``owners[k]``
    the joints whose parts never hide point ``k`` (module docstring). The test runs in the picture: the
    triangles whose box holds the point's pixel, the depth of each at that pixel (``1 / depth`` is affine
    in the picture for a perspective camera, the depth for a parallel one)."""
    m, bound = _body(skeleton)
    vertices, _ = m.skinned(positions, rotations)
    pixels, depth = project(camera, np.asarray(vertices, dtype=float))
    tri_px, tri_z = pixels[m.triangles], depth[m.triangles]  # (t, 3, 2), (t, 3)
    ok = np.isfinite(tri_px).all(axis=(1, 2)) & (camera.parallel | (tri_z > 0.0).all(axis=1))
    tri_px, tri_z, bound = tri_px[ok], tri_z[ok], bound[ok]
    lo, hi = tri_px.min(axis=1), tri_px.max(axis=1)
    key = tri_z if camera.parallel else 1.0 / tri_z
    at, z = project(camera, np.asarray(points, dtype=float))
    margin = MARGIN * body_scale(skeleton)
    out = np.zeros(len(at), dtype=bool)
    for k, ((x, y), zk) in enumerate(zip(at, z)):
        near = (lo[:, 0] <= x) & (x <= hi[:, 0]) & (lo[:, 1] <= y) & (y <= hi[:, 1])
        near &= ~np.isin(bound, np.asarray(owners[k], dtype=np.int64))
        if not np.isfinite(zk) or not near.any():
            continue
        a, b, c = tri_px[near, 0], tri_px[near, 1], tri_px[near, 2]
        area = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
        good = np.abs(area) > 1e-12
        area = np.where(good, area, 1.0)
        w1 = ((x - a[:, 0]) * (c[:, 1] - a[:, 1]) - (y - a[:, 1]) * (c[:, 0] - a[:, 0])) / area
        w2 = ((b[:, 0] - a[:, 0]) * (y - a[:, 1]) - (b[:, 1] - a[:, 1]) * (x - a[:, 0])) / area
        w0 = 1.0 - w1 - w2
        inside = good & (w0 >= 0.0) & (w1 >= 0.0) & (w2 >= 0.0)
        if not inside.any():
            continue
        kz = key[near][inside]
        mix = w0[inside] * kz[:, 0] + w1[inside] * kz[:, 1] + w2[inside] * kz[:, 2]
        surface = mix if camera.parallel else 1.0 / mix
        out[k] = bool(np.any(surface < zk - margin))
    return out
