"""Control images from the notebook view (issue 54): ``control_images`` renders the pose shown as the
OpenPose, depth, normal and outline pictures an image generator is guided by, with the web package's
renderer (``fabrik3d_web.view.passes.render_passes``: VTK, installed with ``fabrik3d[web]``; the core library
has no renderer). A part of ``fabrik3d.notebook.SkeletonView``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.tree import SolveResult


class Pictures:
    """The control images part of ``SkeletonView`` (see the module docstring)."""

    skeleton: Skeleton
    _result: SolveResult

    def control_images(
        self,
        passes: Sequence[str] = ("openpose", "depth", "normal", "outline"),
        size: Any = (512, 512),
        view: str = "front",
        **options: Any,
    ) -> Any:
        """The passes of the pose shown (``fabrik3d_web.view.passes.Passes``: ``.openpose``, ``.depth``,
        ``.normal``, ``.outline`` as arrays, ``.keypoints`` the OpenPose JSON, ``.files()`` the PNGs),
        ``size`` ``(width, height)`` pixels, seen from ``view`` (front, side, top, perspective);
        ``options``: ``feet``, ``occlusion`` (``render_passes``'). Needs ``fabrik3d[web]``."""
        try:
            from fabrik3d_web.view.passes import render_passes  # (VTK: a front end's; the core has none)
        except ImportError as exc:
            raise ImportError("control_images needs the web extra: pip install 'fabrik3d[web]'") from exc
        return render_passes(self.skeleton, self._result, passes=passes, size=size, view=view, **options)
