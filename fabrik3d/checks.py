"""Input checks at the library's boundary; each raises ``ValueError`` naming the argument.

Coordinates must be finite and at most ``MAX_COORD`` scene units in magnitude, so
that squared distances can never overflow into inf or NaN.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

MAX_COORD = 1e9
_MAX2 = MAX_COORD * MAX_COORD
# A message quotes at most this many characters of an input, and lists at most this many names.
QUOTE_LIMIT = 80
NAMES_LIMIT = 10


def quoted(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` cut to ``limit`` characters (``...`` at the end of a cut one): what a message
    quotes of an input, however long the input (a 1 MB name, a list of 10^5 numbers)."""
    if isinstance(value, (str, bytes)) and len(value) > limit:
        value = value[: limit + 1]  # (the repr of a cut string is cut below)
    try:
        text = repr(value)
    except ValueError:  # an int of more digits than Python converts
        return f"<an integer of {value.bit_length()} bits>" if isinstance(value, int) else "<unprintable>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def names_list(names: Any, limit: int = NAMES_LIMIT, quote: bool = False) -> str:
    """``names`` for a message, comma-separated: at most ``limit`` of them, then ``... and 99,990 more``;
    each name cut as ``quoted`` cuts (``quote``: written as ``quoted`` writes it)."""
    items = list(names)
    shown = [quoted(n) if quote else cut(str(n)) for n in items[:limit]]
    text = ", ".join(shown)
    if len(items) > limit:
        text += f" ... and {len(items) - limit:,} more"
    return text


