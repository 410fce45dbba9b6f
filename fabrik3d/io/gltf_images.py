"""Checking a glTF image before any decoder sees it (standard library only): a damaged or truncated
PNG must not reach a C decoder that cannot recover (VTK's PNG reader ends the process on a libpng
error), and a small file must not decode into gigabytes.

* ``image_type(data)``: ``(MIME type, pixels)`` of a PNG or JPEG, or a ``ValueError`` saying what is
  wrong. A PNG is checked whole: its signature, every chunk's length and CRC, the header (size, bit
  depth, colour type), the palette, the order of the critical chunks, and its image data inflated
  piece by piece (never more than ``PIECE`` bytes at once) to exactly the size the header gives, each
  row with a known filter. A JPEG's frame header gives its size (a damaged JPEG reads as a blank
  image in VTK: it recovers).
* ``decodable(data)``: the bytes to give a decoder: for a PNG, a new stream of its checked critical
  chunks (header, palette, transparency, image data, end) without the ancillary ones; a JPEG as it is.

Size is checked against ``MAX_TEXTURE_PIXELS`` from the header, before anything is inflated.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

# An image may hold at most this many pixels (4096 x 4096), and a character's textures this many in all.
MAX_TEXTURE_PIXELS = 4096 * 4096
MAX_TEXTURE_PIXELS_IN_ALL = 2 * MAX_TEXTURE_PIXELS
# The most bytes inflated at once while a PNG's image data is checked.
PIECE = 1 << 20

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# colour type -> (channels, allowed bit depths), PNG specification 11.2.2
_COLOR = {0: (1, (1, 2, 4, 8, 16)), 2: (3, (8, 16)), 3: (1, (1, 2, 4, 8)), 4: (2, (8, 16)), 6: (4, (8, 16))}
# Adam7 passes: (x start, y start, x step, y step)
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def image_type(data: bytes) -> tuple[str, int]:
    """``("image/png" or "image/jpeg", pixels)``; ``ValueError`` naming what is wrong (module docstring)."""
    if data[:8] == PNG_SIGNATURE:
        _, _, width, height = _png(data)
        return "image/png", width * height
    if data[:2] == b"\xff\xd8":
        return "image/jpeg", _jpeg_pixels(data)
    raise ValueError("neither a PNG nor a JPEG image")


def decodable(data: bytes) -> tuple[bytes, str]:
    """``(bytes for a decoder, MIME type)`` of a checked PNG or JPEG (module docstring); ``ValueError``
    as ``image_type``."""
    if data[:8] == PNG_SIGNATURE:
        chunks, _, _, _ = _png(data)
        return PNG_SIGNATURE + b"".join(_chunk(kind, body) for kind, body in [*chunks, (b"IEND", b"")]), "image/png"
    image_type(data)
    return data, "image/jpeg"


def _size(width: int, height: int) -> None:
    if width * height > MAX_TEXTURE_PIXELS:
        raise ValueError(f"{width} x {height} pixels; an image may have at most {MAX_TEXTURE_PIXELS} (4096 x 4096)")


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def _png(data: bytes) -> tuple[list[tuple[bytes, bytes]], bytes, int, int]:
    """``(critical chunks to keep (kind, body), header, width, height)`` of a PNG checked whole."""
    offset, chunks, seen, idat = 8, [], [], []
    while True:
        if offset + 12 > len(data):
            raise ValueError("a damaged or truncated PNG (it ends before its IEND chunk)")
        length, kind = struct.unpack_from(">I4s", data, offset)
        body = data[offset + 8 : offset + 8 + length]
        if length > 0x7FFFFFFF or offset + 12 + length > len(data):
            raise ValueError(f"a damaged or truncated PNG (the chunk at byte {offset} runs past the end)")
        (crc,) = struct.unpack_from(">I", data, offset + 8 + length)
        if not kind.isalpha() or zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise ValueError(f"a damaged PNG (the chunk at byte {offset} fails its CRC)")
        offset += 12 + length
        if kind == b"IEND":
            break
        if not seen and kind != b"IHDR":
            raise ValueError("a damaged PNG (it does not start with its IHDR chunk)")
        if kind == b"IDAT" and seen and seen[-1] != b"IDAT" and b"IDAT" in seen:
            raise ValueError("a damaged PNG (its IDAT chunks are not consecutive)")
        if kind[0:1].isupper() and kind not in (b"IHDR", b"PLTE", b"IDAT"):
            raise ValueError(f"a PNG with an unknown critical chunk {kind.decode()!r}")
        if kind in (b"IHDR", b"PLTE", b"tRNS") and kind in seen:
            raise ValueError(f"a damaged PNG (two {kind.decode()} chunks)")
        seen.append(kind)
        if kind == b"IDAT":
            idat.append(body)
        if kind in (b"IHDR", b"PLTE", b"tRNS", b"IDAT"):
            chunks.append((kind, body))
    header = chunks[0][1] if chunks else b""
    if len(header) != 13:
        raise ValueError("a damaged PNG (its IHDR chunk is not 13 bytes)")
    width, height, depth, color, method, filtering, interlace = struct.unpack(">IIBBBBB", header)
    if not (0 < width < 2**31 and 0 < height < 2**31) or color not in _COLOR or depth not in _COLOR[color][1]:
        raise ValueError(f"a damaged PNG (header: {width} x {height}, bit depth {depth}, colour type {color})")
    if method or filtering or interlace > 1:
        raise ValueError("a damaged PNG (unknown compression, filter or interlace method)")
    _size(width, height)
    _palette(dict(chunks), color, depth, seen)
    if not idat:
        raise ValueError("a damaged PNG (no image data)")
    _inflate(idat, _rows(width, height, _COLOR[color][0] * depth, interlace))
    return chunks, header, width, height


def _palette(chunks: dict[bytes, bytes], color: int, depth: int, order: list[bytes]) -> None:
    """Check PLTE and tRNS against the colour type (PNG specification 11.2.3, 11.3.2.1)."""

    def late(kind: bytes) -> bool:  # (after the first image data chunk)
        return b"IDAT" in order and order.index(kind) > order.index(b"IDAT")

    palette = chunks.get(b"PLTE")
    entries = len(palette) // 3 if palette is not None else 0
    if palette is not None:
        most = 2**depth if color == 3 else 256
        if color in (0, 4) or not palette or len(palette) % 3 or entries > most or late(b"PLTE"):
            raise ValueError("a damaged PNG (its palette does not fit its colour type)")
    elif color == 3:
        raise ValueError("a damaged PNG (a palette image without a palette)")
    alpha = chunks.get(b"tRNS")
    if alpha is not None:
        fits = {0: len(alpha) == 2, 2: len(alpha) == 6, 3: len(alpha) <= entries}
        if not fits.get(color, False) or late(b"tRNS"):
            raise ValueError("a damaged PNG (its transparency chunk does not fit its colour type)")


def _rows(width: int, height: int, bits: int, interlace: int) -> list[tuple[int, int]]:
    """``(rows, bytes per row with its filter byte)`` of each pass (one without interlacing)."""
    passes = _ADAM7 if interlace else ((0, 0, 1, 1),)
    out = []
    for x0, y0, dx, dy in passes:
        w, h = (width - x0 + dx - 1) // dx, (height - y0 + dy - 1) // dy
        if w > 0 and h > 0:
            out.append((h, 1 + (w * bits + 7) // 8))
    return out


def _inflate(idat: list[bytes], rows: list[tuple[int, int]]) -> None:
    """Inflate the image data piece by piece: exactly the rows' bytes, each row's filter byte 0 to 4."""
    expected = sum(h * n for h, n in rows)
    starts = np.cumsum([0] + [h * n for h, n in rows])
    inflater, done, pending = zlib.decompressobj(), 0, b"".join(idat)
    try:
        while pending or not inflater.eof:
            piece = inflater.decompress(pending, PIECE)
            pending = inflater.unconsumed_tail
            if not piece and not pending:
                break
            if done + len(piece) > expected:
                raise ValueError("a damaged PNG (more image data than its size)")
            _filters(np.frombuffer(piece, np.uint8), done, rows, starts)
            done += len(piece)
    except zlib.error:
        raise ValueError("a damaged PNG (its image data does not inflate)") from None
    if done != expected or not inflater.eof or inflater.unused_data:
        raise ValueError("a damaged or truncated PNG (its image data is not the size its header gives)")


def _filters(piece: np.ndarray, at: int, rows: list[tuple[int, int]], starts: np.ndarray) -> None:
    """Each filter byte (the first of a row) in ``piece`` (bytes ``at`` on) is 0 to 4."""
    end = at + len(piece)
    for (h, n), start in zip(rows, starts):
        stop = start + h * n
        if stop <= at or start >= end:
            continue
        first = start + max(0, -(-(at - start) // n)) * n
        marks = piece[np.arange(first, min(stop, end), n) - at]
        if np.any(marks > 4):
            raise ValueError("a damaged PNG (a row has an unknown filter)")


def _jpeg_pixels(data: bytes) -> int:
    """The pixels a JPEG's frame header gives, checked against the limit; ``ValueError`` without one."""
    offset = 2
    while offset + 4 <= len(data):
        if data[offset] != 0xFF:
            break
        marker = data[offset + 1]
        if marker == 0xFF:
            offset += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):
            offset += 2
            continue
        (length,) = struct.unpack_from(">H", data, offset + 2)
        if length < 2:
            break
        if marker in _SOF and length >= 8 and offset + 9 <= len(data):
            height, width = struct.unpack_from(">HH", data, offset + 5)
            if not width or not height:
                raise ValueError("a JPEG without its size in its frame header")
            _size(width, height)
            return width * height
        if marker == 0xDA:
            break
        offset += 2 + length
    raise ValueError("a damaged or truncated JPEG (no frame header)")
