"""Least-motion steps with a numeric Jacobian (``NumericSteps``, the constrained solver's
``least_motion``): ``DampedSteps``' damped least-squares step with its columns taken by finite
differences through the limited turns, so that the limits and the twist a bone's turn carries are
in it. Positions ``(x, y, z)`` tuples (scene units), frames ``(x, y, z, w)`` unit quaternions, turns
in radians.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fabrik3d import rotations as rot
from fabrik3d.rotations import add as _add
from fabrik3d.rotations import sub as _sub
from fabrik3d.solver.constrained.damped import DampedSteps, column_steps, joint_turns

# The turn (radians) of each column's finite differences; a column whose two differences (one turning
# each way) differ by more than KINKED, a share of the larger, is at a limit's kink; a step is solved
# again at most KINK_ROUNDS times, the kinked columns on the side they turn; and at most SECANT_ROUNDS
# times with its columns taken over the step (``NumericSteps.secants``).
NUMERIC_EPS = 1e-4
KINKED = 0.05
KINK_ROUNDS = 4
SECANT_ROUNDS = 3


class NumericSteps(DampedSteps):
    """Mixin of ``LimitedSolve``: ``DampedSteps`` and the least-motion steps' numeric Jacobian."""

    squared_errors: Callable[[list[rot.Vec], list[rot.Quat]], float]  # (``Attempts``)

    def numeric_step(
        self,
        pose: list[rot.Vec],
        frames: list[rot.Quat],
        damping: float,
        beat: float | None = None,
    ) -> tuple[list[rot.Vec], list[rot.Quat], float]:
        """A damped least-squares step on the effectors' positions like ``damped_step``'s, its
        Jacobian taken numerically through ``turn``'s limited turns (``turned_local``, a turn of
        ``NUMERIC_EPS`` radians per column, the joint's subtree carried: ``effectors_turned``): the
        twist that turning a bone carries into the joints below is in it, and so are the limits.
        Positions only. Returns the pose, its frames and its squared error (``squared_errors``).

        A joint at a limit moves the effectors one way by turning one way and not (or otherwise)
        the other: where a column's two differences disagree (``KINKED``), the step takes the one on
        the side it turns the column, solved again where a column changed side (up to
        ``KINK_ROUNDS`` times). With one-sided differences, a limb or a spine against a limit
        stalled millimetres short of a target its next frame reached: the step's prediction
        held on one side of the limit only.

        ``beat``: a squared error (``squared_errors``, scene units²) the step must end below; where it
        does not, the step is taken again with the columns of the joints it would turn into a limit
        taken over the step (``secants``), and that pose returned. A joint a fraction of a degree
        from its stop is not kinked at ``NUMERIC_EPS``, yet a step of a degree or two runs it into
        the stop: the step then overshot, the damping rose, and the least motion crawled to a halt
        millimetres short (seed 23 of the chained drags: 7 mm short after 30 steps, then a 55 cm
        elbow flip; with the secants, two steps)."""
        cols, _, starts = self.damped_plan()
        if not cols:
            got = self.forward(pose, frames, {})
            return (*got, self.squared_errors(*got))
        axes = self.turning_axes(frames)
        goals = list(self.goals.items())
        base = np.array([pose[e] for e, _ in goals]).ravel()
        sides = np.zeros((2, len(base), len(cols)))  # (the differences turning each column +, then -)
        # Each column's joint turned NUMERIC_EPS about its axis, and the other way where a limit may kink it.
        ahead, behind = [], []
        for j, ax in zip(cols, axes):
            ex, ey, ez = NUMERIC_EPS * ax[0], NUMERIC_EPS * ax[1], NUMERIC_EPS * ax[2]
            ahead.append(self.turned_local(j, frames, (ex, ey, ez)))
            behind.append(self.turned_local(j, frames, (-ex, -ey, -ez)) if self.limited(j) else None)
        kinked = np.array([self.kinked(j, frames, a, b) for j, a, b in zip(cols, ahead, behind)], dtype=bool)
        for c, j in enumerate(cols):
            for side, (eps, local) in enumerate(
                ((NUMERIC_EPS, ahead[c]), (-NUMERIC_EPS, behind[c])) if kinked[c] else ((NUMERIC_EPS, ahead[c]),)
            ):
                sides[side, :, c] = self.column(pose, frames, j, local, base, eps)
        plus, minus = sides
        err = np.array([g.position for _, g in goals]).ravel() - base
        # (the columns taken the - way: at first, those that move the effectors further that way)
        back = kinked & (np.linalg.norm(minus, axis=0) > np.linalg.norm(plus, axis=0))
        jac = np.where(back[None], minus, plus)
        for _ in range(KINK_ROUNDS if kinked.any() else 0):
            step = column_steps(jac[None], err[None], np.array([damping]))[0]
            turned = kinked & ((step < 0.0) != back) & (step != 0.0)
            if not turned.any():
                break
            back ^= turned
            jac = np.where(back[None], minus, plus)
        u, lam = np.array(axes)[None], np.array([damping])

        def stepped(jac: np.ndarray) -> tuple[list[rot.Vec], list[rot.Quat]]:  # (the step of these columns, taken)
            return self.turn(pose, frames, joint_turns(jac[None], err[None], lam, starts, u)[0].tolist())

        got = stepped(jac)
        score = self.squared_errors(*got)
        if beat is None or score < beat:
            return (*got, score)
        got = stepped(self.secants(pose, frames, cols, axes, jac, err, damping))
        return (*got, self.squared_errors(*got))

    def secants(
        self,
        pose: list[rot.Vec],
        frames: list[rot.Quat],
        cols: list[int],
        axes: list[rot.Vec],
        jac: np.ndarray,
        err: np.ndarray,
        damping: float,
    ) -> np.ndarray:
        """``numeric_step``'s Jacobian ``jac`` ``(rows, columns)`` (``cols`` the columns' joints, ``axes``
        their world axes, ``err`` ``(rows,)`` the effectors' errors) with each limited column taken over
        the step instead (the effectors' move once the column alone turns its joint by its share of
        the damped step, limited, over that share), where that differs from it (``KINKED``): a joint
        near its stop moves the effectors as far as the stop lets it, not as its tangent says. The
        step changes with the columns, so they are taken again, up to ``SECANT_ROUNDS`` times."""
        base = np.array([pose[e] for e in self.goals]).ravel()
        limited = [self.limited(j) for j in cols]
        for _ in range(SECANT_ROUNDS):
            step = column_steps(jac[None], err[None], np.array([damping]))[0]
            changed = False
            for c, (ax, j) in enumerate(zip(axes, cols)):
                s = float(step[c])
                if not limited[c] or abs(s) <= NUMERIC_EPS:
                    continue
                local = self.turned_local(j, frames, (s * ax[0], s * ax[1], s * ax[2]))
                secant = self.column(pose, frames, j, local, base, s)
                if np.linalg.norm(secant - jac[:, c]) > KINKED * max(np.linalg.norm(jac[:, c]), 1e-12):
                    jac[:, c], changed = secant, True
            if not changed:
                break
        return jac

    def column(
        self, pose: list[rot.Vec], frames: list[rot.Quat], j: int, local: rot.Quat | None, base: np.ndarray, by: float
    ) -> np.ndarray:
        """A Jacobian column ``(rows,)``: how far the targeted effectors (at ``base``, raveled) move once
        joint ``j`` takes the rotation ``local`` (``effectors_turned``), over the turn ``by`` (radians)."""
        return (np.array(self.effectors_turned(pose, frames, j, local)).ravel() - base) / by

    def effectors_turned(
        self, pose: list[rot.Vec], frames: list[rot.Quat], j: int, local: rot.Quat | None
    ) -> list[rot.Vec]:
        """The targeted effectors' positions once joint ``j`` alone takes the rotation ``local``
        relative to its parent (``forward`` with ``{j: local}``, on ``j``'s subtree only: the
        numeric Jacobian's columns)."""
        if local is None:
            return [pose[e] for e in self.goals]
        r = self.r
        p = r.parents[j]
        turn = rot.mul(rot.mul(frames[p] if p >= 0 else rot.IDENTITY, local), rot.conj(frames[j]))
        moved = {j: pose[j]}
        for x in self.plan.below_of(r, j):  # (every joint below turns with j)
            q = r.parents[x]
            moved[x] = _add(moved[q], rot.rotate(turn, _sub(pose[x], pose[q])))
        return [moved.get(e, pose[e]) for e in self.goals]

    def limited(self, j: int) -> bool:
        """Whether a limit can stop joint ``j``'s turns: its swing limit, or a rigid body's twist limit."""
        limits = self.r.limits[j]
        return limits.swing is not None or (self.r.rigid[j] and limits.twist is not None)

    def kinked(self, j: int, frames: list[rot.Quat], ahead: rot.Quat | None, back: rot.Quat | None) -> bool:
        """Whether joint ``j`` turns unevenly about a world axis by ``NUMERIC_EPS`` one way and the other
        (``KINKED``: a limit stops or deflects one of the turns): a rigid body's rotation, a bone's
        direction (a turn resets its twist, either way alike). ``ahead`` and ``back``: its rotations once
        turned each way (``turned_local``)."""
        r = self.r
        if not self.limited(j):
            return False  # (nothing to stop the turn: even both ways)
        if ahead is None or back is None:
            return False
        p = r.parents[j]
        now = rot.mul(rot.conj(frames[p] if p >= 0 else rot.IDENTITY), frames[j])
        if r.rigid[j]:
            a, b, apart = rot.angle_between(ahead, now), rot.angle_between(back, now), rot.angle_between(ahead, back)
        else:
            bone, bone_ahead, bone_back = rot.y_axis(now), rot.y_axis(ahead), rot.y_axis(back)
            a, b, apart = rot.dist(bone_ahead, bone), rot.dist(bone_back, bone), rot.dist(bone_ahead, bone_back)
        return abs(a - b) > KINKED * max(a, b) or apart < (1.0 - KINKED) * (a + b)