def cut(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` (a name or a path, unquoted) cut to ``limit`` characters: its start and its end kept
    (a path's file name stays readable)."""
    if len(text) <= limit:
        return text
    head = (limit - 3) // 2
    return text[:head] + "..." + text[len(text) - (limit - 3 - head) :]


def real_array(value: Any) -> np.ndarray:
    """``value`` as a new float64 array, refusing what is not real numbers: complex numbers (a plain
    float conversion would drop their imaginary part), booleans and strings.

    Raises:
        ValueError, TypeError or OverflowError: the callers turn them into a message naming the argument.
    """
    arr = np.asarray(value)
    if arr.dtype.kind in "cbUSV" or (isinstance(value, (list, tuple)) and not _all_real(value)):
        raise ValueError(f"not real numbers (dtype {arr.dtype})")
    return np.array(arr, dtype=float)


_NOT_REAL = (bool, np.bool_, str, bytes, complex, np.complexfloating)


def _all_real(items: list[Any] | tuple[Any, ...]) -> bool:
    """Whether nested lists and tuples hold no booleans, strings or complex numbers (numpy would turn
    a boolean among floats into 0.0 or 1.0 silently)."""
    stack = [items]
    while stack:
        for x in stack.pop():
            if isinstance(x, (list, tuple)):
                stack.append(x)
            elif isinstance(x, _NOT_REAL):
                return False
    return True


def points(value: Any, name: str) -> np.ndarray:
    """An ``(m, 3)`` float array (a copy) of finite, bounded coordinates."""
    try:
        arr = real_array(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond float range
        raise ValueError(f"{name}: expected an (n, 3) array of numbers") from None
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name}: expected shape (n, 3), got {arr.shape}")
    _finite(arr, name)
    return arr


def columns(value: Any, name: str) -> tuple[list[float], list[float], list[float]]:
    """The checked ``(m, 3)`` points of ``points`` as three coordinate lists ``(xs, ys, zs)``.

    A float64 ``(m, 3)`` array whose sum of squares is at most ``MAX_COORD**2``
    (so every coordinate is finite and bounded) is read without a copy; anything
    else goes through ``points``, with its errors.
    """
    if type(value) is np.ndarray and value.dtype.char == "d" and value.ndim == 2 and value.shape[1] == 3:
        if np.vdot(value, value) <= _MAX2:  # NaN and inf compare false
            xs, ys, zs = value.T.tolist()
            return xs, ys, zs
    xs, ys, zs = points(value, name).T.tolist()
    return xs, ys, zs


def plain_point(value: Any) -> tuple[float, float, float] | None:
    """``value`` as three floats when it is plainly a point within ``MAX_COORD``: a float64 ``(3,)``
    array, or a list or tuple of three floats or integers (not booleans); else ``None``."""
    t = type(value)
    if t is np.ndarray:
        if value.dtype.char != "d" or value.shape != (3,):
            return None
        x, y, z = value.tolist()
    elif (t is tuple or t is list) and len(value) == 3:
        x, y, z = value
        if not (type(x) in _NUMBERS and type(y) in _NUMBERS and type(z) in _NUMBERS):
            return None
    else:
        return None
    if -MAX_COORD <= x <= MAX_COORD and -MAX_COORD <= y <= MAX_COORD and -MAX_COORD <= z <= MAX_COORD:
        return float(x), float(y), float(z)
    return None


_NUMBERS = (float, int)


def vec(value: Any, name: str) -> tuple[float, float, float]:
    """The checked ``(3,)`` point of ``point`` as a tuple of three floats.

    Float64 ``(3,)`` arrays and lists or tuples of three numbers within ``MAX_COORD`` are read
    directly; anything else goes through ``point``, with its errors.
    """
    plain = plain_point(value)
    if plain is not None:
        return plain
    x, y, z = point(value, name).tolist()
    return x, y, z


def point(value: Any, name: str) -> np.ndarray:
    """A ``(3,)`` float array (a copy) of finite, bounded coordinates."""
    plain = plain_point(value)
    if plain is not None:
        return np.array(plain)
    try:
        arr = real_array(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond float range
        raise ValueError(f"{name}: expected three numbers, got {quoted(value)}") from None
    if arr.shape != (3,):
        raise ValueError(f"{name}: expected shape (3,), got {arr.shape}")
    _finite(arr, name)
    return arr


def _finite(arr: np.ndarray, name: str) -> None:
    # One reduction catches NaN, inf and too large alike (NaN compares false); the message
    # is worked out only on the error path.
    if arr.size and not np.abs(arr).max() <= MAX_COORD:
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: coordinates must be finite (no NaN or inf)")
        raise ValueError(f"{name}: coordinates must be at most {MAX_COORD:g} in magnitude")


def positive(value: Any, name: str) -> float:
    """A finite float > 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}: expected a number, got {quoted(value)}")
    try:
        v = float(value)
    except OverflowError:  # an int beyond float range
        v = math.inf
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name}: must be finite and > 0, got {quoted(value)}")
    return v


def number(value: Any, name: str, expected: str = "a finite number") -> float:
    """A finite float (not a bool); ``ValueError`` "``name``: expected ``expected``, got ..." otherwise."""
    if not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)):
        try:
            v = float(value)
        except OverflowError:  # an int beyond float range
            v = math.inf
        if math.isfinite(v):
            return v
    raise ValueError(f"{name}: expected {expected}, got {quoted(value)}")


def settings(tolerance: Any, max_iterations: Any) -> tuple[float, int]:
    """Checked ``(tolerance, max_iterations)``: tolerance finite > 0, iterations an int >= 1."""
    if type(tolerance) is float and 0.0 < tolerance < math.inf and type(max_iterations) is int and max_iterations >= 1:
        return tolerance, max_iterations
    tol = positive(tolerance, "tolerance")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)):
        raise ValueError(f"max_iterations: expected an integer, got {quoted(max_iterations)}")
    if max_iterations < 1:
        raise ValueError(f"max_iterations: must be >= 1, got {max_iterations}")
    return tol, int(max_iterations)


# How far from unit length a pose's frame may be (a frame read back from a file or the page).
FRAME_TOLERANCE = 1e-3


def frames(value: Any, n: int, name: str) -> np.ndarray:
    """``(n, 4)`` unit quaternions (x, y, z, w), a pose's world frames (a copy), normalised; each
    within ``FRAME_TOLERANCE`` of unit length."""
    try:
        arr = real_array(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name}: expected an ({n}, 4) array of quaternions (x, y, z, w)") from None
    if arr.shape != (n, 4) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected ({n}, 4) finite quaternions, got shape {arr.shape}")
    with np.errstate(over="ignore"):  # (a huge one: length inf, refused below)
        length = np.sqrt(np.einsum("ij,ij->i", arr, arr))
    bad = np.flatnonzero(~(np.abs(length - 1.0) <= FRAME_TOLERANCE))
    if len(bad):
        raise ValueError(f"{name}[{bad[0]}]: not a unit quaternion (length {length[bad[0]]:.6g})")
    # (frames unit to within rounding are kept as they are: a pose passed back comes back bit for bit)
    return np.where(np.abs(length - 1.0)[:, None] > 1e-12, arr / length[:, None], arr)
