"""Figures solved together: contacts between figures kept through every solve of either.

Each figure solves alone, as ever (``fabrik3d.solve`` with its own targets and natural posing); a
contact (``fabrik3d.model.contacts``) adds one goal. This module turns the contacts into those goals
and repeats, as FABRIK itself does between a chain's two ends:

1. every contact's effector and anchor are read off the figures' current poses, in the world;
2. an anchor that is another figure's end effector (two hands clasped) meets the effector halfway:
   both get the midpoint as their goal; any other anchor (a shoulder, a prop's point) is the goal of
   the effector alone;
3. every figure of the group solves from its current pose with its goals in its own coordinates;
4. until every contact's gap is within the tolerance, the gaps stop closing, or ``MAX_ROUNDS``.

A contact whose two ends cannot meet (the figures stand too far apart) leaves the pair as near as
their reaches allow, with the gap reported (``Together.gaps``). Shapes: points ``(3,)`` metres.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from fabrik3d.model.placement import Placement, rotate
from fabrik3d.model.posing import Posing
from fabrik3d.model.skeleton import Skeleton
from fabrik3d.solver.hang import limb_of
from fabrik3d.solver.result import SolveResult

# The most rounds of solves for one change; each solves every figure of the group once.
MAX_ROUNDS = 12
# A round that closes the largest gap by less than this fraction of it ends the rounds (it has stalled).
GAP_STALL = 0.05


class Member(NamedTuple):
    """A figure of a group: its joints' names, its placement, and its solve.

    ``solve(goals, start)``: the figure's own solve with ``goals`` (effector or joint name -> ``(3,)``
    point in the figure's coordinates) added to (or replacing) its targets, from the pose ``start``.
    """

    names: Sequence[str]
    placement: Placement
    solve: Callable[[dict[str, np.ndarray], SolveResult], SolveResult]


@dataclass(frozen=True)
class Link:
    """Member ``a``'s effector ``effector`` on an anchor: the point ``offset`` (in the joint's frame) of
    member ``b``'s joint ``joint``, or, with ``b`` None, the world point ``point``. ``mutual``: the anchor
    is ``b``'s end effector and is pulled halfway too."""

    a: int
    effector: str
    b: int | None = None
    joint: str | None = None
    offset: np.ndarray = field(default_factory=lambda: np.zeros(3))
    point: np.ndarray | None = None
    mutual: bool = False


@dataclass
class Together:
    """The outcome: each member's pose, the rounds taken and each link's gap (metres) at the end."""

    poses: list[SolveResult]
    rounds: int
    gaps: list[float]


def groups(count: int, links: Sequence[Link]) -> list[list[int]]:
    """The members linked to each other, directly or through others: lists of member indices, in order."""
    parent = list(range(count))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for link in links:
        if link.b is not None:
            parent[root(link.a)] = root(link.b)
    out: dict[int, list[int]] = {}
    for i in range(count):
        out.setdefault(root(i), []).append(i)
    return list(out.values())


def group_of(member: int, count: int, links: Sequence[Link]) -> list[int]:
    """The members solved with ``member`` when it changes: itself and every member linked to it."""
    return next(g for g in groups(count, links) if member in g)


def ends(members: Sequence[Member], poses: Sequence[SolveResult], link: Link) -> tuple[np.ndarray, np.ndarray]:
    """The world points ``(3,)`` of a link's effector and of its anchor in the poses ``poses``."""
    a = members[link.a]
    effector = a.placement.to_world(poses[link.a].positions[list(a.names).index(link.effector)])
    if link.b is None:
        assert link.point is not None
        return effector, link.point
    b = members[link.b]
    j = list(b.names).index(link.joint)  # type: ignore[arg-type]
    local = poses[link.b].positions[j] + rotate(poses[link.b].rotations[j], link.offset)
    return effector, b.placement.to_world(local)


