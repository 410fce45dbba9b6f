"""The Python examples of the user docs run as written (each ```python block, in a fresh
namespace, in a temporary folder), and the numbers their comments state still hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["natural-posing.md", "animation.md", "character.md", "poses.md", "hands-and-body.md", "stage.md"]


def blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / page).read_text(), flags=re.S)


@pytest.mark.parametrize(("page", "k"), [(p, k) for p in PAGES for k in range(len(blocks(p)))])
def test_the_example_runs(page: str, k: int, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    code = blocks(page)[k]
    exec(compile(code, f"{page} block {k + 1}", "exec"), {"__name__": "__docs__"})
    printed = capsys.readouterr().out.splitlines()
    # a line `print(x)  # value...` states what it prints
    said = [m.group(1).strip() for m in re.finditer(r"^print\(.*\)\s+#\s*(.*)$", code, flags=re.M)]
    for line, claim in zip(printed, said):
        assert claim.startswith(line.strip()), (line, claim)
