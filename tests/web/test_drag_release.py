"""A drag's last frame, let go short of its targets, is solved to its end (``History.end_drag``): a drag
frame's allowance (``fabrik3d.solver.effort``) may cut a frame's searches short, and the pose the user
lets go of must be the one the solve finds, not a frame that lagged."""

from __future__ import annotations

import numpy as np
import pytest
from fabrik3d_web.document.controller import Controller

from fabrik3d.solver import effort, natural


def drag_hand(c: Controller, to: np.ndarray, frames: int = 12) -> list[bool]:
    """Drag ``hand_l`` from where it is to ``to`` in ``frames`` moves, as the view does; each move's
    ``converged``."""
    start = c.result.positions[c.scene.skeleton.index("hand_l")].copy()
    c.begin_drag()
    out = []
    for k in range(1, frames + 1):
        c.move_target("hand_l", start + (to - start) * k / frames, undoable=False)
        out.append(bool(c.result.converged))
    return out


@pytest.fixture
def starved(monkeypatch) -> None:
    """Every drag frame's allowance all but none: its searches stop at once (only the reaching passes
    from the last frame's pose move it: ``WholeBody.reached_plainly``)."""
    monkeypatch.setattr(natural, "FRAME_EFFORT", 1.0)
    assert effort.FRAME_EFFORT > 1.0  # (the real allowance, which the fixture lowers where it is read)


def test_a_drag_let_go_short_of_its_target_is_solved_to_its_end(starved) -> None:
    c = Controller()
    # (a reach in front, beyond the arm: the spine must join, a search each frame)
    to = np.array([0.25, 0.9, 0.6])
    frames = drag_hand(c, to)
    assert not frames[-1], "the starved drag's last frame should lag"
    c.end_drag()
    assert c.result.converged, c.result.errors
    assert np.linalg.norm(c.result.positions[c.scene.skeleton.index("hand_l")] - to) <= c.tolerance
    c.undo()  # (the drag and its finish are one step)
    np.testing.assert_allclose(c.result.positions, Controller().result.positions)


def test_a_drag_that_reached_is_left_as_it_is() -> None:
    c = Controller()
    to = np.array([0.35, 1.1, 0.3])
    assert drag_hand(c, to)[-1]
    before = c.result
    c.end_drag()
    assert c.result is before
