"""Kernel matrices ``F(D)`` of embeddings, applied tile by tile or held when they fit.

The large-n methods (``magnitude_large``, ``vendi_large``) need products ``K @ V`` with
``K_ij = F(d(x_i, x_j))`` for n up to ~10^5, where an n × n float64 matrix (80 GB at
n = 100k) cannot exist. :class:`PairOperator` forms square tiles of distances from the
embeddings (the GEMM identity of :mod:`distances`, close pairs recomputed from differences),
maps them through ``F`` and multiplies, visiting each unordered tile once. Single precision
tiles are ~2× faster (float32 GEMM) and accurate to ~1e-7 relative; double precision tiles
are the reference that certified bounds are computed against. A float32 K is held when
4 n² bytes fit the caller's memory; a float64 one only for a run of float64 products that
would otherwise form every tile again at every product (:meth:`PairOperator.hold_double`).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import counts_as_pair_work
from ._distances import TILE, distance_block, put_transposed, refine_close_pairs

#: The memory a method may use when the caller gives no ``memory_limit`` (bytes).
DEFAULT_MEMORY = 4 * 1024**3

#: A product's tiles are dealt, by position, into at most this many groups, each summed
#: into its own float64 buffer in a fixed order, the buffers then added in group order.
#: The groups run on up to that many threads (numpy's GEMM and elementwise maps release
#: the GIL; the exp of a tile was one core's work while the other idled). The grouping
#: depends on n and the number of columns only, never on the machine's cores, so a
#: product is the same to the last bit on any machine.
TILE_GROUPS = 4
#: A product with the held K and at least this many columns is split by rows on threads.
HELD_SPLIT_MIN_COLUMNS = 32
#: ...with the buffers of all groups together kept under this many bytes.
GROUP_BUFFER_BYTES = 256 * 1024**2


def tile_groups(n_tiles: int, n: int, k: int) -> int:
    """How many groups a product of ``n_tiles`` tiles with ``k`` columns is dealt into.

    >>> tile_groups(1, 100, 1), tile_groups(15, 10_000, 8), tile_groups(1275, 100_000, 64)
    (1, 4, 4)
    >>> tile_groups(1275, 100_000, 2048)  # one n x k buffer already takes 1.6 GB
    1
    """
    per_buffer = 8 * n * max(k, 1)
    return max(1, min(TILE_GROUPS, n_tiles, GROUP_BUFFER_BYTES // per_buffer))


def _workers(groups: int) -> int:
    import os

    return max(1, min(groups, os.cpu_count() or 1))


def in_groups(work: Callable, groups: list) -> list:
    """``work(group)`` for each group, on up to as many threads as cores; results in order.

    For numpy work that releases the GIL (GEMM, elementwise maps of large arrays) on
    disjoint outputs, or outputs summed afterwards in group order (the same bits on any
    machine)."""
    workers = _workers(len(groups))
    if workers == 1:
        return [work(g) for g in groups]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(work, groups))


def _touched(shape: tuple[int, int], dtype) -> np.ndarray:
    """``np.empty(shape, dtype)`` with its pages written once, in row order on threads.

    The mirrored tiles of a K write across rows, and the kernel's first-touch faults cost
    more in that order: forming a 30,000² float64 K took 7.5 s fresh, 0.6 s + 1.6 s with
    the pages touched first (idle machine; 20 s fresh beside another process)."""
    A = np.empty(shape, dtype=dtype)

    def touch(blocks) -> None:
        for a, b in blocks:
            A[a:b].fill(0)

    edges = np.linspace(0, shape[0], TILE_GROUPS + 1).astype(int)
    in_groups(touch, [[blk] for blk in itertools.pairwise(edges)])
    return A


def one_thread() -> contextlib.AbstractContextManager:
    """A context running BLAS/LAPACK on one thread, for the many small factorisations.

    Measured on the shared 2-core machine: a 256² ``eigh`` took 0.5 s with two BLAS threads
    competing with other processes and 0.03 s on one. threadpoolctl is optional: without it
    the context does nothing.
    """
    import scipy.linalg  # noqa: F401  (its OpenBLAS must be loaded to be limited)

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - depends on the environment
        return contextlib.nullcontext()
    return threadpool_limits(1)


def dual_eigenvalues(C: np.ndarray) -> np.ndarray:
    """Eigenvalues of a symmetric d × d matrix (a covariance; overwritten) on one BLAS thread.

    Measured on the shared 2-core machine at d = 768: 0.04 s on one thread, 1.5–5 s on two
    while other processes ran (the threads wait on each other in the tridiagonalisation).
    """
    from scipy.linalg import eigvalsh

    with one_thread():
        return eigvalsh(C, overwrite_a=True, check_finite=False, driver="evd")


def distinct_rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Identical rows merged: (distinct rows, multiplicity of each), in first-seen order.

    Identical rows are at distance exactly 0 (``distances`` recomputes close pairs from the
    difference), so they are duplicates for every method here. Where every row is
    distinct, ``X`` itself comes back, not a copy: at 50,000 × 768 a copy was 0.3 GiB of
    the large-n solvers' peak (read-only use here).

    >>> X = np.array([[0.0, 1.0], [2.0, 3.0], [0.0, 1.0]])
    >>> rows, counts = distinct_rows(X)
    >>> rows.tolist(), counts.tolist()
    ([[0.0, 1.0], [2.0, 3.0]], [2, 1])
    >>> Y = X[:2]
    >>> distinct_rows(Y)[0] is Y  # every row distinct: no copy
    True
    """
    _, first, counts = np.unique(X, axis=0, return_index=True, return_counts=True)
    if len(first) == len(X):
        return X, counts  # first-seen order of n distinct rows is X's own order
    order = np.argsort(first)
    return X[first[order]], counts[order]