def solve_together(
    members: Sequence[Member],
    links: Sequence[Link],
    poses: Sequence[SolveResult],
    solving: Sequence[int] | None = None,
    tolerance: float = 1e-3,
) -> Together:
    """Solve the members ``solving`` (default all) from ``poses`` with their links kept.

    Args:
        members: every figure that links may name.
        links: the contacts (only those between members of ``solving``, or on a fixed point, or on a member
            not solved, whose pose then stays as given, are used).
        poses: each member's current pose (its start).
        solving: the indices solved; the others keep their pose and serve as fixed anchors.
        tolerance: the gap (metres) at which a contact counts as kept.

    Returns:
        ``Together``: the members' poses (those not solved as given), rounds, and each used link's gap.
    """
    solving = list(range(len(members))) if solving is None else list(solving)
    chosen = set(solving)
    used = [k for k in links if k.a in chosen]
    current = list(poses)
    if not used:
        for i in solving:
            current[i] = members[i].solve({}, current[i])
        return Together(current, 1, [])
    gaps, best, rounds = [], np.inf, 0
    while rounds < MAX_ROUNDS:
        goals: list[dict[str, np.ndarray]] = [{} for _ in members]
        for link in used:
            effector, anchor = ends(members, current, link)
            a = members[link.a]
            if link.mutual and link.b in chosen:
                meet = (effector + anchor) / 2
                b = members[link.b]  # type: ignore[index]
                j = list(b.names).index(link.joint)  # type: ignore[arg-type]
                shift = b.placement.to_world(current[link.b].positions[j]) - anchor  # type: ignore[index]
                goals[link.b][link.joint] = b.placement.to_local(meet + shift)  # type: ignore[index]
                goals[link.a][link.effector] = a.placement.to_local(meet)
            else:
                goals[link.a][link.effector] = a.placement.to_local(anchor)
        for i in solving:
            current[i] = members[i].solve(goals[i], current[i])
        rounds += 1
        gaps = [float(np.linalg.norm(np.subtract(*ends(members, current, k)))) for k in used]
        worst = max(gaps)
        if worst <= tolerance or worst > best * (1 - GAP_STALL):
            break
        best = worst
    return Together(current, rounds, gaps)


# A handshake's meeting point lies below the two limbs' tops by this share of their mean reach (the
# humanoid's arm, 0.63 m from its clavicle: 0.38 m below it, 1.05 m high, the upper arm hanging and the
# forearm forward, a little down).
CLASP_DROP = 0.6
# Two figures face each other when their forward directions (+Z of each) make at least this angle's
# cosine apart (opposite: -1) and each stands in front of the other.
FACING_COS = -0.5


def clasp_point(
    a: tuple[Skeleton, np.ndarray, Placement, str], b: tuple[Skeleton, np.ndarray, Placement, str]
) -> np.ndarray | None:
    """Where two figures' hands that take each other (a handshake) naturally meet, in the world ``(3,)``
    (metres): between the tops of the two limbs (``hang.limb_of``: the clavicles), ``CLASP_DROP`` of their
    mean reach below them. ``None`` where the figures do not face each other (``FACING_COS``: two figures
    hand in hand side by side meet where their hands hang, halfway) or an effector has no limb.

    ``a``, ``b``: each figure's skeleton, its pose's positions ``(n, 3)`` (its own coordinates), its
    placement and the effector's name."""
    tops, reaches, fronts = [], [], []
    for skeleton, positions, placement, effector in (a, b):
        e = skeleton.index(effector)
        limb = limb_of(skeleton, skeleton.posing or Posing(), e)
        if not limb:
            return None
        rest = skeleton.rest_positions
        chain = [e, *limb]
        reaches.append(sum(float(np.linalg.norm(rest[j] - rest[k])) for j, k in itertools.pairwise(chain)))
        tops.append(placement.to_world(np.asarray(positions)[limb[-1]]))
        fronts.append(rotate(placement.rotation, np.array([0.0, 0.0, 1.0])))
    across = (tops[1] - tops[0]) * [1.0, 0.0, 1.0]
    if float(fronts[0] @ fronts[1]) > FACING_COS or fronts[0] @ across <= 0.0 or fronts[1] @ across >= 0.0:
        return None
    point = (tops[0] + tops[1]) / 2
    point[1] -= CLASP_DROP * (reaches[0] + reaches[1]) / 2
    return point
