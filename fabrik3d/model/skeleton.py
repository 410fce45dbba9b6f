"""The skeleton: a tree of named joints with a rest pose.

A skeleton of ``n`` joints is given by

* ``names``: ``n`` unique, non-empty joint names;
* ``parents``: ``(n,)`` parent index per joint, ``-1`` for the one root;
* ``rest_positions``: ``(n, 3)`` joint positions of the rest pose, in scene units
  (metres in the presets), Y up.

Bone ``j`` runs from ``parents[j]`` to ``j``; its length, fixed for life, is
``bone_lengths[j]`` (0 for the root). A joint's *first child* is its child with
the lowest index; its frame's +Y points along the bone to that child.

**Riders** (``riders=``: joints named with their whole subtree, such as the fingers) are posed by
forward kinematics only: a solve carries them rigidly with the joint they hang from, keeping their
rotations relative to it (``fabrik3d.solver.riders``). The *core* is the skeleton without them
(``Skeleton.core``): its leaves are the end effectors, and a joint's riders are not its bones (its
first child is its first child that does not ride), so a hand with fingers stays an effector.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.checks import MAX_COORD
from fabrik3d.model import constraints as _constraints
from fabrik3d.model import frames as _frames
from fabrik3d.model.posing import Posing

MIN_BONE = 1e-9
# What ``Skeleton.__init__`` builds: a pickled skeleton keeps these, not the caches that solves keep on it.
_BUILT = frozenset(
    "names parents rest_positions order root _children riders _bones _end_effectors _effector_set bone_lengths "
    "_index rest_frames explicit_rest_frames constraints posing".split()
)


class Skeleton:
    """A tree of named joints (see the module docstring for the conventions).

    Args:
        names: joint names, unique and non-empty.
        parents: parent index per joint, exactly one ``-1`` (the root).
        rest_positions: ``(n, 3)`` rest positions in scene units.
        constraints: optional mapping from joint name to a constraint or a list of
            constraints (``fabrik3d.constraints``).
        rest_frames: optional mapping from joint name to its rest frame, a unit
            quaternion (x, y, z, w) whose +Y points along the rest bone to the first
            child; other joints take the default (``fabrik3d.frames``).
        posing: optional chain reach, stiffness and swivel (``fabrik3d.model.posing``): how the
            solver poses it naturally; default none (the plain full-body chain).
        riders: optional names of joints that ride, each with its whole subtree (module
            docstring); not the root.

    Raises:
        ValueError: naming the joint and the problem, for duplicate or empty
            names, no root or several roots, a cycle, a parent index out of range,
            non-finite coordinates (or beyond 1e9 in magnitude), a bone shorter than
            1e-9, or wrong shapes.
    """

    def __init__(
        self,
        names: Sequence[str],
        parents: Sequence[int] | np.ndarray,
        rest_positions: Any,
        constraints: Mapping[str, Any] | None = None,
        rest_frames: Mapping[str, Any] | None = None,
        posing: Posing | None = None,
        riders: Iterable[str] | None = None,
    ) -> None:
        self.names: tuple[str, ...] = _check_names(names)
        n = len(self.names)
        self.parents: np.ndarray = _check_parents(parents, self.names)
        self.rest_positions: np.ndarray = _check_positions(rest_positions, self.names)
        self.order: tuple[int, ...] = _topological_order(self.parents, self.names)
        self.root: int = self.order[0]
        kids: list[list[int]] = [[] for _ in range(n)]
        for j in range(n):
            if self.parents[j] >= 0:
                kids[self.parents[j]].append(j)
        self._children: tuple[tuple[int, ...], ...] = tuple(tuple(k) for k in kids)
        ride = _riding(riders, self.names, self.parents, self.order)
        self.riders: tuple[str, ...] = tuple(self.names[j] for j in range(n) if ride[j])
        # The bones the solve poses: a joint's children, less the riders of a joint that does not ride.
        self._bones = tuple(tuple(k for k in kids[j] if ride[j] or not ride[k]) for j in range(n))
        self._end_effectors = tuple(self.names[i] for i in range(n) if not self._bones[i] and not ride[i])
        self._effector_set = frozenset(self._end_effectors)
        lengths = np.zeros(n)
        for j in range(n):
            p = self.parents[j]
            if p >= 0:
                lengths[j] = float(np.linalg.norm(self.rest_positions[j] - self.rest_positions[p]))
                if not lengths[j] >= MIN_BONE:
                    raise ValueError(
                        f"joint {self.names[j]!r}: bone from {self.names[p]!r} is shorter "
                        f"than {MIN_BONE} ({lengths[j]:.3g})"
                    )
        lengths.setflags(write=False)
        self.bone_lengths: np.ndarray = lengths
        self._index = {name: i for i, name in enumerate(self.names)}
        self.rest_frames: np.ndarray = _frames.rest_frames(self, rest_frames)
        self.explicit_rest_frames: tuple[str, ...] = tuple(n for n in self.names if n in (rest_frames or {}))
        # Read-only, like every other attribute: the rig and the solver's plans cached on a
        # skeleton (``fabrik3d.solver.rig.rig``) rely on it never changing.
        self.constraints: Mapping[str, tuple[Any, ...]] = MappingProxyType(
            _constraints.check_constraints(self, constraints or {})
        )
        _constraints.check_axes(self)
        if posing is not None and not isinstance(posing, Posing):
            raise ValueError(f"posing: expected a fabrik3d.Posing, got {type(posing).__name__}")
        self.posing: Posing = (posing or Posing()).check(self)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as built (a worker process's copy, ``fabrik3d.batch.workers``), the same floats."""
        return {k: dict(v) if k == "constraints" else v for k, v in self.__dict__.items() if k in _BUILT}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for v in state.values():
            if isinstance(v, np.ndarray):
                v.setflags(write=False)
        self.__dict__.update(state, constraints=MappingProxyType(state["constraints"]))

    # -- derived structure -------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"Skeleton({len(self)} joints, root {self.names[self.root]!r}, effectors {self.end_effectors})"

    def __contains__(self, name: object) -> bool:
        """Whether the skeleton has a joint called ``name``."""
        try:
            return name in self._index
        except TypeError:  # unhashable
            return False

    def is_effector(self, name: object) -> bool:
        """Whether ``name`` is an end effector's name (a set look-up)."""
        try:
            return name in self._effector_set
        except TypeError:  # unhashable
            return False

    def index(self, name: str) -> int:
        """Index of the joint called ``name``; ``ValueError`` listing the names if unknown."""
        try:
            return self._index[name]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown joint {checks.quoted(name)}; joints are {checks.names_list(self.names)}"
            ) from None

    def children(self, i: int) -> tuple[int, ...]:
        """Indices of joint ``i``'s children, in skeleton order."""
        if not 0 <= i < len(self._children):
            raise ValueError(f"joint index {i} out of range [0, {len(self._children) - 1}]")
        return self._children[i]

    def bone_children(self, i: int) -> tuple[int, ...]:
        """Joint ``i``'s children less its riders when ``i`` does not ride (module docstring)."""
        return self._bones[i]

    def first_child(self, i: int) -> int:
        """Index of joint ``i``'s first child (its first rider only for a rider), or ``-1`` for a leaf."""
        kids = self._bones[i]
        return kids[0] if kids else -1

    @property
    def end_effectors(self) -> tuple[str, ...]:
        """Names of the leaves of the core (joints that do not ride and have no child that does not),
        in skeleton order."""
        return self._end_effectors

    @property
    def sub_bases(self) -> tuple[str, ...]:
        """Names of the joints of the core with two or more children in it, in skeleton order."""
        riding = set(self.riders)
        return tuple(n for i, n in enumerate(self.names) if len(self._bones[i]) >= 2 and n not in riding)

    @property
    def core(self) -> Skeleton:
        """The skeleton without its riders (``self`` when it has none), cached: same joint names,
        rest pose, rest frames, limits and posing; ``core_joints`` are its joints' indices here."""
        made = self.__dict__.get("_core")
        if made is None:
            made = self if not self.riders else _core(self)
            self.__dict__["_core"] = made
        return made

    @property
    def core_joints(self) -> np.ndarray:
        """``(m,)`` the indices of the core's joints in this skeleton, in order (all when no riders)."""
        riding = set(self.riders)
        return np.array([j for j, n in enumerate(self.names) if n not in riding], dtype=np.intp)

    @property
    def chains(self) -> tuple[tuple[int, ...], ...]:
        """The chains of the tree, as tuples of joint indices, parent to child.

        Each chain starts at the root or a sub-base and ends at the next sub-base or
        at an end effector, both included; chains are listed in skeleton order of
        their first bone.
        """
        out = []
        for j in self.order:
            p = int(self.parents[j])
            if p < 0 or j not in self._bones[p] or not (p == self.root or len(self._bones[p]) >= 2):
                continue
            chain = [p, j]
            while len(self._bones[chain[-1]]) == 1:
                chain.append(self._bones[chain[-1]][0])
            out.append(tuple(chain))
        out.sort(key=lambda c: c[1])
        return tuple(out)

    def path_to_root(self, i: int) -> tuple[int, ...]:
        """Joint indices from the root down to joint ``i``, both included."""
        path = [i]
        while self.parents[path[-1]] >= 0:
            path.append(int(self.parents[path[-1]]))
        return tuple(reversed(path))

    def without_constraints(self) -> Skeleton:
        """The same skeleton without joint limits: same joints, rest pose and rest frames (explicit
        ones kept), so its solved rotations are those of this skeleton's frames. ``self`` when it has
        no limits."""
        if not self.constraints:
            return self
        return Skeleton(
            self.names, self.parents, self.rest_positions, None, self._given_frames(), self.posing, self._rider_tops()
        )

    def with_posing(self, posing: Posing | None) -> Skeleton:
        """The same skeleton (joints, rest pose, rest frames, limits) posed by ``posing``
        (``None``: the plain full-body chain)."""
        limits = {name: list(items) for name, items in self.constraints.items()}
        return Skeleton(
            self.names, self.parents, self.rest_positions, limits, self._given_frames(), posing, self._rider_tops()
        )

    def _rider_tops(self) -> tuple[str, ...]:
        """The riders whose parent does not ride (naming them names every rider)."""
        riding = set(self.riders)
        return tuple(n for n in self.riders if self.names[int(self.parents[self.index(n)])] not in riding)

    def _given_frames(self) -> dict[str, Any] | None:
        return {name: self.rest_frames[self.index(name)] for name in self.explicit_rest_frames} or None

    # -- serialisation ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form: ``{"joints": [{"name", "parent", "position", "constraints"}]}``, and
        ``"riders"`` (the riders whose parent does not ride) when it has some.

        ``parent`` is the parent's name (``None`` for the root).
        """
        from fabrik3d.model.skeleton_dict import skeleton_to_dict

        return skeleton_to_dict(self)

    @classmethod
    def from_dict(cls, data: Any, where: str = "") -> Skeleton:
        """Build a skeleton from ``to_dict()``'s form.

        Errors name the place, e.g. ``joints[4].parent: unknown joint 'hipp'``;
        ``where`` is prefixed to those places (used by scene files).
        """
        from fabrik3d.model.skeleton_dict import skeleton_from_dict

        return skeleton_from_dict(cls, data, where)


class NotASkeletonError(TypeError, ValueError):
    """Raised where a ``Skeleton`` is expected and something else is given: a ``TypeError``, and a
    ``ValueError`` too (as ``solve_batch``'s checks raised before, so callers catching it still do)."""


def check_skeleton(value: Any, name: str = "skeleton") -> Skeleton:
    """``value`` if it is a ``Skeleton``; else ``TypeError`` naming the argument (a preset's name is a
    common slip: ``fabrik3d.presets.get(name)`` makes the skeleton)."""
    if not isinstance(value, Skeleton):
        hint = f" (for a preset, pass fabrik3d.presets.get({value!r}))" if isinstance(value, str) else ""
        raise NotASkeletonError(f"{name}: expected a fabrik3d.Skeleton, got {type(value).__name__}{hint}")
    return value


def _check_names(names: Iterable[str]) -> tuple[str, ...]:
    if isinstance(names, str):
        raise ValueError("names: expected a sequence of joint names, got a single string")
    out = tuple(names)
    if len(out) < 2:
        raise ValueError(f"names: a skeleton has at least two joints, got {len(out)}")
    seen: set[str] = set()
    for i, name in enumerate(out):
        if not isinstance(name, str) or not name:
            raise ValueError(f"joint {i}: name must be a non-empty string, got {checks.quoted(name)}")
        if name in seen:
            raise ValueError(f"joint {name!r}: duplicate name")
        seen.add(name)
    return out


def _check_parents(parents: Any, names: tuple[str, ...]) -> np.ndarray:
    n = len(names)
    arr = np.asarray(parents)
    if arr.shape != (n,):
        raise ValueError(f"parents: expected shape ({n},), got {arr.shape}")
    integral = arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
    if arr.dtype.kind not in "iu" and not integral:
        raise ValueError(f"parents: expected integer indices, got {arr.dtype}")
    arr = arr.astype(np.int64)
    for j in range(n):
        if not -1 <= arr[j] < n:
            raise ValueError(f"joint {names[j]!r}: parent index {int(arr[j])} out of range [-1, {n - 1}]")
    roots = [names[j] for j in range(n) if arr[j] == -1]
    if not roots:
        raise ValueError("parents: no root (every joint has a parent, so they form a cycle)")
    if len(roots) > 1:
        raise ValueError(f"parents: several roots ({checks.names_list(roots, quote=True)}); a skeleton has one")
    arr.setflags(write=False)
    return arr


def _check_positions(positions: Any, names: tuple[str, ...]) -> np.ndarray:
    n = len(names)
    try:
        arr = checks.real_array(positions)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"rest_positions: expected an ({n}, 3) array of numbers") from None
    if arr.shape != (n, 3):
        raise ValueError(f"rest_positions: expected shape ({n}, 3), got {arr.shape}")
    bad = ~np.all(np.isfinite(arr), axis=1)
    if bad.any():
        j = int(np.argmax(bad))
        raise ValueError(f"joint {names[j]!r}: non-finite rest position {arr[j].tolist()}")
    big = np.abs(arr).max(axis=1) > MAX_COORD  # beyond it, squared bone lengths could overflow to inf
    if big.any():
        j = int(np.argmax(big))
        raise ValueError(f"joint {names[j]!r}: rest position {arr[j].tolist()} beyond {MAX_COORD:g} in magnitude")
    arr.setflags(write=False)
    return arr


