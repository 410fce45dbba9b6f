"""Outputs never replace inputs: the one rule that every command writing files from files (``fabrik3d
solve -o``, ``export``, ``bake``) and ``fabrik3d.io.bake_many`` checks, for the whole plan of outputs,
before anything is written.

``check_outputs`` refuses, with a one-line ``ValueError``:

- an output that is one of the inputs, or any input's file: paths are compared resolved
  (``os.path.realpath``: a symlink, ``./a.json`` and ``a.json``, ``x/../a.json``), and by the file they
  open (``os.path.samefile``, where both exist: a hard link, another case of the name on a file system
  that ignores case);
- two outputs that are one file (``x/a.json`` and ``y/a.json`` baked into one folder both write
  ``a.glb``), naming both inputs; on a file system that ignores case (``case_blind``) names that differ
  only in case are one file too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from fabrik3d import checks

Pathish = str | os.PathLike[str]


def file_key(path: Pathish, fold_case: bool = False) -> str:
    """``path`` resolved (symlinks followed, ``.`` and ``..`` gone; ``os.path.normcase``), case-folded with
    ``fold_case``: two paths with one key name one file."""
    key = os.path.normcase(os.path.realpath(os.fspath(path)))
    return key.casefold() if fold_case else key


def same_file(a: Pathish, b: Pathish) -> bool:
    """Whether ``a`` and ``b`` name one file: the same resolved path (``file_key``), or, where both exist,
    the same file (``os.path.samefile``: hard links, a case-blind file system)."""
    if file_key(a) == file_key(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # (either missing or unreadable; ValueError: a NUL in a name)
        return False


def case_blind(folder: Pathish) -> bool:
    """Whether names in ``folder`` (or its nearest existing parent) ignore case: an entry there, or the
    folder itself, found again under its name with the case swapped. Nothing is written; a folder with
    no name holding letters is taken as case-sensitive."""
    place = Path(os.path.realpath(os.fspath(folder)))
    while not place.is_dir() and place != place.parent:
        place = place.parent
    try:
        names = [e.name for e, _ in zip(os.scandir(place), range(64))]
    except OSError:
        names = []
    probes = [(place / n, place / n.swapcase()) for n in names] + [(place, place.parent / place.name.swapcase())]
    for path, swapped in probes:
        if swapped.name != path.name:
            try:
                return os.path.samefile(path, swapped)
            except (OSError, ValueError):
                return False
    return False


def check_outputs(outputs: Sequence[tuple[Pathish, str]], inputs: Iterable[Pathish]) -> None:
    """Refuse the plan (module docstring) unless every output is a file of its own that no input is.

    Args:
        outputs: ``(path, source)`` for each file to be written; ``source`` names what it is made from
            (a scene file, or ``-o``) in the message.
        inputs: the files read (names that are not files, a preset's, are skipped).

    Raises:
        ValueError: one line, naming the output and the input (or the two sources) before anything is
            written.
    """
    files_read = [p for p in inputs if _exists(p)]
    blind: dict[str, bool] = {}
    seen: dict[str, tuple[Pathish, str]] = {}
    for path, source in outputs:
        for read in files_read:
            if same_file(path, read):
                whose = "the output" if same_file(source, read) else f"{checks.cut(source)}'s output"
                raise ValueError(
                    f"{checks.cut(os.fspath(path))}: {whose} would replace the input {checks.cut(os.fspath(read))} "
                    "(the same file); write it elsewhere"
                )
        folder = os.path.dirname(file_key(path))
        if folder not in blind:
            blind[folder] = case_blind(folder)
        key = file_key(path, blind[folder])
        if key in seen:
            first = seen[key][1]
            where = Path(os.fspath(path))
            raise ValueError(
                f"{checks.cut(first)} and {checks.cut(source)} would both write {checks.cut(where.name)} "
                f"in {checks.cut(str(where.parent))}; bake them into different folders"
            )
        seen[key] = (path, source)


def _exists(path: Pathish) -> bool:
    """Whether ``path`` is there (a dangling symlink too)."""
    try:
        return os.path.lexists(path)
    except (OSError, ValueError):
        return False
