"""Where a hand shape's thumb goes, and the small least-squares solve that takes it there.

In a fist the thumb lies across the outside of the curled index and middle fingers, over their middle
phalanges: ``contact_point`` is the midpoint of those two phalanges (each the bone from the ``_02`` to
the ``_03`` knuckle) moved ``CONTACT_OFFSET`` away from the palm, square to them (a finger's half
thickness and the thumb's, so the thumb's tip rests on the fingers and not in them). In a pinch the
thumb's tip meets the index's.

``least_squares`` is a damped Gauss-Newton (Levenberg-Marquardt) with finite differences over a few
joint angles in degrees, each kept in a box (the thumb's limits); ``clearance`` is the residual that
keeps the thumb's bones at least ``CLEARANCE`` from another finger's. Units: metres (the hands of the
humanoid preset and of characters are in metres), degrees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

# The thumb's tip rests this far out from the middle phalanges' centre line in a fist (a finger's
# half thickness, 0.009 m, and the thumb's, 0.009 m).
CONTACT_OFFSET = 0.018
# The least distance (m) between the centre lines of the thumb's two phalanges and another finger's
# bones (their half thicknesses, less a little flesh that gives).
CLEARANCE = 0.014
# The weight of a clearance's shortfall against the distance to the contact.
CLEARANCE_WEIGHT = 3.0


def contact_point(
    index: tuple[np.ndarray, np.ndarray], middle: tuple[np.ndarray, np.ndarray], palm: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(contact, midpoint, outward)`` of the thumb in a fist, ``(3,)`` each: ``midpoint`` halfway
    between the midpoints of the index's and the middle finger's middle phalanges (``index`` and
    ``middle``: the ``_02`` and ``_03`` knuckles' positions, m); ``outward`` the unit vector away from
    the palm (``-palm``, ``palm`` the unit normal toward the palm side) square to the two phalanges;
    ``contact`` = ``midpoint + CONTACT_OFFSET * outward``."""
    ends = [np.asarray(x, dtype=float) for x in (*index, *middle)]
    midpoint = 0.25 * (ends[0] + ends[1] + ends[2] + ends[3])
    along = (ends[1] - ends[0]) + (ends[3] - ends[2])
    n = float(np.linalg.norm(along))
    outward = np.asarray(palm, dtype=float)
    if n > 1e-12:
        along = along / n
        outward = outward - along * float(outward @ along)
    outward = outward / float(np.linalg.norm(outward))
    return midpoint + CONTACT_OFFSET * outward, midpoint, outward


def segment_distance(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> float:
    """The least distance between the segments ``a0``-``a1`` and ``b0``-``b1`` (``(3,)`` points)."""
    u, v, w = a1 - a0, b1 - b0, a0 - b0
    a, b, c, d, e = float(u @ u), float(u @ v), float(v @ v), float(u @ w), float(v @ w)
    den = a * c - b * b
    s = 0.0 if den < 1e-15 else float(np.clip((b * e - c * d) / den, 0.0, 1.0))
    t = float(np.clip((b * s + e) / c, 0.0, 1.0)) if c > 1e-15 else 0.0
    s = float(np.clip((b * t - d) / a, 0.0, 1.0)) if a > 1e-15 else 0.0
    return float(np.linalg.norm(a0 + s * u - b0 - t * v))


def clearance(chain: Sequence[np.ndarray], others: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """``CLEARANCE_WEIGHT`` times how far (m) each segment of ``chain`` (consecutive points) comes
    nearer than ``CLEARANCE`` to each of the segments ``others``; 0 where it stays clear."""
    out = [
        max(0.0, CLEARANCE - segment_distance(chain[k], chain[k + 1], b0, b1))
        for k in range(len(chain) - 1)
        for b0, b1 in others
    ]
    return CLEARANCE_WEIGHT * np.array(out, dtype=float)


def least_squares(
    residual: Callable[[np.ndarray], np.ndarray],
    x0: Sequence[float],
    low: Sequence[float],
    high: Sequence[float],
    iterations: int = 100,
    step: float = 0.05,
) -> np.ndarray:
    """The ``x`` (degrees) within ``low``..``high`` that makes ``|residual(x)|`` least, from ``x0``:
    damped Gauss-Newton steps with a central-difference Jacobian (``step`` degrees), clipped to the box;
    stops after ``iterations`` or once no step helps."""
    lo, hi = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    x = np.clip(np.asarray(x0, dtype=float), lo, hi)
    r = residual(x)
    cost, damping = float(r @ r), 1e-3
    for _ in range(iterations):
        jac = np.empty((r.size, x.size))
        for k in range(x.size):
            y, z = x.copy(), x.copy()
            y[k], z[k] = min(x[k] + step, hi[k]), max(x[k] - step, lo[k])
            jac[:, k] = (residual(y) - residual(z)) / (y[k] - z[k])
        grad, normal = jac.T @ r, jac.T @ jac
        improved = False
        while damping < 1e6:
            dx = np.linalg.solve(normal + damping * (np.diag(np.diag(normal)) + 1e-9 * np.eye(x.size)), -grad)
            y = np.clip(x + dx, lo, hi)
            ry = residual(y)
            if float(ry @ ry) < cost - 1e-14:
                x, r, cost, improved = y, ry, float(ry @ ry), True
                damping = max(damping / 3.0, 1e-7)
                break
            damping *= 4.0
        if not improved or cost < 1e-10:
            break
    return x
