"""A bake written to a file as it is solved: memory does not grow with the frame count.

``bake_to_file`` checks everything first (``fabrik3d.io.bake.bake_chunks``: the names, the method, the
range, at most ``MAX_BAKE_FRAMES`` frames; the key times), then solves ``CHUNK`` frames at a time and
streams them to the output, which replaces the file named only once it is complete
(``fabrik3d.io.files.atomic_file``: a failure or a kill leaves the old file, if any, and no partial one).

The files are those of ``fabrik3d.io.take.save_take`` (``.json``) and ``fabrik3d.io.gltf.export_animation``
(``.glb``, ``.gltf``) for the same take, byte for byte. A glTF keeps each joint's keys together, so the
local transforms go to an unnamed scratch file beside the output first (the rotations and translations
of every joint at their place, as float32) and are copied into the document once the last frame is known.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from fabrik3d.io import bake, files, take
from fabrik3d.io.gltf import _OFFSET_TOLERANCE, _Blob, _json, _rig, local_transforms
from fabrik3d.io.gltf_format import BIN_CHUNK, DATA_URI, FLOAT, JSON_CHUNK
from fabrik3d.model.keys import Animation
from fabrik3d.model.skeleton import Skeleton

SUFFIXES = (".glb", ".gltf", ".json")
# Bytes copied at a time from the scratch file (a multiple of 3, for base64).
_COPY = 3 << 20


def bake_to_file(
    skeleton: Skeleton,
    animation: Animation,
    path: str | os.PathLike[str],
    *,
    frames: Any = None,
    method: str = "warm",
    tolerance: float = 1e-3,
    max_iterations: int = 100,
    source: str | None = None,
    backend: str = "numpy",
    kind: str | None = None,
) -> range:
    """Bake ``animation`` (``fabrik3d.io.bake.bake``'s arguments) into ``path`` (``.glb``, ``.gltf`` or a
    take ``.json``; ``kind``, one of those suffixes, when ``path``'s own is not: a staged file's name),
    streamed (module docstring); returns the frames baked.

    Raises:
        ValueError: before any frame is solved, for what ``bake`` refuses and key times that glTF's
            float32 or a take cannot hold, prefixed with ``source`` (the scene file) when given; while
            writing, naming ``path``.
    """
    suffix = (Path(path).suffix if kind is None else kind).lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{path}: expected a file name ending in .glb, .gltf or .json (a take)")
    try:
        span, chunks = bake.bake_chunks(
            skeleton,
            animation,
            frames=frames,
            method=method,
            tolerance=tolerance,
            max_iterations=max_iterations,
            backend=backend,
        )
        times = take._times(np.arange(len(span), dtype=float) / animation.fps)
        if suffix != ".json":
            _check_key_times(times)
        if suffix == ".json":
            _write_take(skeleton, times, chunks, path)
        else:
            _write_gltf(skeleton, times, chunks, path, suffix)
    except ValueError as exc:
        if source is None or str(exc).startswith(f"{Path(path)}:"):
            raise
        raise ValueError(f"{source}: {exc}") from None
    return span


def _check_key_times(times: np.ndarray) -> None:
    same = ~(np.diff(times.astype(np.float32)) > 0)
    if same.any():
        k = int(np.argmax(same)) + 1
        raise ValueError(
            f"times[{k}]: {times[k]!r} and times[{k - 1}] = {times[k - 1]!r} are equal once stored as float32, "
            "as glTF stores key times; space the frames further apart (a higher --fps)"
        )


def _checked(skeleton: Skeleton, chunks: Iterator[tuple[np.ndarray, np.ndarray]]) -> Iterator[tuple[int, Any, Any]]:
    """``(first frame index, positions, rotations)`` of each chunk, checked as a ``Take`` checks its frames."""
    k = 0
    for p, r in chunks:
        p, r = take.check_frames(skeleton, p, r, first=k)
        yield k, p, r
        k += len(p)


def _write_take(skeleton: Skeleton, times: np.ndarray, chunks: Any, path: str | os.PathLike[str]) -> None:
    """``take.save_take``'s text (``take_to_json``), one frame per line as each chunk comes."""
    head = {"format": take.FORMAT, "version": take.VERSION, "skeleton": skeleton.to_dict(), "times": times.tolist()}
    with files.atomic_file(path) as fh:
        fh.write((json.dumps(head, allow_nan=False)[:-1] + ',\n "frames": [\n  ').encode())
        for k, ps, rs in _checked(skeleton, chunks):
            lines = [
                json.dumps({"positions": p.tolist(), "rotations": r.tolist()}, allow_nan=False, separators=(",", ":"))
                for p, r in zip(ps, rs)
            ]
            fh.write(((",\n  " if k else "") + ",\n  ".join(lines)).encode())
        fh.write(b"\n ]\n}\n")


