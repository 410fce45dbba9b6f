"""What every component of the app has (the panels: ``FiguresPanel``, ``PosingPanel``, ``TurningPanel``,
``CharacterPanel``, ``BodyPanel``, ``PosesPanel``, ``TimelinePanel``, ``PicturePanel``, ``HandsPanel``; the
view's drags: ``DragActions``, ``MouseTurn``'s ``JointDrag`` and ``TargetTurn``, ``RingTurn``,
``ScreenPoints``): the trame server's ``state`` and the selected figure's ``controller``, read from the
``server`` and the scene ``document`` the component was given."""

from __future__ import annotations

from typing import Any


class Component:
    """A part of the app given the trame ``server`` and the scene ``document`` (``fabrik3d_web.document.document``)."""

    server: Any
    document: Any

    @property
    def state(self) -> Any:
        """trame's state (the page's and the server's)."""
        return self.server.state

    @property
    def controller(self) -> Any:
        """The selected figure's controller: what the component acts on."""
        return self.document.controller