class PairOperator:
    """``K = F(D)`` for embeddings ``X`` (rows prepared for ``distance``), used blockwise.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Prepared embeddings (unit rows for ``"cosine"``).
    distance : {"euclidean", "cosine"}
    entry : callable
        ``entry(D, out)`` writes ``F(D)`` into ``out`` (same shape and dtype); ``F(0) = 1``.
    scale : ndarray, shape (n,), optional
        ``K`` becomes ``diag(scale) F(D) diag(scale)`` (a weighted kernel).
    X32 : ndarray, optional
        The rows in float32 when already made (a dask worker keeps them per set).
    """

    #: Where the tiles and products run (recorded with the solvers' results).
    engine = "numpy"

    def __init__(
        self,
        X: np.ndarray,
        distance: str,
        entry: Callable[[np.ndarray, np.ndarray], None],
        *,
        scale: np.ndarray | None = None,
        X32: np.ndarray | None = None,
    ):
        self.X64 = np.ascontiguousarray(X, dtype=np.float64)
        self._X32 = X32  # made at the first float32 tile (see rows32)
        self.distance = distance
        self.entry = entry
        self.n = X.shape[0]
        self.scale = None if scale is None else np.asarray(scale, dtype=np.float64)
        # A float32 copy of K when it fits: an ndarray here, a device tensor or the
        # workers' row strips in the engines' subclasses.
        self.held: Any = None

    def rows32(self) -> np.ndarray:
        """The rows in float32, made at the first float32 tile and dropped once K is held
        (its products never form tiles again): n·d·4 bytes, 0.14 GiB at 50,000 × 768.

        >>> op = PairOperator(np.eye(3), "euclidean", lambda D, out: np.exp(-D, out=out))
        >>> op.rows32().dtype, op.tile(slice(0, 1), slice(1, 3), double=False).round(4)
        (dtype('float32'), array([[0.2431, 0.2431]], dtype=float32))
        >>> op.hold()
        >>> op._X32 is None, op.held.shape
        (True, (3, 3))
        """
        if self._X32 is None:
            self._X32 = self.X64.astype(np.float32)
        return self._X32

    # -- tiles -------------------------------------------------------------------------
    def tile(
        self, rows: slice | np.ndarray, cols: slice | np.ndarray, double: bool = True
    ) -> np.ndarray:
        """``K[rows][:, cols]`` in float64 (``double``) or float32."""
        X = self.X64 if double else self.rows32()
        A, B = X[rows], X[cols]
        D, close = distance_block(A, B, self.distance)
        # Close pairs are refined from the float64 rows even for float32 tiles: only the
        # difference form resolves near-duplicates.
        if close is not None and close.any():
            D = D.astype(np.float64)
            refine_close_pairs(D, self.X64[rows], self.X64[cols], self.distance, close)
            D = D.astype(X.dtype, copy=False)
        self.entry(D, D)
        if self.scale is not None:
            s = self.scale.astype(D.dtype)
            D *= s[rows][:, None]
            D *= s[cols][None, :]
        return D

    def _tiles(self):
        n = self.n
        for i in range(0, n, TILE):
            for j in range(i, n, TILE):
                yield slice(i, min(i + TILE, n)), slice(j, min(j + TILE, n)), i == j

    def hold(self) -> None:
        """Form and keep K in float32 (4 n² bytes): later single-precision products are
        one GEMM instead of a pass over the tiles."""
        if self.held is None:
            self.held = self._formed(double=False)
            self._X32 = None

    def hold_double(self) -> bool:
        """Form and keep K in float64 (8 n² bytes) in place of a held float32 K (released
        first: one copy at a time); later products of either precision are then float64
        GEMMs with it. Returns whether it holds K in float64 (the engines' subclasses do
        not and return False).

        For a run of float64 products: each one otherwise forms every float64 tile again.
        Measured at n = 15,000, d = 64 with 128 columns on 2 cores: 3.4 s a product from
        the tiles, 0.9 s with K held (the distances and the exp are the bulk of a tile).
        """
        if self.held is None or self.held.dtype != np.float64:
            self.held = None
            self.held = self._formed(double=True)
        return True

    @counts_as_pair_work
    def _formed(self, double: bool) -> np.ndarray:
        """K in float64 (``double``) or float32, formed tile by tile on threads."""
        K = _touched((self.n, self.n), np.float64 if double else np.float32)
        if not double:
            self.rows32()  # made here, once, not by the threads racing to make it

        def fill(tiles) -> None:  # disjoint blocks of K: no two threads write one entry
            for r, c, diag in tiles:
                T = self.tile(r, c, double=double)
                K[r, c] = T
                if not diag:
                    put_transposed(K[c, r], T)

        tiles = list(self._tiles())
        groups = min(TILE_GROUPS, len(tiles))
        in_groups(fill, [tiles[g::groups] for g in range(groups)])
        return K

    def release(self) -> None:
        self.held = None

    def _held_product(self, V: np.ndarray) -> np.ndarray:
        """``held @ V`` in float64 (V cast to the held K's precision); with many columns,
        by row blocks on up to TILE_GROUPS threads (the solvers run BLAS on one thread:
        see one_thread). Measured at n = 10,000 with 328 columns: 0.83 s → 0.44 s on 2
        cores. With few columns the product is bound by reading K, and splitting gained
        ~7 %: one GEMM then.

        A float64 K is multiplied as ``(Vᵀ Kᵀ)ᵀ``: OpenBLAS ran that layout 1.5–1.7×
        faster (n = 30,000: 2.82 → 1.93 s with 128 columns, 1.36 → 0.82 s with 40; at
        n = 10,000 0.51 → 0.31 s with 128). In float32 the two were within 5 %. The same
        sums, in another order."""
        K = self.held
        transposed = K.dtype == np.float64
        Vk = np.ascontiguousarray(V.T if transposed else V, dtype=K.dtype)
        if V.shape[1] < HELD_SPLIT_MIN_COLUMNS or not isinstance(K, np.ndarray):
            if transposed:
                return np.ascontiguousarray((Vk @ K.T).T, dtype=np.float64)
            return (K @ Vk).astype(np.float64)
        out = np.empty((self.n, V.shape[1]), dtype=np.float64)
        edges = np.linspace(0, self.n, TILE_GROUPS + 1).astype(int)

        def rows(blocks) -> None:  # disjoint row blocks of out
            for a, b in blocks:
                out[a:b] = (Vk @ K[a:b].T).T if transposed else K[a:b] @ Vk

        in_groups(rows, [[blk] for blk in itertools.pairwise(edges)])
        return out

    @counts_as_pair_work
    def matmat(
        self, V: np.ndarray, *, double: bool = False, sum_squares: bool = False
    ) -> np.ndarray | tuple[np.ndarray, float]:
        """``K @ V`` in float64 (V is (n,) or (n, k)); with ``sum_squares`` also ``Σ K_ij²``.

        ``double`` forms float64 tiles from the float64 embeddings (the reference product);
        otherwise float32 tiles (or the held float32 K) with float32 products. A K held in
        float64 serves both.
        """
        vec = V.ndim == 1
        V2 = V[:, None] if vec else V
        held = self.held
        if held is not None and not sum_squares and (held.dtype == np.float64 or not double):
            out = self._held_product(V2)
            return out[:, 0] if vec else out
        dtype = np.float64 if double else np.float32
        Vd = np.ascontiguousarray(V2, dtype=dtype)

        def product(tiles) -> tuple[np.ndarray, float]:
            part = np.zeros(V2.shape, dtype=np.float64)
            total = 0.0
            for r, c, diag in tiles:
                T = self.tile(r, c, double=double)
                part[r] += T @ Vd[c]
                if not diag:
                    part[c] += T.T @ Vd[r]
                if sum_squares:
                    s = float(np.einsum("ij,ij->", T, T, dtype=np.float64))
                    total += s if diag else 2.0 * s
            return part, total

        if not double:
            self.rows32()  # made here, once, not by the threads racing to make it
        tiles = list(self._tiles())
        groups = tile_groups(len(tiles), self.n, V2.shape[1])
        parts = in_groups(product, [tiles[g::groups] for g in range(groups)])
        out, total = parts[0]
        for part, part_total in parts[1:]:  # in group order: the same sum on any machine
            out += part
            total += part_total
        out = out[:, 0] if vec else out
        return (out, total) if sum_squares else out

    def columns(self, idx: np.ndarray) -> np.ndarray:
        """``K[:, idx]`` in float64 (n × len(idx))."""
        return self.tile(slice(None), np.asarray(idx), double=True)
