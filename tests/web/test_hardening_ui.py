"""Hardening, third pass (issue 53, items 8 and 9), through a real page on the real server: a switch
takes a boolean only (anything else is put back and named), and a trigger whose action fails, in any
way, answers with one line in the panel, never a traceback to the page or "internal error" for a bad
argument; the pose stays as it was and the server stays up."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import require_executable
from helpers import web as wh

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    require_executable("chromium", "apt-get install chromium")
    with wh.WebServer() as server, wh.browser() as b:
        yield wh.open_page(b, server.url)
        assert server.alive, server.output()


def set_state(page: Any, key: str, value: Any) -> None:
    page.evaluate("([k, v]) => window.trame.state.set(k, v)", [key, value])


def error_with(page: Any, text: str) -> str:
    wh.wait_until(page, "(t) => (window.trame.state.get('error_message') || '').includes(t)", 15, arg=text)
    return wh.get_state(page, "error_message")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("balance_on", "yes"),
        ("floor_on", None),  # (NaN from a page reaches the server as null)
        ("floor_on", "1"),  # (1 and 0 equal true and false in Python: the server sees no change)
        ("limits_on", "no"),
        ("show_poles", "false"),
        ("show_com", "on"),
        ("show_mannequin", []),
    ],
)
def test_a_switch_takes_a_boolean_only(page: Any, key: str, value: Any) -> None:
    before = wh.get_state(page, key)
    pose = wh.get_state(page, "pose")
    set_state(page, key, value)
    message = error_with(page, f"{key}: expected true or false")
    assert "\n" not in message
    wh.wait_until(page, "([k, v]) => window.trame.state.get(k) === v", 15, [key, before])
    assert isinstance(wh.get_state(page, key), bool)
    assert wh.get_state(page, "pose") == pose
    set_state(page, "error_message", "")


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("apply_library_pose", ["T", False, [["arms"]]], "parts"),
        ("apply_library_pose", ["T", False, [{"a": 1}]], "parts"),
        ("set_pose_library", ["/tmp/" + "x" * 300 + "/poses.json"], "poses.json"),
    ],
)
def test_a_failed_action_answers_in_one_line(page: Any, name: str, args: list[Any], message: str) -> None:
    pose = wh.get_state(page, "pose")
    wh.trigger(page, name, args)
    said = error_with(page, message)
    assert "internal error" not in said and "Traceback" not in said and "\n" not in said
    assert len(said) <= 300
    assert wh.get_state(page, "pose") == pose
    set_state(page, "error_message", "")
