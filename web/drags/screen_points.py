"""Where things are on the page, for tests and automation: a handle's or a joint's point in the 3D
view, in CSS pixels from the view's top-left (docs/web.md, the state contract).

``ScreenPoints`` is a component (it gets what it reads and calls explicitly, as the panels':
``fabrik3d_web.drags.component``); the app holds it as ``screen_points``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trame.decorators import TrameApp

from ..security import page_trigger
from ..view.delivery import STILL_RATIO
from .component import Component


@TrameApp()
class ScreenPoints(Component):
    """The triggers ``target_screen_position`` and ``joint_screen_position`` (each reports a bad argument in
    ``error_message``), of the selected figure.

    Args:
        server: the trame server (its state).
        document: the scene document (``document.controller``: the selected figure's).
        scene: the 3D scene (``fabrik3d_web.view.scene_view.SceneView``: its handles and render window).
        delivery: the view's image stream (``fabrik3d_web.view.delivery.ImageDelivery``: the view's size on the
            page).
        display_point: render-window pixels of a world point (``JointDrag.display_point``).
        report: shows a message in the page's error banner.
    """

    def __init__(self, server: Any, document: Any, scene: Any, delivery: Any,
                 display_point: Callable[[Any], tuple[float, float]],
                 report: Callable[[str], None]) -> None:  # fmt: skip
        self.server, self.document, self.scene, self.delivery = server, document, scene, delivery
        self.display_point, self.report = display_point, report

    @page_trigger("target_screen_position")
    def target_screen_position(self, name: Any, pole: Any = False) -> list[float] | None:
        """``[x, y]`` of the handle of effector (or root) ``name``, of its pole's (``pole`` true), or of the
        head ``name``'s look handle (``pole`` ``"look"``), in CSS pixels from the view's top-left."""
        root = self.controller.scene.skeleton.names[self.controller.scene.skeleton.root]
        kind = "pole" if pole is True else "look" if pole == "look" else "root" if name == root else "target"
        if not isinstance(name, str) or (kind, name) not in self.scene.handles:
            self.report(f"target_screen_position: no handle called {str(name)[:60]!r}")
            self.state.flush()
            return None
        x, y, width, height = self.scene.handle_display_position(kind, name)
        return self.css(x, y, width, height)

    @page_trigger("joint_screen_position")
    def joint_screen_position(self, name: Any) -> list[float] | None:
        """``[x, y]`` of joint ``name`` in CSS pixels from the view's top-left (Alt + click it to turn it)."""
        sk = self.controller.scene.skeleton
        if not isinstance(name, str) or name not in sk.names:
            self.report(f"joint_screen_position: no joint called {str(name)[:60]!r}")
            self.state.flush()
            return None
        x, y = self.display_point(self.controller.result.positions[sk.index(name)])
        return self.css(x, y, *self.scene.render_window.GetSize())

    def css(self, x: float, y: float, width: int, height: int) -> list[float]:
        """Render-window pixels (origin bottom-left) as CSS pixels from the view's top-left."""
        css = self.delivery.view_css_size()
        if css is None:  # before the page reported its size: the window is the CSS size times the still ratio
            css = (width / STILL_RATIO, height / STILL_RATIO)
        return [x / width * css[0], (height - y) / height * css[1]]
