"""The twin map (``fabrik3d.batch.twins.TWINS``) against the code: every mapped name exists on
both sides, every shared constant is defined once (the other side imports it) with one value, and
every public function or method of the batch modules is in the map (as a twin, or as batch-only
plumbing with a reason)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path
from typing import Any

import pytest

import fabrik3d
import fabrik3d.batch
import fabrik3d.solver
from fabrik3d.batch.twins import TWINS

PACKAGE = Path(fabrik3d.__file__).parent
PAIRS = [(s, b, shared) for s, b, shared in TWINS if s is not None]
PLUMBING = [(b, why) for s, b, why in TWINS if s is None]


def resolve(dotted: str) -> tuple[Any, Any]:
    """The object a dotted name denotes, and the module holding it (the longest importable prefix)."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:k]))
        except ModuleNotFoundError:
            continue
        obj: Any = module
        for name in parts[k:]:
            obj = inspect.getattr_static(obj, name) if inspect.isclass(obj) else getattr(obj, name)
        return obj, module
    raise ModuleNotFoundError(dotted)


def modules(package: Any) -> list[Any]:
    return [importlib.import_module(m.name) for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]


def assigned(module: Any) -> set[str]:
    """The names a module assigns at its top level (constants, aliases, classes and functions)."""
    tree = ast.parse(Path(module.__file__).read_text())
    names: set[str] = set()
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for t in targets:
            for leaf in ast.walk(t):
                if isinstance(leaf, ast.Name):
                    names.add(leaf.id)
    return names


SCALAR_MODULES = [importlib.import_module("fabrik3d.rotations"), *modules(fabrik3d.solver)]
BATCH_MODULES = [m for m in modules(fabrik3d.batch) if m.__name__ != "fabrik3d.batch.twins"]


@pytest.mark.parametrize(("scalar", "batch", "shared"), PAIRS, ids=[b for _, b, _ in PAIRS])
def test_both_sides_of_each_pair_exist(scalar: str, batch: str, shared: tuple[str, ...]) -> None:
    for name in (scalar, batch):
        obj, _ = resolve(name)
        assert callable(obj) or isinstance(obj, (property, classmethod, staticmethod)), name


@pytest.mark.parametrize(("scalar", "batch", "shared"), [p for p in PAIRS if p[2]], ids=[b for _, b, s in PAIRS if s])
def test_shared_constants_are_defined_once_with_one_value(scalar: str, batch: str, shared: tuple[str, ...]) -> None:
    sides = [resolve(scalar)[1], resolve(batch)[1]]
    for constant in shared:
        value, home = resolve(constant)
        name = constant.rsplit(".", 1)[1]
        homes = [m.__name__ for m in SCALAR_MODULES + BATCH_MODULES if name in assigned(m)]
        assert homes == [home.__name__], f"{constant} is defined in {homes}, not once"
        for module in sides:
            assert name in Path(module.__file__).read_text(), f"{module.__name__} does not use {constant}"
            if hasattr(module, name):  # imported by name: the same object
                assert getattr(module, name) is value, f"{module.__name__}.{name} differs from {constant}"


def test_no_constant_is_defined_on_both_sides() -> None:
    """An upper-case module constant of the solver (or ``rotations``) is not defined again in a batch
    module, under its name or with a leading underscore: the batch imports it."""
    scalar = {n.lstrip("_"): m.__name__ for m in SCALAR_MODULES for n in assigned(m) if n.lstrip("_").isupper()}
    twice = [
        f"{m.__name__}.{n} (also {scalar[n.lstrip('_')]})"
        for m in BATCH_MODULES
        for n in assigned(m)
        if n.lstrip("_").isupper() and n.lstrip("_") in scalar
    ]
    assert not twice, twice


def test_plumbing_has_a_reason_and_exists() -> None:
    for batch, why in PLUMBING:
        resolve(batch)
        assert len(why) == 1 and why[0].strip(), batch


def test_every_public_batch_function_and_method_is_mapped() -> None:
    mapped = {b for _, b, _ in TWINS}
    missing = []
    for module in BATCH_MODULES:
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj):
                found = [f"{module.__name__}.{name}"]
            elif inspect.isclass(obj):
                found = [
                    f"{module.__name__}.{name}.{attr}"
                    for attr, member in vars(obj).items()
                    if not attr.startswith("_")
                    and (isinstance(member, (property, classmethod, staticmethod)) or inspect.isfunction(member))
                    and getattr(getattr(member, "__func__", member), "__module__", module.__name__) == module.__name__
                ]
            else:
                continue
            missing += [f for f in found if f not in mapped]
    assert not missing, f"not in fabrik3d.batch.twins.TWINS: {missing}"


def test_each_scalar_function_has_at_most_one_twin() -> None:
    """One numpy twin and one compiled twin (``fabrik3d.batch.kernels``, ``kernels_tree``, ``kernels_frames``)
    at most."""
    for compiled in (False, True):
        scalars = [s for s, b, _ in PAIRS if b.startswith("fabrik3d.batch.kernels") == compiled]
        assert len(scalars) == len(set(scalars))
