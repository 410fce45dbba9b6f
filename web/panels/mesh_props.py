"""Mesh props in the web UI (issue 52): a ``.glb`` or ``.gltf`` uploaded in the Scene tab's props becomes a
prop of its triangles (``fabrik3d.io.prop_file``).

``add_mesh_prop`` checks the upload as a character's is checked (one file, at most
``fabrik3d_web.document.characters.MAX_CHARACTER_BYTES``, glTF by its name or a GLB's magic bytes, read whole with the
character reader's checks and limits; a ``.gltf`` must carry its buffers inside it, as a browser uploads one
file), keeps the file read in ``Document.mesh_files`` under its name (a file of the same name replaces it; at
most ``MAX_MESH_FILES``), and adds a ``"mesh"`` prop named after the file standing on the floor in front of the
selected figure, its size the file's bounding box: one undo step, the file with it (``Document.mesh_files`` is
part of the document's undo: undone, the prop goes and the files are as they were). On any problem a
``ValueError`` names it and nothing changes. The view (``fabrik3d_web.view.stage_view``) and the glTF downloads
draw the file's triangles; the scene file names the file, which must sit beside it when the scene is opened
elsewhere (docs/stage.md).

``MeshUploads`` is the panel's part (state ``mesh_upload``: the upload field's value, which the page writes);
``section`` declares the field.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from trame.decorators import TrameApp, change
from trame.widgets import html
from trame.widgets import vuetify3 as v3

from fabrik3d.io.prop_file import prop_file_from_bytes
from fabrik3d.model.props import Prop

from ..document.characters import MAX_CHARACTER_BYTES, SUFFIXES, is_character_file, uploaded_file
from ..document.document import Document
from ..document.stage_commands import add_standing
from ..security import failure

MAX_MESH_FILES = 8  # different mesh files kept by one document (each read whole into memory)


def add_mesh_prop(doc: Document, upload: Any) -> str:
    """Add a mesh prop of an uploaded file (the module docstring); returns the prop's name."""
    name, size, content = uploaded_file(upload)
    if not is_character_file(name, content):
        raise ValueError(f"{name}: not a .glb or .gltf file (a mesh prop is a glTF mesh)")
    declared = size if isinstance(size, (int, float)) and not isinstance(size, bool) else 0
    if max(declared, len(content)) > MAX_CHARACTER_BYTES:
        n = int(max(declared, len(content)))
        raise ValueError(f"{name}: file is too large ({n} bytes, limit {MAX_CHARACTER_BYTES})")
    if isinstance(content, str):
        raise ValueError(f"{name}: expected the file's bytes")
    file = _file_name(name, content)
    if file not in doc.mesh_files and len(doc.mesh_files) >= MAX_MESH_FILES:
        raise ValueError(f"{name}: a scene keeps at most {MAX_MESH_FILES} mesh files")
    mesh = prop_file_from_bytes(bytes(content), name)
    try:
        extent = mesh.size
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None
    stem = re.sub(r"\.(glb|gltf)$", "", file, flags=re.IGNORECASE)[:48] or "mesh"
    name = add_standing(doc, stem, "mesh", size=extent, file=file)  # (its undo step: the files as they were)
    doc.mesh_files[file] = mesh
    return name


def missing(doc: Document, prop: Prop) -> bool:
    """Whether ``prop`` is a mesh prop whose file is not uploaded (a scene opened without it): its box is
    drawn and written."""
    return prop.shape == "mesh" and prop.file not in doc.mesh_files


def _file_name(name: str, content: bytes | bytearray | str) -> str:
    """The name a mesh prop's file goes by: the upload's, without folders, in letters, digits, ``-``, ``_``,
    ``.`` and spaces (a file beside the scene file); ``.glb`` added to a GLB named otherwise."""
    base = re.split(r"[\\/]", name)[-1]
    base = re.sub(r"[^A-Za-z0-9 ._-]+", "_", base).strip(" .") or "mesh"
    if not base.lower().endswith(SUFFIXES):
        base += ".glb" if content[:4] == b"glTF" else ".gltf"
    return base[-120:]


@TrameApp()
class MeshUploads:
    """The upload field's action: a mesh prop added, or the problem in the page's banner.

    Args:
        server: the trame server (its state).
        document: the scene document.
        run: runs a document command and refreshes the panel (``FiguresPanel._run``).
        report: shows a message in the page's error banner (``""`` clears it).
    """

    def __init__(self, server: Any, document: Document, run: Callable[..., Any],
                 report: Callable[[str], None]) -> None:  # fmt: skip
        self.server, self.document, self.run, self.report = server, document, run, report
        self.server.state.update({"mesh_upload": None})

    @change("mesh_upload")
    def upload_mesh(self, mesh_upload: Any, **_: Any) -> None:
        """The user chose a mesh file: a prop of it is added and picked, or nothing changes and the banner
        says why."""
        if not mesh_upload:
            return
        try:
            self.run(lambda: self.server.state.update({"prop_picked": add_mesh_prop(self.document, mesh_upload)}))
            self.report("")
        except Exception as exc:  # (the server keeps running whatever a page sends)
            self.report(failure("add_mesh_prop", exc))
        finally:
            self.server.state.mesh_upload = None


def section(**field: Any) -> None:
    """The upload field of a mesh prop (in the props' group; ``field``: the group's fields' style), and a
    note where the picked prop's file is missing."""
    v3.VFileInput(label="Add a mesh prop (.glb, .gltf)", v_model=("mesh_upload", None), id="mesh-upload",
                  accept=".glb,.gltf,model/gltf-binary,model/gltf+json", prepend_icon="",
                  prepend_inner_icon="mdi-cube-outline", **field)  # fmt: skip
    html.Div(
        "{{ prop_picked }}: its mesh file is not uploaded; its box is drawn",
        v_if="(stage_props.find((p) => p.name === prop_picked) || {}).missing",
        id="prop-missing",
        classes="text-caption",
    )
