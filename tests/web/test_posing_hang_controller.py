"""The Posing panel's hang arrow without the UI (issue 50): a hand's free arm hangs or follows the body;
a bad request is named and changes nothing."""

from __future__ import annotations

import pytest
from fabrik3d_web.document.controller import Controller


def test_the_hang_arrow_lets_an_arm_follow_and_undo_brings_it_back() -> None:
    c = Controller()
    assert c.posing_state()["hang_of"] == {"head": None, "hand_l": True, "hand_r": True, "toe_l": None, "toe_r": None}
    c.set_hang("hand_l", False)
    assert c.posing_state()["hang_of"]["hand_l"] is False
    c.undo()
    assert c.posing_state()["hang_of"]["hand_l"] is True


@pytest.mark.parametrize(
    ("effector", "hangs", "message"),
    [
        ("hand_l", "yes", "hang.hand_l: expected true or false"),
        ("hand_l", 1, "hang.hand_l: expected true or false"),
        ("head", True, "hang.head: its limb has no stiff joint above it"),
        ("elbow_l", True, "hang: 'elbow_l' is not an end effector"),
        (["hand_l"], True, "is not an end effector"),
    ],
)
def test_a_bad_hang_request_is_named_and_changes_nothing(effector, hangs, message: str) -> None:
    c = Controller()
    before = (c.scene.skeleton.posing, c.result)
    with pytest.raises(ValueError, match=message):
        c.set_hang(effector, hangs)
    assert (c.scene.skeleton.posing, c.result) == before and not c.undo_stack