def _write_gltf(skeleton: Skeleton, times: np.ndarray, chunks: Any, path: str | os.PathLike[str], suffix: str) -> None:
    """``gltf.export_animation``'s file (``_animation_document``), its keys streamed through a scratch file."""
    m, n = len(times), len(skeleton)
    t0, q0 = local_transforms(skeleton, skeleton.rest_positions, skeleton.rest_frames)
    blob = _Blob()
    doc = _rig(blob, skeleton, t0, q0)
    key_times = blob.add(times.astype(np.float32)[:, None], "SCALAR", min_max=True)
    head = blob.data()
    folder = Path(path).parent if str(Path(path).parent) else Path(".")
    try:
        scratch = tempfile.TemporaryFile(dir=folder)  # (unnamed where the system allows: a kill leaves nothing)
    except OSError as exc:
        raise ValueError(f"{path}: cannot write here ({exc.strerror or exc})") from None
    with scratch:
        fd = scratch.fileno()
        moved = _scratch_keys(skeleton, chunks, fd, t0, m)
        regions: list[tuple[int, int]] = []  # (offset in the scratch file, bytes), in the document's order
        samplers: list[dict[str, Any]] = []
        channels: list[dict[str, Any]] = []
        for j in range(n):
            keys = [("rotation", j * m * 16, m * 16, "VEC4")]
            if moved[j]:
                keys.append(("translation", n * m * 16 + j * m * 12, m * 12, "VEC3"))
            for what, offset, size, kind in keys:
                channels.append({"sampler": len(samplers), "target": {"node": j, "path": what}})
                samplers.append(
                    {"input": key_times, "interpolation": "LINEAR", "output": _reserve(blob, m, size, kind)}
                )
                regions.append((offset, size))
        doc["animations"] = [{"name": "take", "channels": channels, "samplers": samplers}]
        with files.atomic_file(path) as out:
            if suffix == ".glb":
                _write_glb(out, doc, blob.size, head, fd, regions)
            else:
                _write_embedded(out, doc, blob.size, head, fd, regions)


def _scratch_keys(skeleton: Skeleton, chunks: Any, fd: int, t0: np.ndarray, m: int) -> np.ndarray:
    """Write each chunk's local rotations (continuous signs, key to key) and translations as float32 at
    their place in the scratch file ``fd`` (``m`` frames in all); returns which joints' offsets leave their
    rest value."""
    n = len(skeleton)
    moved = np.zeros(n, dtype=bool)
    limit = _OFFSET_TOLERANCE * skeleton.bone_lengths
    before = None
    for k, p, r in _checked(skeleton, chunks):
        t, q = local_transforms(skeleton, p, r)
        for i in range(len(q)):
            prev = before if i == 0 else q[i - 1]
            if prev is not None:
                q[i][np.sum(q[i] * prev, axis=1) < 0] *= -1.0
        before = q[-1].copy()
        moved |= np.abs(t - t0).max(axis=(0, 2)) > limit
        q32, t32 = q.astype("<f4"), t.astype("<f4")
        for j in range(n):
            os.pwrite(fd, np.ascontiguousarray(q32[:, j]).tobytes(), j * m * 16 + k * 16)
            os.pwrite(fd, np.ascontiguousarray(t32[:, j]).tobytes(), n * m * 16 + j * m * 12 + k * 12)
    return moved


def _reserve(blob: _Blob, count: int, size: int, kind: str) -> int:
    """``_Blob.add``'s view and accessor for ``count`` float32 values whose bytes come later."""
    blob.views.append({"buffer": 0, "byteOffset": blob.size, "byteLength": size})
    blob.accessors.append({"bufferView": len(blob.views) - 1, "componentType": FLOAT, "count": count, "type": kind})
    blob.size += size
    return len(blob.accessors) - 1


def _pieces(head: bytes, fd: int, regions: list[tuple[int, int]]) -> Iterator[bytes]:
    yield head
    for offset, size in regions:
        done = 0
        while done < size:
            piece = os.pread(fd, min(_COPY, size - done), offset + done)
            if not piece:
                raise ValueError("bake: the scratch file ended early")
            yield piece
            done += len(piece)


def _write_glb(out: BinaryIO, doc: dict[str, Any], size: int, head: bytes, fd: int, regions: list) -> None:
    text = _json({**doc, "buffers": [{"byteLength": size}]})
    text += b" " * (-len(text) % 4)
    out.write(b"glTF" + np.array([2, 12 + 8 + len(text) + 8 + size], "<u4").tobytes())
    out.write(np.array([len(text), JSON_CHUNK], "<u4").tobytes() + text)
    out.write(np.array([size, BIN_CHUNK], "<u4").tobytes())
    for piece in _pieces(head, fd, regions):
        out.write(piece)


def _write_embedded(out: BinaryIO, doc: dict[str, Any], size: int, head: bytes, fd: int, regions: list) -> None:
    mark = "@FABRIK3D_DATA@"
    before, after = _json({**doc, "buffers": [{"byteLength": size, "uri": DATA_URI + mark}]}).split(mark.encode())
    out.write(before)
    carry = b""
    for piece in _pieces(head, fd, regions):
        data = carry + piece
        cut = len(data) - len(data) % 3
        out.write(base64.b64encode(data[:cut]))
        carry = data[cut:]
    out.write(base64.b64encode(carry) + after + b"\n")
