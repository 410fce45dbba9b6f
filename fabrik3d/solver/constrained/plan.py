"""The plan of a constrained solve: what it needs of its rig and targeted effectors."""

from __future__ import annotations

from typing import Any

from fabrik3d import rotations as rot
from fabrik3d.solver.limits import _BoundHinge
from fabrik3d.solver.rig import Rig


class LimitedPlan:
    """What a constrained solve needs of its rig and targeted effectors, fixed for the pair (and
    the weights), so cached in the rig (``Rig.cached``); read only.

    Attributes: ``active`` (per joint: on a path to a targeted effector), ``up`` / ``down`` (the
    active joints root outward / effectors inward, root left out), ``kids`` (per joint, its active
    children with their centroid weights), ``hinged`` (per joint), ``turnable`` (the joints a
    damped step turns), ``offset_dir`` (per joint, its unit bone from its parent in the parent's
    frame), ``effectors_beneath`` (per turnable joint), ``turns`` (whether any joint is limited or
    rigid), ``damped`` (the damped steps' columns, made on first use: ``DampedSteps.damped_plan``),
    ``below`` (the active joints below a turning joint, made on first use: ``LimitedPlan.below_of``).
    """

    def __init__(self, r: Rig, effectors: tuple[int, ...], weights: dict[int, float] | None) -> None:
        n = len(r.parents)
        active = [False] * n
        beneath = [0.0] * n
        for e in effectors:
            j = e
            while j >= 0:
                active[j] = True
                beneath[j] += 1.0 if weights is None else weights.get(e, 1.0)
                j = r.parents[j]
        self.active = active
        self.up = [j for j in r.order if active[j]]
        self.down = [j for j in reversed(r.order) if active[j] and r.parents[j] >= 0]
        self.kids = [
            [(c, 1.0 if weights is None else beneath[c]) for c in r.children[j] if active[c]] for j in range(n)
        ]
        self.hinged = [isinstance(lim.swing, _BoundHinge) for lim in r.limits]
        self.turnable = [
            j
            for j in [*self.down, r.order[0]]
            if self.kids[j] and (len(self.kids[j]) == 1 or r.rigid[j]) and not (r.rigid[j] and r.parents[j] < 0)
        ]
        # (a leaf's bone is also along this in its own frame: it copies its parent's rest frame)
        self.offset_dir = [rot.unit(o) or rot.Y_AXIS for o in r.offset]
        targeted = set(effectors)
        # (walking up from each effector: linear in the joints, where a subtree per joint was quadratic)
        beneath: dict[int, list[int]] = {j: [] for j in self.turnable}
        for e in sorted(targeted, key=r.position_in_order):
            j = e
            while j >= 0:
                if j in beneath:
                    beneath[j].append(e)
                j = r.parents[j]
        self.effectors_beneath = beneath
        # Damped least-squares steps after slow FABRIK iterations help limited joints (hinges above all).
        self.turns = any(lim.swing is not None or lim.rigid for lim in r.limits)
        self.damped: Any = None
        self.below: dict[int, list[int]] = {}  # (``below_of``)

    def below_of(self, r: Rig, j: int) -> list[int]:
        """The active joints below joint ``j``, root outward (``NumericSteps.effectors_turned``),
        kept once asked for: a long chain's least-motion steps ask for few of its joints."""
        out = self.below.get(j)
        if out is None:
            inside, out = {j}, []
            for x in self.up:
                if x != j and r.parents[x] in inside:
                    inside.add(x)
                    out.append(x)
            self.below[j] = out
        return out


def limited_plan(r: Rig, effectors: tuple[int, ...], weights: dict[int, float] | None) -> LimitedPlan:
    """The ``LimitedPlan`` of ``effectors`` (in the goals' order) on rig ``r``, cached in it."""
    key = ("limited", effectors, None if weights is None else tuple(weights.get(e, 1.0) for e in effectors))
    return r.cached(key, lambda: LimitedPlan(r, effectors, weights))
