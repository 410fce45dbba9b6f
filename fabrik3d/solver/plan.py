"""The plain solve's plan (``fabrik3d.solver.tree``): what it needs to know about one set of
targeted effectors (and their centroid weights), worked out once and cached in the rig.

The active joints (on a path from the root to a targeted effector), the single target's path,
the tree solve's steps cut into runs along chains (``tree_steps``, from ``tree_plan``'s orders
and centroid weights, which the batch tree solve shares), and the frames' steps
(``finish_steps``). The constrained solve's plan is ``fabrik3d.solver.constrained.plan``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.rig import Rig


class PlainPlan:
    """What the plain solve needs to know about one set of targeted effectors (and their
    centroid weights), worked out once.

    Attributes:
        active: per joint, whether it lies on a path from the root to a targeted effector.
        path, lengths: for one target, the joints from the root to it and the bones between them.
        whole: whether that path is every joint of the skeleton, in index order.
        inward, outward: the tree solve's stage-1 and stage-2 steps (``tree_steps``);
            empty for fewer than two targets.
        finish: ``tree._finish``'s steps (``finish_steps``).
        start_frames: whether ``tree._finish`` needs the start pose's frames (an active joint
            has an untargeted child).
    """

    __slots__ = ("active", "finish", "inward", "lengths", "outward", "path", "start_frames", "whole")

    def __init__(
        self, skeleton: Skeleton, r: Rig, effectors: tuple[int, ...], weights: dict[int, float] | None
    ) -> None:
        self.active = active_joints(skeleton, effectors)
        self.path = skeleton.path_to_root(effectors[0]) if len(effectors) == 1 else ()
        self.lengths = [r.lengths[j] for j in self.path[1:]]
        self.whole = self.path == tuple(range(len(r.parents)))
        self.inward: Inward = []
        self.outward: Outward = []
        if len(effectors) > 1:
            self.inward, self.outward = tree_steps(skeleton, r, effectors, weights, self.active)
        self.finish = finish_steps(r, self.active)
        self.start_frames = any(how == KEEP or (carried and p >= 0) for _, p, _, how, carried in self.finish)


def plain_plan(skeleton: Skeleton, r: Rig, effectors: tuple[int, ...], weights: dict[int, float] | None) -> PlainPlan:
    """The ``PlainPlan`` of ``effectors`` (indices in skeleton order) on ``skeleton``, cached in its rig."""
    key: Any = effectors
    if weights is not None and len(effectors) > 1:  # only the targeted effectors' weights count
        key = (effectors, tuple(weights.get(e, 1.0) for e in effectors))
    else:
        weights = None
    return r.cached(key, lambda: PlainPlan(skeleton, r, effectors, weights))


def active_joints(skeleton: Skeleton, goal: Iterable[int]) -> list[bool]:
    active = [False] * len(skeleton)
    for e in goal:
        for j in skeleton.path_to_root(e):
            active[j] = True
    return active


# ``tree._solve_tree``'s steps: stage 1 runs (first child, ((joint, child, child's bone), ...), None) along
# a chain of one-child joints, or (sub-base, (), ((child, weight, child's bone), ...)) for a
# centroid; stage 2 runs (first parent, ((joint, parent, joint's bone), ...)) down each chain.
Inward = list[tuple[int, tuple[tuple[int, int, float], ...], tuple[tuple[int, float, float], ...] | None]]
Outward = list[tuple[int, tuple[tuple[int, int, float], ...]]]


def tree_steps(
    skeleton: Skeleton, r: Rig, goal: Iterable[int], weights: dict[int, float] | None, active: list[bool]
) -> tuple[Inward, Outward]:
    """``tree_plan`` as the steps of ``tree._solve_tree``'s loops, cut into runs along chains.

    In stage 1 an untargeted active joint with one active child proposing with
    weight 1 takes that proposal (the centroid of one point is that point); such
    joints in a row, each the child of the next, form one run. In stage 2 a run
    is a row of joints each the parent of the next.
    """
    up, down, kids = tree_plan(skeleton, r, dict.fromkeys(goal), weights, active)
    d = r.lengths
    targeted = set(goal)
    inward: Inward = []
    run: list[tuple[int, int, float]] = []
    for j in down:
        if j in targeted:
            continue
        if len(kids[j]) == 1 and kids[j][0][1] == 1.0:
            c = kids[j][0][0]
            if run and run[-1][0] == c:
                run.append((j, c, d[c]))
                continue
            close_run(inward, run)
            run = [(j, c, d[c])]
        else:
            close_run(inward, run)
            run = []
            inward.append((j, (), tuple((c, wc, d[c]) for c, wc in kids[j])))
    close_run(inward, run)
    outward: Outward = []
    steps: list[tuple[int, int, float]] = []
    for j in up:
        p = r.parents[j]
        if not steps or steps[-1][0] != p:
            if steps:
                outward.append((steps[0][1], tuple(steps)))
            steps = []
        steps.append((j, p, d[j]))
    if steps:
        outward.append((steps[0][1], tuple(steps)))
    return inward, outward


def close_run(inward: Inward, run: list[tuple[int, int, float]]) -> None:
    if run:
        inward.append((run[0][1], tuple(run), None))


def tree_plan(
    skeleton: Skeleton, r: Rig, goal: Mapping[int, Any], weights: dict[int, float] | None, active: list[bool]
) -> tuple[list[int], list[int], list[list[tuple[int, float]]]]:
    """The tree solve's orders and centroid weights.

    Returns ``up`` (active joints but the root, parents first: stage 2), ``down``
    (active joints, children first: stage 1) and, per joint, its active children
    with their proposal weights (1, or with ``weights`` the sum of the weights of
    the targeted effectors beneath the child).
    """
    n = len(active)
    up = [j for j in r.order[1:] if active[j]]
    down = [j for j in reversed(r.order) if active[j]]
    beneath = [0.0] * n
    for e in goal:
        for j in skeleton.path_to_root(e):
            beneath[j] += 1.0 if weights is None else weights.get(e, 1.0)
    kids: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for j in up:
        kids[r.parents[j]].append((j, 1.0 if weights is None else beneath[j]))
    return up, down, kids


# How ``tree._finish`` gets a joint's frame: by the swing rule from its bone, a leaf's from its
# parent's, or kept from the start pose (an active joint whose first child has no target).
SWING, LEAF, KEEP = 0, 1, 2


def finish_steps(r: Rig, active: list[bool]) -> list[tuple[int, int, int, int, tuple[int, ...]]]:
    """``(j, parent, first child, how, carried)`` per joint in skeleton order for ``tree._finish``;
    ``carried`` lists the joints of the untargeted branches hanging from an active ``j``."""
    steps = []
    for j in r.order:
        c = r.first_child[j]
        how = LEAF if c < 0 else KEEP if active[j] and not active[c] else SWING
        carried: list[int] = []
        if active[j]:
            for k in r.children[j]:
                if not active[k]:
                    carried.extend(r.subtree(k))
        steps.append((j, r.parents[j], c, how, tuple(carried)))
    return steps
