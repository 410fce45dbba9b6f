"""Reading glTF 2.0 accessors and buffer views (standard library + numpy), for the character loader
(``fabrik3d.io.character``) and the prop mesh reader (``fabrik3d.io.prop_file``).

``Buffers`` holds a document's buffers (the GLB chunk, base64 data URIs, files beside a ``.gltf``:
``fabrik3d.io.gltf_import``'s rules), each read once. ``read_accessor`` gives an accessor's values as an
``(count, components)`` array: any component type, ``normalized`` integers as floats in [0, 1] or
[-1, 1], interleaved buffer views (``byteStride``), sparse accessors and accessors without a buffer view
(zeros). Errors are ``ValueError``s naming the place, e.g. ``accessors[7]: runs past the end of
bufferViews[2]``.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d.io.gltf_import import _beside, _buffer, _index, _list

# componentType -> numpy dtype (little endian), glTF 2.0 section 3.6.2.2
COMPONENTS: dict[int, str] = {5120: "<i1", 5121: "<u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
# Accessors beyond this many elements, or components (elements times their width), are refused before
# anything is allocated (a damaged count must not exhaust memory); a reader may ask for fewer (``limit``).
MAX_COUNT = 1 << 23
MAX_COMPONENTS = 1 << 24
_KINDS = {"f": "floats", "u": "unsigned integers", "i": "integers"}


class Buffers:
    """The buffers of a document, read on first use: ``Buffers(doc, bin_chunk, base_dir)[k]`` -> bytes."""

    def __init__(self, doc: dict[str, Any], bin_chunk: bytes | None, base_dir: str | os.PathLike[str] | None) -> None:
        self.doc, self.bin_chunk, self.base_dir = doc, bin_chunk, base_dir
        self._cache: dict[int, bytes] = {}

    def __getitem__(self, index: int) -> bytes:
        if index not in self._cache:
            self._cache[index] = _buffer(self.doc, index, self.bin_chunk, self.base_dir)
        return self._cache[index]

    def view(self, index: Any, where: str) -> tuple[bytes, int, int, int | None]:
        """``(buffer bytes, byte offset, byte length, byte stride or None)`` of ``bufferViews[index]``."""
        views = _list(self.doc, "bufferViews")
        k = _index(index, len(views), where)
        view = views[k]
        buffer = self[_index(view.get("buffer"), len(_list(self.doc, "buffers")), f"bufferViews[{k}].buffer")]
        start, size = view.get("byteOffset", 0), view.get("byteLength")
        if not _count(start) or not _count(size) or start + size > len(buffer):
            raise ValueError(f"bufferViews[{k}]: runs past the end of its buffer ({start} + {size} > {len(buffer)})")
        stride = view.get("byteStride")
        if stride is not None and not (_count(stride) and 4 <= stride <= 252):
            raise ValueError(f"bufferViews[{k}].byteStride: expected 4 to 252 bytes, got {checks.quoted(stride)}")
        return buffer, start, size, stride

    def view_bytes(self, index: Any, where: str) -> bytes:
        """The bytes of ``bufferViews[index]`` (an image, say)."""
        buffer, start, size, _ = self.view(index, where)
        return bytes(buffer[start : start + size])

    def uri_bytes(self, uri: Any, where: str) -> bytes:
        """The bytes a ``uri`` names: a base64 data URI or a file beside the ``.gltf`` (as buffers are read)."""
        from fabrik3d.io import files

        if not isinstance(uri, str):
            raise ValueError(f"{where}: expected a string")
        if uri.startswith("data:"):
            return _buffer({"buffers": [{"uri": uri}]}, 0, None, None)
        if self.base_dir is None:
            raise ValueError(f"{where}: the external file {uri!r} is not part of this content")
        return files.read_bytes(_beside(self.base_dir, uri, where))


def read_accessor(doc: dict[str, Any], buffers: Buffers, index: Any, where: str, limit: int = MAX_COUNT) -> np.ndarray:
    """The values of ``accessors[index]`` as a ``(count, components)`` array.

    Floats come as float64; integers keep their type unless ``normalized`` (then float64 in [0, 1]
    or [-1, 1]). ``where`` names the referring place in messages (``meshes[0].primitives[0].attributes
    .POSITION``); ``limit`` is the most elements the place may hold.

    The declared size is checked against ``limit`` and the buffer view's byte length before anything
    is allocated.

    Raises:
        ValueError: naming the accessor, for an unknown type, more elements than ``limit``, data past
            the end of a view or buffer, sparse indices out of range, or non-finite floats.
    """
    accessors = _list(doc, "accessors")
    k = _index(index, len(accessors), where)
    at = f"accessors[{k}]"
    acc = accessors[k]
    if not isinstance(acc, dict):
        raise ValueError(f"{at}: expected an object")
    kind, ctype, count = acc.get("type"), acc.get("componentType"), acc.get("count")
    if kind not in WIDTH or ctype not in COMPONENTS:
        raise ValueError(f"{at}: unsupported type {checks.quoted(kind)} / componentType {checks.quoted(ctype)}")
    if not _count(count) or count < 1:
        raise ValueError(f"{at}.count: expected a whole number of at least 1, got {checks.quoted(count)}")
    dtype = np.dtype(COMPONENTS[ctype])
    width = WIDTH[kind]
    most = min(limit, MAX_COUNT, MAX_COMPONENTS // width)
    if count > most:
        raise ValueError(f"{at}: declares {count} {kind} elements; {where} may hold at most {most}")
    if kind in ("MAT2", "MAT3") and dtype.itemsize < 4:
        raise ValueError(f"{at}: {kind} of 1- or 2-byte components (column padding) is not supported")
    if acc.get("bufferView") is None:
        out = np.zeros((count, width), dtype)
    else:
        buffer, start, size, stride = buffers.view(acc["bufferView"], f"{at}.bufferView")
        offset, element = acc.get("byteOffset", 0), width * dtype.itemsize
        need = offset + (stride or element) * (count - 1) + element if _count(offset) else 0
        if need > size:
            raise ValueError(
                f"{at}: runs past the end of its buffer view: declares {count} {kind} {_KINDS[dtype.kind]} "
                f"({_size(need)}) but the view holds {size} bytes"
            )
        out = _strided(buffer, start, size, stride, acc.get("byteOffset", 0), count, width, dtype, at)
    sparse = acc.get("sparse")
    if sparse is not None:
        out = _apply_sparse(buffers, sparse, out, dtype, width, f"{at}.sparse")
    if acc.get("normalized"):
        info = np.iinfo(dtype) if dtype.kind in "iu" else None
        if info is None:
            raise ValueError(f"{at}.normalized: only integer accessors can be normalized")
        out = np.maximum(out.astype(float) / info.max, -1.0)
    elif dtype.kind == "f":
        out = out.astype(float)
        if not np.all(np.isfinite(out)):
            bad = int(np.argmax(~np.all(np.isfinite(out), axis=1)))
            raise ValueError(f"{at}: element {bad} is not finite")
    return out


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _strided(
    buffer: bytes,
    start: int,
    size: int,
    stride: int | None,
    offset: Any,
    count: int,
    width: int,
    dtype: np.dtype,
    at: str,
) -> np.ndarray:
    """``count`` elements of ``width`` components from a buffer view (copied)."""
    element = width * dtype.itemsize
    step = stride or element
    if not _count(offset) or offset % dtype.itemsize or step < element:
        raise ValueError(
            f"{at}: byteOffset {checks.quoted(offset)} or byteStride {step} does not fit {element}-byte elements"
        )
    if offset + step * (count - 1) + element > size:
        raise ValueError(f"{at}: runs past the end of its buffer view ({count} elements of {element} bytes)")
    view = np.ndarray((count, width), dtype=dtype, buffer=buffer, offset=start + offset, strides=(step, dtype.itemsize))
    return np.array(view)


def _size(n: int) -> str:
    """A byte count for messages: ``2400 bytes``, ``120 MB``."""
    return f"{n} bytes" if n < 10**6 else f"{n / 10**6:.0f} MB"


def _apply_sparse(buffers: Buffers, sparse: Any, base: np.ndarray, dtype: np.dtype, width: int, at: str) -> np.ndarray:
    """``base`` with the sparse substitution applied (glTF 2.0 section 3.6.2.3)."""
    if (
        not isinstance(sparse, dict)
        or not isinstance(sparse.get("indices"), dict)
        or not isinstance(sparse.get("values"), dict)
    ):
        raise ValueError(f"{at}: expected count, indices and values")
    n = sparse.get("count")
    if not _count(n) or not 1 <= n <= len(base):
        raise ValueError(f"{at}.count: expected 1 to {len(base)}, got {checks.quoted(n)}")
    idx_type = sparse["indices"].get("componentType")
    if idx_type not in (5121, 5123, 5125):
        raise ValueError(
            f"{at}.indices.componentType: expected an unsigned integer type, got {checks.quoted(idx_type)}"
        )
    ind = sparse["indices"]
    buffer, start, size, _ = buffers.view(ind.get("bufferView"), f"{at}.indices.bufferView")
    idx_dtype = np.dtype(COMPONENTS[idx_type])
    indices = _strided(buffer, start, size, None, ind.get("byteOffset", 0), n, 1, idx_dtype, f"{at}.indices")[:, 0]
    if np.any(indices >= len(base)) or np.any(np.diff(indices.astype(np.int64)) <= 0):
        raise ValueError(f"{at}.indices: expected strictly increasing indices below {len(base)}")
    val = sparse["values"]
    buffer, start, size, _ = buffers.view(val.get("bufferView"), f"{at}.values.bufferView")
    values = _strided(buffer, start, size, None, val.get("byteOffset", 0), n, width, dtype, f"{at}.values")
    out = base.copy()
    out[indices.astype(np.intp)] = values
    return out
