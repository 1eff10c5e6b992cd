"""One float64 distance matrix per set, and the kernels ``Z_t = exp(−t·D)`` read from it.

``magnitude_large`` solves ``Z_t w = 1`` at ~100 scales of one set. Forming every product
from the embeddings costs one GEMM over all pairs (~2.5 s in float64 at n = 10,000,
d = 768); with ``D`` held once (8 n² bytes, the only n × n float64 matrix), a float64
product is an ``exp`` and a matrix–vector product per row block (~0.2 s), and the float32
``Z_t`` the iterations use is refilled in place at each scale (~0.2 s). Host (numpy) only.
"""

from __future__ import annotations

import numpy as np

from ..core import counts_as_pair_work
from ._blockwise import TILE, TILE_GROUPS, in_groups
from ._distances import distance_matrix

#: Rows per block of a float64 product: a 512 × n float64 buffer (40 MB at n = 10,000)
#: per thread.
ROWS = 512


def held_bytes(n: int) -> float:
    """Peak bytes of :class:`HeldDistances`: ``D`` (float64), ``Z_t`` (float32), the row
    buffers of a float64 product (one per thread), and the tiles that build ``D`` (a GEMM
    tile and its close-pair mask)."""
    return 12.0 * n * n + TILE_GROUPS * 8.0 * min(ROWS, n) * n + 3 * 8.0 * TILE * TILE


class HeldDistances:
    """A set's float64 distances, held once, and ``Z_t`` at any scale read from them.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Prepared embeddings (distinct rows; unit rows for ``"cosine"``).
    distance : {"euclidean", "cosine"}

    Examples
    --------
    >>> held = HeldDistances(np.array([[0.0], [np.log(3.0)]]), "euclidean")
    >>> Z = held.kernel(1.0)
    >>> Z.matmat(np.ones(2)).round(12).tolist()  # exp(-ln 3) = 1/3 off the diagonal
    [1.333333333333, 1.333333333333]
    """

    def __init__(self, X: np.ndarray, distance: str):
        self.D = distance_matrix(X, distance)
        self.n = self.D.shape[0]
        self.Z32: np.ndarray | None = None  # refilled in place at every scale

    def kernel(self, t: float) -> HeldKernel:
        return HeldKernel(self, t)


def _dealt(starts: range) -> list[list[int]]:
    """Row-block starts dealt into TILE_GROUPS groups by position: the upper triangle's
    blocks shrink down the rows, so every group gets long and short ones."""
    blocks = list(starts)
    return [g for g in (blocks[k::TILE_GROUPS] for k in range(TILE_GROUPS)) if g]


class HeldKernel:
    """``Z_t = exp(−t·D)`` of a :class:`HeldDistances`: what the preconditioner reads
    (``n``, ``scale``, ``tile``, ``columns``; see :mod:`._pcg`) and the products."""

    scale: np.ndarray | None = None  # an unweighted kernel (unit diagonal)

    def __init__(self, held: HeldDistances, t: float):
        self.held, self.t, self.n = held, float(t), held.n
        self.expm1 = False  # Z32 holds expm1(−tD) (Z_t − 11ᵀ) instead of Z_t

    def _exp(self, D: np.ndarray, out: np.ndarray) -> np.ndarray:
        np.multiply(D, -self.t, out=out)
        return np.exp(out, out=out)

    def tile(self, rows, cols, double: bool = True) -> np.ndarray:
        """``Z_t[rows][:, cols]`` (float64; float32 if not ``double``)."""
        D = self.held.D[np.ix_(np.arange(self.n)[rows], np.arange(self.n)[cols])]
        T = self._exp(D, D)
        return T if double else T.astype(np.float32)

    def columns(self, idx: np.ndarray) -> np.ndarray:
        """``Z_t[:, idx]`` in float64 (D is symmetric: rows are read, contiguous)."""
        R = self.held.D[np.asarray(idx)]
        return np.ascontiguousarray(self._exp(R, R).T)

    @counts_as_pair_work
    def matmat(self, V: np.ndarray, *, double: bool = True) -> np.ndarray:
        """``Z_t @ V`` in float64 from the upper triangle of D: each row block's
        ``exp(−t·D[rows, rows₀:])`` (a reused buffer) multiplies V both ways."""
        vec = V.ndim == 1
        V2 = np.ascontiguousarray(V[:, None] if vec else V, dtype=np.float64)
        step, n = ROWS, self.n

        def part(starts) -> np.ndarray:  # one group's row blocks, into its own sum
            out = np.zeros(V2.shape)
            buf = np.empty((min(step, n), n))
            for i in starts:
                b = min(step, n - i)
                T = self._exp(self.held.D[i : i + b, i:], buf[:b, : n - i])
                out[i : i + b] += T @ V2[i:]
                out[i + b :] += T[:, b:].T @ V2[i : i + b]
            return out

        # The exp of each block was one core's work while the other idled: the blocks are
        # dealt into groups on threads, summed in group order (the same bits anywhere).
        parts = in_groups(part, _dealt(range(0, n, step)))
        out = parts[0]
        for other in parts[1:]:
            out += other
        return out[:, 0] if vec else out

    @counts_as_pair_work
    def fill32(self, expm1: bool) -> None:
        """Write the upper triangle of ``Z_t`` (or of ``expm1(−tD) = Z_t − 11ᵀ`` with
        ``expm1``) into the held float32 buffer, in float32 arithmetic from ``fl32(−tD)``:
        entries within ~1e-7·tD·Z_ij of the float64 ones (better than the float32 GEMM tiles
        the recompute path uses); rounding float64 exponentials took ~40% longer (measured
        at n = 10,000)."""
        held = self.held
        if held.Z32 is None:
            held.Z32 = np.empty((self.n, self.n), dtype=np.float32)
        f = np.expm1 if expm1 else np.exp
        Z32, step = held.Z32, ROWS

        def fill(starts) -> None:  # disjoint row blocks: no two threads write one entry
            for i in starts:
                Z = Z32[i : i + step, i:]
                np.multiply(held.D[i : i + step, i:], -self.t, out=Z, casting="same_kind")
                f(Z, out=Z)

        in_groups(fill, _dealt(range(0, self.n, step)))
        self.expm1 = expm1

    @counts_as_pair_work
    def matvec32(self, v: np.ndarray) -> np.ndarray:
        """``Z_t @ v`` from the upper triangle of the float32 buffer (after :meth:`fill32`).

        BLAS ``ssymv`` reads one triangle: measured 1.6–2× faster than ``sgemv`` on the
        full matrix at n = 10,000. The C-ordered buffer's transpose is Fortran-ordered
        (no copy) and holds the triangle as its lower one.
        """
        from scipy.linalg.blas import ssymv

        Z32 = self.held.Z32
        assert Z32 is not None, "fill32 first"
        out = ssymv(1.0, Z32.T, v.astype(np.float32), lower=1).astype(np.float64)
        return out + v.sum() if self.expm1 else out
