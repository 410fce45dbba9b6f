"""The panel's download buttons: a file the server makes, saved by the browser under the scene's name."""

from __future__ import annotations

from typing import Any

from trame.widgets import vuetify3 as v3


def download_button(
    element_id: str, text: str, filename: str, callback: Any, mime: str, disabled: str = "false", args: str = ""
) -> None:
    """A button that asks the server for a file and saves it (trame's ``utils.download``) as
    ``<file_stem>-<filename>``: named after the scene or character (``hero-pose.glb``). ``args``: a JS
    expression of the trigger's one argument (none if empty)."""
    name = callback.__name__
    call = f"trigger('{name}', [{args}])" if args else f"trigger('{name}')"
    filename = f"' + (file_stem || 'fabrik3d') + '-{filename}"
    v3.VBtn(
        text,
        id=element_id,
        prepend_icon="mdi-download",
        variant="tonal",
        size="small",
        disabled=(disabled,),
        # A failed export returns null (and sets error_message): then nothing is saved.
        click=f"{call}.then((data) => data && utils.download('{filename}', data, '{mime}'))",
    )
