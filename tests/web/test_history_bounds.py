"""The undo history's memory is bounded (issue 33, item 6): it holds at most ``HISTORY`` steps and the
characters of at most ``HISTORY_CHARACTERS`` of them, so opening characters one after another does not
keep every one alive."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from fabrik3d_web.document.controller import Controller
from fabrik3d_web.document.history import HISTORY_CHARACTERS
from helpers.character_asset import write_character


def test_opening_many_characters_keeps_only_the_last_few_in_the_undo_history(tmp_path: Path) -> None:
    c = Controller()
    alive = []
    for k in range(HISTORY_CHARACTERS + 3):
        c.load_character_file(write_character(tmp_path, f"hero{k}", "mixamo"))
        alive.append(weakref.ref(c.character))
    held = {id(s.character) for s in c.undo_stack if s.character is not None}
    assert len(held) <= HISTORY_CHARACTERS
    gc.collect()
    assert sum(ref() is not None for ref in alive) <= HISTORY_CHARACTERS + 1  # (the undo steps' and the one shown)
    while c.undo():  # (what is left undoes as before)
        pass
    assert c.character is None or any(ref() is c.character for ref in alive)