def _topological_order(parents: np.ndarray, names: tuple[str, ...]) -> tuple[int, ...]:
    """Depth-first pre-order from the root (children in index order); detects cycles."""
    n = len(parents)
    kids: list[list[int]] = [[] for _ in range(n)]
    root = -1
    for j in range(n):
        if parents[j] < 0:
            root = j
        else:
            kids[parents[j]].append(j)
    order: list[int] = []
    stack = [root]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(kids[j]))
    if len(order) != n:
        j = min(set(range(n)) - set(order))
        raise ValueError(f"joint {names[j]!r}: in a cycle of parents, not connected to the root")
    return tuple(order)


def _riding(riders: Any, names: tuple[str, ...], parents: np.ndarray, order: tuple[int, ...]) -> list[bool]:
    """Per joint: whether it rides (it or an ancestor is named in ``riders``)."""
    ride = [False] * len(names)
    if riders is None:
        return ride
    if isinstance(riders, str) or not isinstance(riders, Iterable):
        raise ValueError(f"riders: expected a list of joint names, got {str(riders)[:80]!r}")
    index = {name: j for j, name in enumerate(names)}
    for name in riders:
        j = index.get(name) if isinstance(name, str) else None
        if j is None:
            raise ValueError(f"riders: unknown joint {str(name)[:80]!r}")
        if parents[j] < 0:
            raise ValueError(f"riders: {name!r} is the root; the root cannot ride")
        ride[j] = True
    for j in order:
        if parents[j] >= 0 and ride[int(parents[j])]:
            ride[j] = True
    return ride


def _core(skeleton: Skeleton) -> Skeleton:
    """``Skeleton.core`` of a skeleton with riders."""
    keep = [int(j) for j in skeleton.core_joints]
    at = {j: k for k, j in enumerate(keep)}
    names = [skeleton.names[j] for j in keep]
    parents = [at[int(skeleton.parents[j])] if skeleton.parents[j] >= 0 else -1 for j in keep]
    limits = {n: list(items) for n, items in skeleton.constraints.items() if n in set(names)}
    frames = {n: skeleton.rest_frames[skeleton.index(n)] for n in skeleton.explicit_rest_frames if n in set(names)}
    return Skeleton(names, parents, skeleton.rest_positions[keep], limits, frames or None, skeleton.posing)
