"""Hands that read (issue 51, item 7) on the humanoid preset: a fist with every fingertip within 3 cm of
the palm's centre and the thumb closed over the index's and middle finger's middle phalanges (its tip
within 2.5 cm of their midpoint, at least 1 cm past them away from the palm), fingertips at least 1 cm
apart; a pinch with the thumb's tip within 1 cm of the index's; every joint within its limits. Close-up
pictures of both hands go to ``tests/artifacts/hand-preset-*.png``.

Before: the fist's thumb hung straight, its tip 7.7 cm from the palm's centre and 5.9 cm from the
phalanges' midpoint."""

from __future__ import annotations

import pytest
from conftest import ROOT
from helpers.hand_bars import assert_fist, assert_pinch
from helpers.hand_pictures import draw_hand

import fabrik3d
from fabrik3d.solver.hands import shape_hand

BODY = fabrik3d.presets.get("humanoid")
ARTIFACTS = ROOT / "tests" / "artifacts"


@pytest.mark.parametrize("side", ["l", "r"])
def test_the_fist_closes_the_thumb_over_the_fingers(side: str) -> None:
    start = fabrik3d.solve(BODY, {f"hand_{side}": [0.4 if side == "l" else -0.4, 1.2, 0.35]})
    p, q = shape_hand(BODY, start.positions, start.rotations, side, "fist")
    m = assert_fist(BODY, p, q, side)
    assert m["thumb"] <= 0.005, m  # (the solve reaches its contact)
    if side == "l":
        draw_hand(BODY, p, q, side, ARTIFACTS / "hand-preset-fist.png", "humanoid preset: fist (left)")


@pytest.mark.parametrize("side", ["l", "r"])
def test_the_pinch_brings_the_thumb_tip_to_the_index_tip(side: str) -> None:
    rest = fabrik3d.solve(BODY, {})
    p, q = shape_hand(BODY, rest.positions, rest.rotations, side, "pinch")
    assert_pinch(BODY, p, q, side)
    if side == "l":
        draw_hand(BODY, p, q, side, ARTIFACTS / "hand-preset-pinch.png", "humanoid preset: pinch (left)")
