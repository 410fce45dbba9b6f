"""Linear blend skinning on numpy, vectorised (glTF 2.0 section 3.7.3.3).

A skinned vertex is ``v' = sum_k w_k · M[j_k] · v`` with ``M[j] = world_j · inverse_bind_j`` (the joint
matrix of the glTF specification): ``(b, 4, 4)`` matrices, one per joint of the skin, scene units.

``Skinner`` is built once per mesh (it keeps the influences in the layout the frame loop wants) and
skins a frame with ``positions(matrices)`` / ``normals(matrices)``. ``pose_deltas(skeleton, positions,
rotations)`` gives each joint's rigid motion from its rest pose to a pose (the matrices of a mesh bound
to the joints in the rest pose: the mannequin's, a character's bones'). Two ways of blending, the same
result: with few joints, a dense ``(v, b)`` weight matrix times the ``(b, 12)`` matrices (one BLAS
product); otherwise (most rigs), per influence slot, the matrices gathered by joint index and weighted,
in buffers kept by the skinner. Both blend the ``(3, 4)`` matrices first and then transform each vertex
once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fabrik3d import rotations as rot

# The dense weight matrix is used up to this many joints per influence slot (a small rig: its product
# costs about what the gathers would) and this many entries (v · b); BLAS on a busy machine is slower.
DENSE_MAX_JOINTS = 4
DENSE_MAX_ENTRIES = 1 << 24


class Skinner:
    """The influences of one mesh, ready for skinning.

    Args:
        positions: ``(v, 3)`` bind-pose vertex positions, scene units.
        joints: ``(v, k)`` joint indices into the skin (``k`` up to 8 influences).
        weights: ``(v, k)`` weights, each row summing to 1 (checked by the loader).
        count: ``b``, the number of joints of the skin.
        normals: optional ``(v, 3)`` bind-pose normals.
    """

    def __init__(
        self,
        positions: np.ndarray,
        joints: np.ndarray,
        weights: np.ndarray,
        count: int,
        normals: np.ndarray | None = None,
    ) -> None:
        v = len(weights)
        self.count = int(count)
        self._p = np.ascontiguousarray(np.asarray(positions, np.float32).T)  # (3, v)
        self._n = None if normals is None else np.ascontiguousarray(np.asarray(normals, np.float32).T)
        j = np.asarray(joints, np.intp)
        w = np.asarray(weights, np.float32)
        if j.shape != w.shape or j.shape[0] != self._p.shape[1] or (j.size and not 0 <= j.min() <= j.max() < count):
            raise ValueError(f"joints, weights: expected ({self._p.shape[1]}, k) arrays of indices below {count}")
        used = w.any(axis=0)  # slots with a weight somewhere
        j, w = j[:, used], w[:, used]
        small = self.count <= DENSE_MAX_JOINTS * j.shape[1] and v * self.count <= DENSE_MAX_ENTRIES
        self.dense = small or j.shape[1] == 0
        if self.dense:
            self._w = np.zeros((v, self.count), np.float32)
            np.add.at(self._w, (np.arange(v)[:, None], j), w)
        else:
            self._j = np.ascontiguousarray(j.T)  # (k, v)
            self._wk = [np.ascontiguousarray(w[:, s : s + 1]) for s in range(w.shape[1])]  # (v, 1) each
            self._acc, self._buf = np.empty((v, 12), np.float32), np.empty((v, 12), np.float32)
        self._out, self._tmp = np.empty((3, v), np.float32), np.empty(v, np.float32)

    def _blend(self, matrices: np.ndarray) -> np.ndarray:
        """The blended ``(12, v)`` matrix rows (row-major ``(3, 4)`` per vertex)."""
        m = np.asarray(matrices, np.float32)
        if m.shape != (self.count, 4, 4):
            raise ValueError(f"matrices: expected shape ({self.count}, 4, 4), got {m.shape}")
        m12 = np.ascontiguousarray(m[:, :3, :].reshape(self.count, 12))
        if self.dense:
            return (self._w @ m12).T
        acc, buf = self._acc, self._buf  # (v, 12): row gathers are the fast ones (indices checked: clip)
        np.take(m12, self._j[0], axis=0, out=acc, mode="clip")
        np.multiply(acc, self._wk[0], out=acc)
        for s in range(1, len(self._j)):
            np.take(m12, self._j[s], axis=0, out=buf, mode="clip")
            np.multiply(buf, self._wk[s], out=buf)
            np.add(acc, buf, out=acc)
        return np.ascontiguousarray(acc.T)

    def positions(self, matrices: np.ndarray) -> np.ndarray:
        """The skinned ``(v, 3)`` positions (float32) for the joint matrices ``(b, 4, 4)``."""
        return self.skin(matrices)[0]

    def skin(self, matrices: np.ndarray, normals: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        """``(positions (v, 3), normals (v, 3) or None)`` skinned by ``matrices`` ``(b, 4, 4)`` (new arrays;
        a skinner is not for several threads at once); normals (when asked and given) are turned by the
        blended matrix and made unit again."""
        a = self._blend(matrices)
        out = self._transform(a, self._p, True)
        if not normals or self._n is None:
            return out, None
        nout = self._transform(a, self._n, False)
        length = np.linalg.norm(nout, axis=1, keepdims=True)
        np.divide(nout, length, out=nout, where=length > 1e-12)
        return out, nout

    def _transform(self, a: np.ndarray, x: np.ndarray, translate: bool) -> np.ndarray:
        """``(v, 3)``: each ``(3,)`` column of ``x`` ``(3, v)`` by its blended matrix ``a`` ``(12, v)``."""
        out, tmp = self._out, self._tmp
        for r in range(3):
            o = out[r]
            np.multiply(a[4 * r], x[0], out=o)
            for c in (1, 2):
                np.multiply(a[4 * r + c], x[c], out=tmp)
                np.add(o, tmp, out=o)
            if translate:
                np.add(o, a[4 * r + 3], out=o)
        return out.T.copy()


def skin_naive(positions: np.ndarray, joints: np.ndarray, weights: np.ndarray, matrices: np.ndarray) -> np.ndarray:
    """The textbook numpy form (each influence's matrix gathered as ``(v, k, 4, 4)``, then summed): the
    baseline of ``benchmarks/bench_skinning.py`` and the reference of the tests. Returns ``(v, 3)``."""
    p = np.concatenate([np.asarray(positions, float), np.ones((len(positions), 1))], axis=1)
    m = np.asarray(matrices, float)[np.asarray(joints, np.intp)]  # (v, k, 4, 4)
    blended = np.einsum("vk,vkij->vij", np.asarray(weights, float), m)
    return np.einsum("vij,vj->vi", blended, p)[:, :3]


def pose_deltas(skeleton: Any, positions: Any, rotations: Any) -> np.ndarray:
    """``(n, 4, 4)`` rigid motions ``D_j`` of the joints of ``skeleton`` from its rest pose to the pose
    ``positions`` ``(n, 3)`` (scene units), world frames ``rotations`` ``(n, 4)`` (x, y, z, w): ``D_j``
    turns by ``R_j · R0_j⁻¹`` about the rest joint and moves it onto ``positions[j]``."""
    q = np.asarray(rotations, dtype=float)
    turn = rot.quat_to_matrix(q) @ rot.quat_to_matrix(skeleton.rest_frames).transpose(0, 2, 1)
    d = np.tile(np.eye(4), (len(q), 1, 1))
    d[:, :3, :3] = turn
    d[:, :3, 3] = np.asarray(positions, dtype=float) - np.einsum("nij,nj->ni", turn, skeleton.rest_positions)
    return d
