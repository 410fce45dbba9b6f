"""A drag frame's work allowance (``Effort``): the natural solve of one frame does a bounded amount of work.

A frame of a drag (a warm solve whose targets moved a small step: ``steady.drag_frame``) must come back
within a frame's time, whatever it meets. Where the targets lie out of reach or the body presses
against its limits, the natural solve's searches (a stiffer level's share, the least-motion steps,
the guard's other poses, the warm retries) could run for hundreds of milliseconds looking for a pose
that reaches, mostly to learn that none does. As in the real-time solvers of games (FinalIK's
iterations per frame), each such frame gets an allowance of work; once it is spent the searches stop
where they are and the best pose found so far stands (one that jumps still goes only part of the way:
``steady.partway``; one that is no gain on the start, cut short before it gained, gives way to the
reaching passes from the start: ``WholeBody.reached_plainly``). The next frame of the drag starts from
that pose and goes on. A placement (a cold solve, or a warm one whose targets moved far) is not
bounded: it reaches whatever it costs.

The work is counted, not timed, so that a solve gives the same pose on any machine and under any
load. A unit is about 0.015 ms on this project's machine: one joint placed by a reaching pass
(``ReachingPasses.stage2``), ``TURN`` for a joint's limited turn (a column of a least-motion step's
numeric Jacobian, a damped step's: ``DampedSteps.turned_local``), ``STEP`` for a damped step's own
work (``DampedSteps.damped_step``), ``SOLVE`` for a chain's solve set up and finished
(``LimitedSolve.run``). The weights are a least-squares fit of the frames of
``benchmarks/bench_humanoid.py``'s paths (within 32% on every frame over 15 ms).
"""

from __future__ import annotations

import math
import numbers

# What a joint's limited turn, a damped step's own work (its Jacobian and its solve, besides its turns)
# and a chain's solve cost, in units (a joint placed by a reaching pass).
TURN = 1.3
STEP = 4.0
SOLVE = 10.0
# A drag frame's allowance (units): about 20 ms of searching here, so that the frame, with the work
# that does not search (the start's projection, the hang, the result) and the step or iteration under
# way when it runs out, stays within 33 ms.
FRAME_EFFORT = 1300.0


class Effort:
    """The work (units: module docstring) a solve may still do; ``math.inf`` (the default): unbounded."""

    def __init__(self, allowance: float = math.inf) -> None:
        self.left = float(allowance)

    def spend(self, units: float) -> None:
        """Count ``units`` of work done."""
        self.left -= units

    @property
    def spent(self) -> bool:
        """Whether the allowance is used up: the searches stop where they are."""
        return self.left <= 0.0


def allowed(effort: object) -> float | None:
    """``solve``'s ``effort`` checked: None, or a real number >= 0 (``math.inf`` for none)."""
    if effort is None:
        return None
    if isinstance(effort, bool) or not isinstance(effort, numbers.Real) or not float(effort) >= 0.0:
        raise ValueError(f"effort: expected None or a number >= 0 (math.inf: unbounded), got {str(effort)[:80]!r}")
    return float(effort)
