"""End to end, a mesh prop in the web UI (issue 52, item 2): the real ``fabrik3d serve`` and Debian's headless
chromium; the Scene tab's **Add a mesh prop** field gets a ``.glb`` as a user chooses it: the prop is there,
picked, its mesh file's size; a file that is not glTF is refused with one line and nothing changes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import require_executable
from helpers import web as wh
from helpers.prop_asset import expected, table_file, table_glb

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page():  # type: ignore[no-untyped-def]
    require_executable("chromium", "apt-get install chromium")
    with wh.served_page() as out:
        yield out


def test_a_glb_chosen_in_the_field_is_a_prop_and_a_bad_file_is_refused(page, tmp_path: Path) -> None:
    (tmp_path / "table.glb").write_bytes(table_glb())
    (tmp_path / "notes.txt").write_text("not a mesh")
    wh.show_control(page, "#mesh-upload").set_input_files(str(tmp_path / "table.glb"))
    wh.wait_until(page, "() => window.trame.state.get('stage_props').length === 1", 60)
    assert not wh.get_state(page, "error_message")
    assert wh.get_state(page, "stage_props")[0]["name"] == "table" and wh.get_state(page, "prop_picked") == "table"
    frame = wh.trigger(page, "prop_frame", ["table"])
    height = np.ptp(expected(*table_file()).reshape(-1, 3), axis=0)[1]
    assert frame["position"][1] == pytest.approx(height / 2, abs=1e-6)  # (standing on the floor: its size)
    wh.show_control(page, "#mesh-upload").set_input_files(str(tmp_path / "notes.txt"))
    wh.wait_until(page, "() => !!window.trame.state.get('error_message')", 30)
    assert wh.get_state(page, "error_message") == "notes.txt: not a .glb or .gltf file (a mesh prop is a glTF mesh)"
    assert len(wh.get_state(page, "stage_props")) == 1
