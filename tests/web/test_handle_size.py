"""Handles keep their size on screen as the camera moves (issue 30's finding: zoomed on a hand, the hand's
handle stayed as large as the hand was wide and hid the fingers; VTK sizes a sphere handle only when its
representation is built). The real scene, rendered off screen, no browser."""

from __future__ import annotations

import numpy as np
from fabrik3d_web.view.scene_view import HANDLE_PX, SceneView
from fabrik3d_web.view.vtk_parts import frame_camera

import fabrik3d
from fabrik3d.model.presets import FINGERS

BODY = fabrik3d.presets.get("humanoid")


def handle_px(view: SceneView, name: str) -> float:
    """The on-screen diameter of effector ``name``'s handle, render-window pixels."""
    rep = view.handles["target", name].GetRepresentation()
    centre = np.array(rep.GetWorldPosition())
    ren = view.renderer
    up = np.array(ren.GetActiveCamera().GetViewUp())
    points = []
    for p in (centre, centre + rep.GetSphereRadius() * up):
        ren.SetWorldPoint(*p, 1.0)
        ren.WorldToDisplay()
        points.append(np.array(ren.GetDisplayPoint()[:2]))
    return 2.0 * float(np.linalg.norm(points[1] - points[0]))


def test_a_hand_s_handle_keeps_its_size_on_screen_when_the_view_zooms_on_the_hand() -> None:
    noop = lambda *_: None  # noqa: E731
    view = SceneView(noop, noop, noop, size=(800, 600))
    view.set_skeleton(BODY, 1.75)
    rest = fabrik3d.solve(BODY, {})
    view.show_pose(rest.positions, rest.rotations, {}, None, ())
    view.render_window.Render()
    before = handle_px(view, "hand_l")
    hand = [j for j, n in enumerate(BODY.names) if n.endswith("_l") and n.split("_")[0] in ("hand", *FINGERS)]
    frame_camera(view.renderer, rest.positions[hand], 0.5, "front")
    view.render_window.Render()
    after = handle_px(view, "hand_l")
    assert 0.5 * HANDLE_PX < before < 2.0 * HANDLE_PX, before
    assert abs(after - before) <= 0.25 * before, (before, after)  # (it was about 10 times larger)
