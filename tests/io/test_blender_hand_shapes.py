"""Hands that read (issue 51, item 7) on characters Blender builds: Rigify's human metarig
(``tests/blender/export_rigs.py``) and a Mixamo-named armature with five fingers a hand
(``tests/blender/export_hand_rigs.py``). The fist and the pinch meet the preset's bars
(``helpers.hand_bars``); close-up pictures go to ``tests/artifacts/hand-<rig>-*.png``.

Before: the palm's centre was taken from the rig's palm bone, not its wrist, and the fist left the
index or little finger's tip 3.4 to 4.1 cm from the centre measured from the wrist, its thumb 8 cm
from the phalanges' midpoint."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT
from helpers.blender import exported_rigs, run_script
from helpers.hand_bars import assert_fist, assert_pinch
from helpers.hand_pictures import draw_hand

from fabrik3d.io.character import Character, load_character
from fabrik3d.solver.hands import shape_hand

ARTIFACTS = ROOT / "tests" / "artifacts"


@pytest.fixture(scope="module")
def rigs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Character]:
    folder = exported_rigs(tmp_path_factory.mktemp("hand_rigs"))
    run_script("export_hand_rigs.py", str(folder))
    assert (folder / "mixamo_hands.glb").exists()
    return {rig: load_character(Path(folder) / f"{rig}.glb") for rig in ("rigify", "mixamo_hands")}


@pytest.mark.blender
@pytest.mark.parametrize("rig", ["rigify", "mixamo_hands"])
@pytest.mark.parametrize("side", ["l", "r"])
def test_fist_and_pinch_on_blender_rigs_meet_the_bars(rigs: dict[str, Character], rig: str, side: str) -> None:
    c = rigs[rig]
    s, m = c.skeleton, c.rig_map
    p0, q0 = s.rest_positions.copy(), s.rest_frames.copy()
    for shape, check in (("fist", assert_fist), ("pinch", assert_pinch)):
        p, q = shape_hand(s, p0, q0, side, shape, rig_map=m)
        check(s, p, q, side, m)
        if side == "l":
            draw_hand(s, p, q, side, ARTIFACTS / f"hand-{rig}-{shape}.png", f"{rig} (Blender): {shape} (left)", m)
