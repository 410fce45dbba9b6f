"""The core stays pure Python + numpy: importing it loads no other compiled code and no UI toolkit."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT

# Runs in a fresh interpreter: imports every core module, then reports what was loaded.
_PROBE = textwrap.dedent(
    """
    import importlib, importlib.machinery, json, os, pkgutil, site, sys, sysconfig

    before = set(sys.modules)
    import fabrik3d

    for extra in sys.argv[1:]:  # used to check that the probe itself notices foreign modules
        importlib.import_module(extra)

    def walk(folder, prefix):  # (as pkgutil.walk_packages, without importing the packages it walks)
        for m in pkgutil.iter_modules([folder], prefix):
            yield m.name
            if m.ispkg:
                yield from walk(os.path.join(folder, m.name.rsplit(".", 1)[1]), m.name + ".")

    found = sorted(walk(fabrik3d.__path__[0], "fabrik3d."))
    imported = []
    for name in found:
        if name == "fabrik3d.notebook" or name.startswith("fabrik3d.notebook."):
            continue  # the Jupyter view may need its extra
        importlib.import_module(name)
        imported.append(name)

    import numpy

    def real(path):
        return os.path.realpath(path)

    numpy_dir = real(os.path.dirname(numpy.__file__))
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix, "installed_base": sys.base_prefix}
    stdlib = set()
    for key in ("stdlib", "platstdlib"):
        stdlib.add(real(sysconfig.get_path(key)))
        stdlib.add(real(sysconfig.get_path(key, vars=base)))
    for var in ("DESTSHARED", "BINLIBDEST"):
        if sysconfig.get_config_var(var):
            stdlib.add(real(sysconfig.get_config_var(var)))
    site_dirs = site.getsitepackages() + [sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    site_dirs = {real(p) for p in site_dirs}

    def under(path, folder):
        return path == folder or path.startswith(folder + os.sep)

    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    foreign = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not path or not path.endswith(suffixes):
            continue
        path = real(path)
        if under(path, numpy_dir):
            continue
        in_site = any(under(path, d) for d in site_dirs)
        if not in_site and any(under(path, d) for d in stdlib):
            continue
        foreign.append([name, path])

    print(json.dumps({
        "found": found,
        "imported": imported,
        "foreign": foreign,
        "new": sorted(set(sys.modules) - before),
        "all": sorted(sys.modules),
    }))
    """
)

UI_PACKAGES = ("trame", "vtk", "vtkmodules", "pythreejs", "ipywidgets")


def _probe(*extra: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_every_core_module_imports_without_foreign_compiled_code_or_ui_toolkits() -> None:
    report = _probe()
    # The discovery really found the core modules (a broken walk would make the test vacuous).
    for name in ("fabrik3d.skeleton", "fabrik3d.solver", "fabrik3d.chain", "fabrik3d.scene", "fabrik3d.cli"):
        assert name in report["imported"], report["found"]
    assert report["foreign"] == [], (
        f"compiled modules other than numpy's or the standard library's: {report['foreign']}"
    )
    ui = [m for m in report["all"] if m.split(".")[0] in UI_PACKAGES]
    assert ui == [], f"the core imported UI toolkits: {ui}"
    # numpy is the one compiled dependency, and it was really loaded (the check above saw extensions).
    assert "numpy" in report["new"]


def test_the_probe_notices_a_foreign_compiled_module() -> None:
    pytest.importorskip("greenlet")  # a compiled package installed with playwright
    report = _probe("greenlet")
    assert any(name.startswith("greenlet") for name, _ in report["foreign"]), report["foreign"]
    # ... while the standard library's and numpy's own extensions are accepted.
    assert not any(name.startswith(("numpy", "math", "_json")) for name, _ in report["foreign"])
