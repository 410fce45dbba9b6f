"""The files of a ``.gltf`` character export: the document the user named and, beside it, new files
whose names cannot collide; written so that no kill leaves a document pointing at bytes it was not
written with (``fabrik3d.io.character_export``; docs/character.md).

Every file written beside the output ``OUT.gltf`` is named ``OUT_HASH_NAME``: the output's own stem,
the first 12 hex digits of the SHA-256 of its bytes, and what it holds (``fabrik3d.bin`` for the new
keys, the original name for a copied buffer or image, e.g. ``posed_1f2e3d4c5b6a_model.bin``). A name
therefore says its bytes: such a file already there with those bytes is kept as it is; one with other
bytes is not this export's, and the export is refused (nothing is overwritten).

The order makes the export atomic as a whole: the new side files first (each atomically), then the
document (atomically: the commit), then the side files of this output that the new document no longer
uses are removed (``OUT_HASH_NAME`` whose bytes hash to ``HASH``: only this export's own), and the
temporaries of writers killed mid-write. A kill at any moment leaves the old document with its own
files, or the new one with its own.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import urllib.parse
from pathlib import Path
from typing import Any

from fabrik3d.io import files
from fabrik3d.io.gltf import _json
from fabrik3d.io.gltf_format import DATA_URI
from fabrik3d.io.gltf_import import _beside

# How much of the output's stem a side file's name keeps (a long legal name must stay under 255 bytes).
STEM = 100
# How much of a copied file's own name it keeps (its extension apart).
NAME = 60


def write_gltf(character: Any, target: Path, doc: dict[str, Any], blob: bytes) -> None:
    """Write the ``.gltf`` document ``doc`` of ``character`` to ``target``, with ``blob`` (the new keys)
    as a new buffer (module docstring); ``doc`` is changed (its new buffer, the copies' URIs)."""
    folder = target.parent if str(target.parent) else Path(".")
    stem = target.stem[:STEM]
    side: dict[str, bytes] = {}
    uris = [item.get("uri") for kind in ("buffers", "images") for item in doc.get(kind, []) if isinstance(item, dict)]
    external = any(isinstance(u, str) and not u.startswith("data:") for u in uris)
    base = character.base_dir
    if external and base is not None and os.path.realpath(folder) != os.path.realpath(base):
        for kind in ("buffers", "images"):
            for k, item in enumerate(doc.get(kind, [])):
                uri = item.get("uri") if isinstance(item, dict) else None
                if isinstance(uri, str) and not uri.startswith("data:"):
                    data = files.read_bytes(_beside(base, uri, f"{character.source}: {kind}[{k}].uri"))
                    name = side_name(stem, urllib.parse.unquote(uri).rsplit("/", 1)[-1], data)
                    side[name] = data
                    item["uri"] = urllib.parse.quote(name)
    if blob:
        if external:
            name = side_name(stem, "fabrik3d.bin", blob)
            side[name] = blob
            doc["buffers"].append({"byteLength": len(blob), "uri": urllib.parse.quote(name)})
        else:
            doc["buffers"].append({"byteLength": len(blob), "uri": DATA_URI + base64.b64encode(blob).decode("ascii")})
    for name, data in side.items():
        _write_side(folder / name, data)
    files.write_atomic(target, _json(doc) + b"\n")
    used = {urllib.parse.unquote(u) for kind in ("buffers", "images") for u in _uris(doc, kind)}
    remove_unused(folder, stem, used)


def side_name(stem: str, name: str, data: bytes) -> str:
    """``STEM_HASH_NAME`` (module docstring); a name that is one already keeps only its ``NAME``."""
    own = re.match(r"^.*?_[0-9a-f]{12}_(.+)$", name)
    name = own.group(1) if own else name
    root, ext = os.path.splitext(name)
    return f"{stem}_{hashlib.sha256(data).hexdigest()[:12]}_{root[:NAME]}{ext[:16]}"


def remove_unused(folder: Path, stem: str, used: set[str]) -> None:
    """Remove this output's side files (``STEM_HASH_NAME`` whose bytes hash to ``HASH``) that ``used``
    does not name, and the temporaries of its writers that were killed."""
    pattern = re.compile(re.escape(stem) + r"_([0-9a-f]{12})_.+")
    try:
        names = [e.name for e in os.scandir(folder) if e.is_file(follow_symlinks=False)]
    except OSError:
        return
    for name in names:
        match = pattern.fullmatch(name)
        if match and name not in used and _digest(folder / name) == match.group(1):
            try:
                os.unlink(folder / name)
            except OSError:
                pass
    files.remove_stale(folder / f"{stem}_", prefix=True)


def _write_side(path: Path, data: bytes) -> None:
    """Write a side file, or keep the one there with the same bytes; refuse to replace another."""
    if os.path.lexists(path):
        if path.is_file() and not path.is_symlink() and path.stat().st_size == len(data) and path.read_bytes() == data:
            return
        raise ValueError(
            f"{path}: a file of this name is there already and is not this export's (other bytes); "
            "move it, or write the export to another name or folder"
        )
    files.write_atomic(path, data)


def _digest(path: Path) -> str:
    """The first 12 hex digits of the SHA-256 of the file's bytes ('' if it cannot be read)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    except OSError:
        return ""
    return h.hexdigest()[:12]


def _uris(doc: dict[str, Any], kind: str) -> list[str]:
    return [i["uri"] for i in doc.get(kind, []) if isinstance(i, dict) and isinstance(i.get("uri"), str)]
