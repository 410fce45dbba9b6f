"""The bars of issue 51, item 7, on one hand (``assert_fist``, ``assert_pinch``), read with
``helpers.hand_pictures.hand_measures``; metres."""

from __future__ import annotations

from typing import Any

import numpy as np

import fabrik3d
from helpers.hand_pictures import hand_measures
from helpers.limits import violations

TIP_BAR = 0.03  # every fingertip but the thumb's to the palm's centre
THUMB_BAR = 0.025  # the thumb's tip to the midpoint of the index's and middle's middle phalanges
OUTSIDE_BAR = 0.01  # the thumb's tip past those phalanges, away from the palm (a finger's half thickness)
APART_BAR = 0.01  # between any two fingertips
PINCH_BAR = 0.01  # the thumb's tip to the index's


def assert_fist(sk: fabrik3d.Skeleton, p: np.ndarray, q: np.ndarray, side: str, rig_map: Any = None) -> dict:
    """The fist's bars; returns the measures."""
    m = hand_measures(sk, p, q, side, rig_map)
    assert max(v for f, v in m["tips"].items() if f != "thumb") <= TIP_BAR, m
    assert m["midpoint"] <= THUMB_BAR and m["outside"] >= OUTSIDE_BAR, m
    assert m["apart"] >= APART_BAR, m
    assert max(violations(sk, p, q).values(), default=0.0) < 1e-6
    return m


def assert_pinch(sk: fabrik3d.Skeleton, p: np.ndarray, q: np.ndarray, side: str, rig_map: Any = None) -> dict:
    """The pinch's bar; returns the measures."""
    m = hand_measures(sk, p, q, side, rig_map)
    assert m["pinch"] <= PINCH_BAR, m
    assert max(violations(sk, p, q).values(), default=0.0) < 1e-6
    return m
