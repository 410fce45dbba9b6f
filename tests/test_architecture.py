"""The layout's rules (docs/architecture.md), read from the source with ``ast``.

Every import statement counts: at module level, inside functions and under ``if TYPE_CHECKING:``
(a type-only cycle is still a cycle for a reader). Modules are named as they are imported:
``fabrik3d.x.y`` for the library, ``fabrik3d_web.x.y`` for ``web/`` (its subpackages: ``web/view/x.py`` is
``fabrik3d_web.view.x``).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from conftest import ROOT

# Each layer of the library and what it may import of the library (itself included).
BASE = ("fabrik3d.rotations", "fabrik3d.checks")
LAYERS = {
    "base": BASE,
    "model": (*BASE, "fabrik3d.model"),
    "solver": (*BASE, "fabrik3d.model", "fabrik3d.solver"),
    "batch": (*BASE, "fabrik3d.model", "fabrik3d.solver", "fabrik3d.batch"),
    "io": (*BASE, "fabrik3d.model", "fabrik3d.solver", "fabrik3d.batch", "fabrik3d.io", "fabrik3d"),
    "display": (*BASE, "fabrik3d.model", "fabrik3d.solver", "fabrik3d.display"),
    "pictures": (*BASE, "fabrik3d.model", "fabrik3d.solver", "fabrik3d.pictures"),
}
# The old import paths: thin re-exports for users; the library itself never imports them.
OLD_PATHS = tuple(
    f"fabrik3d.{name}"
    for name in ("chain", "constraints", "frames", "gltf", "presets", "scene", "skeleton", "take", "targets")
)
UI_PACKAGES = ("trame", "vtk", "vtkmodules", "pythreejs", "ipywidgets", "fabrik3d_web")
MAX_LINES = 400

# The web app's layers (web/'s subpackages, docs/architecture.md), lowest first, and what each may import of
# ``fabrik3d_web`` (itself included) and which packages it must not import at all. ``SHARED``: the top-level
# modules the drags and panels may use (what a page may do, closed pages, memory), which import no layer;
# ``COMPOSERS``: the app, which composes the layers, and its start-up. Nothing may import a composer but
# ``serve`` (the app).
WEB = "fabrik3d_web"
SHARED = (f"{WEB}.security", f"{WEB}.pages", f"{WEB}.memory")
COMPOSERS = (f"{WEB}.app", f"{WEB}.serve")
WEB_LAYERS = {
    "document": ((f"{WEB}.document",), ("trame", "vtk", "vtkmodules", "wslink", "aiohttp")),
    "view": ((f"{WEB}.view", f"{WEB}.document"), ("trame", "wslink", "aiohttp")),
    "drags": ((f"{WEB}.drags", f"{WEB}.view", f"{WEB}.document", *SHARED), ()),
    "panels": ((f"{WEB}.panels", f"{WEB}.drags", f"{WEB}.view", f"{WEB}.document", *SHARED), ()),
}
# (module, what it imports) -> why it may all the same. Empty: every module keeps its layer's rules (keep
# a reason here for any exception rather than widening a layer).
WEB_EXCEPTIONS: dict[tuple[str, str], str] = {}


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] == "web":
        parts[0] = "fabrik3d_web"
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    paths = [*(ROOT / "fabrik3d").rglob("*.py"), *(ROOT / "web").rglob("*.py")]
    return {module_name(p): p for p in sorted(paths)}


def is_package(name: str) -> bool:
    return modules()[name].name == "__init__.py"


@cache
def imports(name: str) -> tuple[tuple[str, int, bool], ...]:
    """``(imported module, line, at module level)`` for every import in module ``name`` (``from p import
    x`` counts as ``p.x`` when that is a module)."""
    tree = ast.parse(modules()[name].read_text(), str(modules()[name]))
    package = name if is_package(name) else name.rpartition(".")[0]
    top_level = {id(node) for node in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno, id(node) in top_level) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.append((sub if sub in modules() else base, node.lineno, id(node) in top_level))
    return tuple(out)


def internal_edges(name: str) -> set[str]:
    """The library modules that importing ``name`` imports (the target's packages too, except those
    ``name`` itself sits in: they are initialised first)."""
    own = {".".join(name.split(".")[:k]) for k in range(1, name.count(".") + 1)}
    out = set()
    for target, _, _ in imports(name):
        parts = target.split(".")
        for k in range(1, len(parts) + 1):
            prefix = ".".join(parts[:k])
            if prefix in modules() and prefix not in own and prefix != name:
                out.add(prefix)
    return out


def layer(name: str) -> str | None:
    if name in BASE:
        return "base"
    for key in ("model", "solver", "batch", "io", "pictures"):
        if name == f"fabrik3d.{key}" or name.startswith(f"fabrik3d.{key}."):
            return key
    return "display" if name == "fabrik3d.display" else None


def under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_source_is_read() -> None:
    names = set(modules())
    assert {"fabrik3d", "fabrik3d.model.skeleton", "fabrik3d.solver.tree", "fabrik3d_web.app"} <= names
    assert any(t == "fabrik3d.model.frames" and top for t, _, top in imports("fabrik3d.model.constraints"))
    # type-only imports are read too
    assert any(t == "fabrik3d.solver.rig" and not top for t, _, top in imports("fabrik3d.solver.constrained.damped"))


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_type_only_imports_included() -> None:
    graph = {name: internal_edges(name) for name in modules()}
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


@pytest.mark.parametrize("name", [n for n in sorted(modules()) if layer(n)])
def test_each_layer_imports_only_downward(name: str) -> None:
    allowed = LAYERS[layer(name)]  # type: ignore[index]
    wrong = sorted(t for t in internal_edges(name) if t.startswith("fabrik3d") and not under(t, allowed))
    assert wrong == [], f"{name} ({layer(name)}) imports {wrong}; it may import {allowed}"


@pytest.mark.parametrize("name", sorted(modules()))
def test_the_core_never_imports_a_front_end_nor_any_module_the_old_paths(name: str) -> None:
    targets = [t for t, _, _ in imports(name)]
    if under(name, ("fabrik3d",)) and not under(name, ("fabrik3d.cli", "fabrik3d.notebook")):
        ui = [t for t in targets if t.split(".")[0] in UI_PACKAGES]
        assert ui == [], f"{name} imports {ui}"
        front = [t for t in targets if under(t, ("fabrik3d.cli", "fabrik3d.notebook"))]
        assert front == [], f"{name} imports {front}"
    if name not in OLD_PATHS and name != "fabrik3d":
        old = [t for t in targets if t in OLD_PATHS]
        assert old == [], f"{name} imports the old paths {old}: import the layers' modules"


def web_layer(name: str) -> str | None:
    return next((key for key in WEB_LAYERS if under(name, (f"{WEB}.{key}",))), None)


def test_every_web_module_has_a_layer_or_is_shared_or_composes() -> None:
    top = {WEB, *SHARED, *COMPOSERS, *(f"{WEB}.{key}" for key in WEB_LAYERS)}
    loose = sorted(n for n in modules() if n.startswith(WEB) and n not in top and not web_layer(n))
    assert loose == [], f"{loose}: put each in document/, view/, drags/ or panels/ (or name it in SHARED)"
    assert {"fabrik3d_web.document.document", "fabrik3d_web.view.scene_view", "fabrik3d_web.drags.dragging"} <= set(
        modules()
    )
    assert "fabrik3d_web.view.vtk_parts" in internal_edges("fabrik3d_web.panels.hands_panel")


@pytest.mark.parametrize("name", [n for n in sorted(modules()) if web_layer(n) or n in SHARED])
def test_each_web_layer_imports_only_downward(name: str) -> None:
    """document: numpy and fabrik3d only; view: VTK and the document; drags: the view and the document;
    panels: trame and everything below; none of them the app (``app``, ``serve``), which composes them."""
    allowed, banned = WEB_LAYERS[web_layer(name)] if web_layer(name) else ((), ())  # (SHARED: no layer)
    excused = {target for (module, target) in WEB_EXCEPTIONS if module == name}
    wrong = sorted(
        t for t in internal_edges(name) if t.startswith(f"{WEB}.") and not under(t, allowed) and t not in excused
    )
    assert wrong == [], f"{name} ({web_layer(name) or 'shared'}) imports {wrong}; it may import {allowed}"
    packages = sorted({t for t, _, _ in imports(name) if t.split(".")[0] in banned} - excused)
    assert packages == [], f"{name} ({web_layer(name)}) imports {packages}, which its layer must not"


def test_the_web_exceptions_are_still_needed() -> None:
    for (module, target), reason in WEB_EXCEPTIONS.items():
        assert reason, (module, target)
        assert target in internal_edges(module) or target in {t for t, _, _ in imports(module)}, (module, target)


def test_web_and_notebook_never_import_the_cli_and_the_cli_loads_the_web_package_only_to_serve_and_render() -> None:
    for name in [n for n in modules() if n.startswith(("fabrik3d_web", "fabrik3d.notebook"))]:
        assert not [t for t, _, _ in imports(name) if t == "fabrik3d.cli"], name
    web = [(t, top) for t, _, top in imports("fabrik3d.cli") if t.startswith("fabrik3d_web")]
    assert web and not any(top for _, top in web), web
    tree = ast.parse(modules()["fabrik3d.cli"].read_text())
    inside = [
        f.name
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef)
        and any(isinstance(n, ast.ImportFrom) and (n.module or "").startswith("fabrik3d_web") for n in ast.walk(f))
    ]
    assert sorted(inside) == ["_cmd_render", "_cmd_serve"], inside


@pytest.mark.parametrize("name", sorted(modules()))
def test_modules_stay_under_400_lines(name: str) -> None:
    lines = len(modules()[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{modules()[name].relative_to(ROOT)}: {lines} lines"


def test_no_test_module_imports_another() -> None:
    tests = ROOT / "tests"
    test_names = {p.stem for p in tests.rglob("test_*.py") if "node_modules" not in p.parts}
    for path in tests.rglob("*.py"):
        if "node_modules" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            bad = [n for n in names if n.split(".")[-1] in test_names or n.split(".")[0] in test_names]
            assert bad == [], f"{path.relative_to(ROOT)} imports the test module(s) {bad}: use tests/helpers"


def test_old_paths_and_submodule_attributes_work_and_import_stays_cheap() -> None:
    code = """
