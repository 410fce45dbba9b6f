"""Shared test helpers.

Tests that need an outside tool (Debian's chromium, node with the npm packages in
``tests/js``) call ``require_executable`` / ``require_node_modules``: on a user's
machine without the tool they skip with the reason; under ``CI=true`` a missing
tool fails the test instead.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
JS_DIR = ROOT / "tests" / "js"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing_tool(reason: str) -> None:
    """Skip (on a user's machine) or fail (under CI=true) because a tool is missing."""
    if IN_CI:
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)


def require_notebook() -> Any:
    """The ``fabrik3d.notebook`` module; skips the calling test module (fails under CI=true) when the
    notebook extra is missing."""
    try:
        import fabrik3d.notebook
    except ImportError as exc:
        if IN_CI:
            raise
        pytest.skip(str(exc), allow_module_level=True)
    return fabrik3d.notebook


def require_executable(name: str, hint: str) -> str:
    """Path of executable ``name``; skips or fails (CI) with ``hint`` when absent."""
    path = shutil.which(name)
    if path is None:
        missing_tool(f"{name} is not installed ({hint})")
    return path  # type: ignore[return-value]


def require_node_modules(*packages: str) -> str:
    """Path of ``node`` once the npm packages are installed in tests/js; else skip/fail."""
    node = require_executable("node", "apt-get install nodejs npm")
    for package in packages:
        if not (JS_DIR / "node_modules" / package).is_dir():
            missing_tool(f"npm package {package!r} is missing (run: cd tests/js && npm ci)")
    return node


@pytest.fixture(scope="module")
def page():
    """A page on a fresh ``fabrik3d serve`` (the humanoid) in Debian's headless chromium, one per test
    module (a module that needs another server defines its own ``page``)."""
    from helpers import web as wh

    require_executable("chromium", "apt-get install chromium")
    with wh.served_page() as p:
        yield p
