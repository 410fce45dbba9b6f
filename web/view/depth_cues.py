"""Depth cues while a handle is dragged (issue 51, item 3; Cascadeur's drop line and shadow).

A drag moves a handle in the plane of the screen through it, so its depth (along the line of sight) is
the one thing the view cannot show. While a handle is dragged, ``DepthCues`` draws a line straight
down from it to the floor (the scene's floor, or the ground the rest feet stand on without one) and
its shadow there, a dark disc, in every view; in an orthographic view along an axis (Front, Side,
Top) it writes the depth the handle keeps, the coordinate along that axis, in the view's corner
(``readout``, and the state ``drag_depth``). Nothing is drawn when no handle is dragged.

Points are world (scene) coordinates, metres for the presets, Y up.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from vtkmodules.vtkFiltersSources import vtkLineSource, vtkRegularPolygonSource
from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper, vtkTextActor

# The shadow's radius, as a share of the skeleton's size; its darkness (opacity).
SHADOW_SIZE = 0.018
SHADOW_OPACITY = 0.45
# A view counts as along an axis when its line of sight is within this cosine of it.
ALONG = 0.999
AXIS_NAMES = ("X", "Y", "Z")


def view_axis(camera: Any) -> int | None:
    """The world axis (0, 1, 2) an orthographic ``camera`` looks along, or None (a perspective view, or
    an oblique one)."""
    if not camera.GetParallelProjection():
        return None
    d = np.abs(np.array(camera.GetDirectionOfProjection(), dtype=float))
    k = int(np.argmax(d))
    return k if d[k] >= ALONG else None


def readout(point: Any, axis: int | None) -> str:
    """The depth the page shows for a handle at ``point`` in a view along ``axis`` ("" for none)."""
    if axis is None:
        return ""
    return f"depth {AXIS_NAMES[axis]} {float(point[axis]):+.3f} m"


class DepthCues:
    """The drop line, the shadow and the depth readout of one renderer (see the module docstring)."""

    def __init__(self, renderer: Any, overlay: Any) -> None:
        self.renderer = renderer
        self.line = vtkLineSource()
        self.disc = vtkRegularPolygonSource()
        self.disc.SetNumberOfSides(40)
        self.disc.SetNormal(0.0, 1.0, 0.0)
        self.actors = []
        for source, colour, opacity in (
            (self.line, (0.25, 0.25, 0.3), 0.9),
            (self.disc, (0.1, 0.1, 0.12), SHADOW_OPACITY),
        ):
            mapper = vtkPolyDataMapper()
            mapper.SetInputConnection(source.GetOutputPort())
            actor = vtkActor()
            actor.SetMapper(mapper)
            prop = actor.GetProperty()
            prop.SetColor(*colour)
            prop.SetOpacity(opacity)
            prop.SetLineWidth(2.0)
            prop.SetLighting(False)
            actor.PickableOff()
            actor.SetVisibility(False)
            renderer.AddActor(actor)
            self.actors.append(actor)
        self.text = vtkTextActor()
        self.text.GetTextProperty().SetFontSize(18)
        self.text.GetTextProperty().SetColor(0.15, 0.15, 0.2)
        self.text.SetPosition(12, 12)
        self.text.SetVisibility(False)
        overlay.AddActor(self.text)

    def show(self, point: Any, floor: float, size: float) -> str:
        """Cues for a handle at ``point`` over a floor at height ``floor`` (scene units), the shadow's
        size from the skeleton's ``size``; returns the depth readout ("" outside an axis view)."""
        p = np.asarray(point, dtype=float)
        if not np.all(np.isfinite(p)) or not math.isfinite(floor):
            self.hide()
            return ""
        ground = (float(p[0]), floor + 1e-3 * size, float(p[2]))
        self.line.SetPoint1(*p)
        self.line.SetPoint2(*ground)
        self.disc.SetCenter(*ground)
        self.disc.SetRadius(SHADOW_SIZE * size)
        for actor in self.actors:
            actor.SetVisibility(True)
        text = readout(p, view_axis(self.renderer.GetActiveCamera()))
        self.text.SetInput(text)
        self.text.SetVisibility(bool(text))
        return text

    def hide(self) -> None:
        for actor in self.actors:
            actor.SetVisibility(False)
        self.text.SetVisibility(False)
