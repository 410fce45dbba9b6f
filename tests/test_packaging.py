"""A non-editable wheel carries the library and the web app, and works from a fresh virtual environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

# Folders of the checkout that are not part of a source distribution.
_SKIP = shutil.ignore_patterns(
    ".venv",
    ".git",
    "node_modules",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".hypothesis",
    "artifacts",
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the checkout (so the build leaves nothing in the shared tree)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=_SKIP)
    out = tmp / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation", "-q", "-w", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheels = list(out.glob("fabrik3d-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_contains_the_library_and_the_web_app_but_no_tests(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert "fabrik3d/__init__.py" in names
    assert "fabrik3d/solver/__init__.py" in names
    assert "fabrik3d_web/__init__.py" in names
    # Every module of the library in the checkout, subpackages included, made it into the wheel.
    for path in (ROOT / "fabrik3d").rglob("*.py"):
        assert path.relative_to(ROOT).as_posix() in names
    assert not any(t in ("tests", "web", "benchmarks") for t in tops), sorted(tops)
    assert not any("/tests/" in n or n.startswith("tests/") for n in names)
    # Every module of the web app in the checkout, its layers' subpackages included, made it into the wheel
    # under its installed name.
    for path in (ROOT / "web").rglob("*.py"):
        assert f"fabrik3d_web/{path.relative_to(ROOT / 'web').as_posix()}" in names
    assert "fabrik3d_web/view/scene_view.py" in names


def test_wheel_installs_and_imports_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site_packages = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.strip()
    )
    # numpy (and the other runtime packages) come from the main venv, without touching the network;
    # a plain path line does not run the main venv's .pth files, so its editable install stays invisible.
    (site_packages / "main_venv.pth").write_text(sysconfig.get_path("purelib") + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    check = subprocess.run(
        [
            str(python),
            "-c",
            "import fabrik3d, fabrik3d_web; print(fabrik3d.__file__); print(fabrik3d_web.__file__);"
            "import fabrik3d.presets as p; print(len(p.get('humanoid')));"
            "import fabrik3d_web.document.document",  # (a layer's subpackage; no trame nor VTK)
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0, check.stderr
    lib, web, joints = check.stdout.split()
    for path in (lib, web):
        assert Path(path).resolve().is_relative_to(site_packages.resolve()), path
        assert not Path(path).resolve().is_relative_to(ROOT), path
    assert int(joints) > 2
    # The console script is installed too and runs from outside the source tree.
    cli = subprocess.run(
        [str(env_dir / "bin" / "fabrik3d"), "presets"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    assert "humanoid" in cli.stdout