import json, sys
import fabrik3d
cheap = {m: m in sys.modules for m in ("fabrik3d.io.gltf", "fabrik3d.notebook", "fabrik3d.cli", "fabrik3d.io.take")}
humanoid = fabrik3d.presets.get("humanoid")
from fabrik3d.constraints import Cone, clamp_angle
from fabrik3d.frames import pose_frames, rest_frames
from fabrik3d.solver import SolveResult, solve
from fabrik3d.batch import solve_batch
import fabrik3d.scene, fabrik3d.take, fabrik3d.gltf, fabrik3d.chain, fabrik3d.skeleton, fabrik3d.targets
print(json.dumps({
    "cheap": cheap,
    "joints": len(humanoid.names),
    "same": [fabrik3d.gltf.export_pose is fabrik3d.io.gltf.export_pose,
             fabrik3d.take.Take is fabrik3d.io.take.Take,
             fabrik3d.scene.load_scene is fabrik3d.load_scene,
             Cone is fabrik3d.Cone, solve is fabrik3d.solve, solve_batch is fabrik3d.solve_batch,
             fabrik3d.constraints.Hinge is fabrik3d.model.constraints.Hinge],
    "missing": hasattr(fabrik3d, "no_such_module"),
}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["cheap"] == {m: False for m in report["cheap"]}, report["cheap"]
    assert report["joints"] == 65
    assert all(report["same"]), report["same"]
    assert report["missing"] is False
