"""The panel's download buttons: a file the server makes, saved by the browser under a name of its own.

Every download gets a distinct name that says what it is (issue 51, item 8): the scene's or character's
name (state ``file_stem``), what the file holds, the frame it shows when the timeline has keys (not for
the animation or the take, which hold every frame), and the browser's local date and time to the
second of the click: ``hero-pose-f12-2025-06-01-143012.glb``, ``hero-animation-2025-06-01-143020.glb``.
Two exports of one character, a frame or a second apart, never share a name, and they sort by time.
"""

from __future__ import annotations

from typing import Any

from trame.widgets import vuetify3 as v3

# Downloads of the whole range or take: their names carry no frame.
WHOLE = ("animation", "take")
# The browser's local date and time, ``2025-06-01-143012`` (a JS expression; its ISO form shifted by the
# time zone's offset, the seconds' fraction cut off).
_LOCAL_TIME = (
    "new Date(Date.now() - new Date().getTimezoneOffset() * 60000).toISOString().slice(0, 19)"
    ".replace('T', '-').split(':').join('')"
)


def file_name_js(filename: str) -> str:
    """The JS expression (of the page's state ``file_stem``, ``frame`` and ``key_frames``) of the name a
    download of ``filename`` (``pose.glb``: what it holds and its extension) is saved as (the module
    docstring)."""
    what, _, ext = filename.partition(".")
    frame = "" if what in WHOLE else " + ((key_frames || []).length ? '-f' + frame : '')"
    return f"(file_stem || 'fabrik3d') + '-{what}'{frame} + '-' + {_LOCAL_TIME} + '.{ext}'"


def download_button(
    element_id: str, text: str, filename: str, callback: Any, mime: str, disabled: str = "false", args: str = ""
) -> None:
    """A button that asks the server for a file and saves it (trame's ``utils.download``) under the name
    ``file_name_js`` makes of ``filename``: ``hero-pose-f12-2025-06-01-143012.glb``. ``args``: a JS
    expression of the trigger's one argument (none if empty)."""
    name = callback.__name__
    call = f"trigger('{name}', [{args}])" if args else f"trigger('{name}')"
    v3.VBtn(
        text,
        id=element_id,
        prepend_icon="mdi-download",
        variant="tonal",
        size="small",
        disabled=(disabled,),
        # A failed export returns null (and sets error_message): then nothing is saved.
        click=f"{call}.then((data) => data && utils.download({file_name_js(filename)}, data, '{mime}'))",
    )
