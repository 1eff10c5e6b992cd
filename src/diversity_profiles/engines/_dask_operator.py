"""The large-n solvers' products ``K @ V`` as dask tasks: a :class:`._blockwise.PairOperator`
whose tiles are formed on the workers, from the set shipped to them once.

``magnitude_large`` (preconditioned CG) and ``vendi_large`` (Lanczos and the certifying
Rayleigh–Ritz pass) spend their time in products with ``K = F(D)``. On a dask set the row
blocks are dealt into one group per worker thread, balanced by their number of tiles, and
each product is one task per group: for each of its row blocks ``i`` the tiles
``(i, j ≥ i)`` of the upper triangle multiply ``V`` on the worker (both ``K_ij V_j`` and
``K_ijᵀ V_i``, as in memory), and the partial products (rows from the group's first block
on, plus ``Σ K²`` when asked) are reduced by the tree of :func:`.dask_engine._run`.
``hold()`` keeps the float32 row strips of K *on the workers* (one future per group, 2 n²
bytes over the cluster): later single-precision products are one product per strip, on the
worker that holds it. No n × n matrix reaches the client.

Why groups, not one task per row block: a CG iteration is one product, and each task costs
a scheduler round trip (measured on the loaded 2-core machine at n = 2000 with K held:
90 ms per product with 8 row-block tasks, 24–50 ms with 2 and a merge). For the same
reason held strips are split over workers only when each group has at least
:data:`HELD_BYTES_PER_TASK` of them: below that one task reads its strips faster than a
second task and a merge cost.

What stays on the client: the few columns of pivoted Cholesky and the diagonal blocks of the
preconditioner (``columns``, ``tile``), computed from the gathered n × d embeddings with
the in-memory code. Tiles are computed by the very :meth:`PairOperator.tile` of the
in-memory engine, so every entry of K is the same; only the order of the float64 sums of
the partial products differs (a tree instead of a sweep): results agree with the
in-memory solvers within their stated bounds, not bit for bit.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ._blockwise import TILE, PairOperator
from ._dask_engine import Shipped, _run, ship, worker_cached

#: Fewest rows per block: smaller tiles run BLAS far below its peak.
MIN_BLOCK = 256
#: Bytes of held float32 strips that make a second task per product worth it (~10 ms of
#: memory-bound products, a task's round trip on a loaded machine).
HELD_BYTES_PER_TASK = 64 << 20
#: Vectors larger than this go to every worker once per product (scatter) instead of
#: travelling inside each task.
SCATTER_BYTES = 1 << 20


def block_rows(n: int, blocks: int = 8) -> int:
    """Rows per block: about ``blocks`` row blocks, a multiple of 128 in [256, TILE].

    Examples
    --------
    >>> block_rows(600), block_rows(4000), block_rows(100_000)
    (256, 512, 2048)
    """
    rows = 128 * math.ceil(n / blocks / 128)
    return int(min(max(rows, MIN_BLOCK), TILE))


def deal(n: int, block: int, groups: int) -> list[list[int]]:
    """The row-block starts dealt into at most ``groups`` groups of nearly equal work (a row
    block starting at ``i`` has ``⌈(n − i)/block⌉`` tiles), heaviest first.

    Examples
    --------
    >>> deal(2048, 256, 2)          # 8 blocks of 8, 7, ..., 1 tiles: 18 tiles each
    [[0, 768, 1024, 1792], [256, 512, 1280, 1536]]
    """
    starts = list(range(0, n, block))
    load = [0] * max(1, min(groups, len(starts)))
    out: list[list[int]] = [[] for _ in load]
    for i in starts:  # already heaviest first
        g = load.index(min(load))
        out[g].append(i)
        load[g] += math.ceil((n - i) / block)
    return out


def _threads(shipped: Shipped) -> int:
    """Worker threads of the cluster (of this machine without one)."""
    client = shipped.client
    if client is None:
        return os.cpu_count() or 1
    workers = client.scheduler_info()["workers"].values()
    return max(1, sum(int(w.get("nthreads", 1)) for w in workers))


def on_workers(shipped: Shipped, X: np.ndarray) -> Shipped:
    """``X`` on the workers: ``shipped`` itself when ``X`` is its rows, else ``X`` shipped
    anew (the solvers merge duplicate rows, which changes the set they work on)."""
    if shipped.X is X or (shipped.X.shape == X.shape and np.array_equal(shipped.X, X)):
        return shipped
    return ship(X)


class DaskPairOperator(PairOperator):
    """:class:`._blockwise.PairOperator` whose products run as dask tasks on ``shipped``.

    Parameters
    ----------
    shipped : Shipped
        The embeddings (prepared for ``distance``) on the workers, from
        :func:`.dask_engine.ship`.
    distance, entry, scale
        As :class:`PairOperator`; ``entry`` must pickle (a module-level function or a
        ``functools.partial`` of one, not a closure).
    block : int, optional
        Rows per block (default :func:`block_rows` for four blocks per worker thread).
    groups : int, optional
        Tasks per product (default: the worker threads).
    held_groups : int, optional
        Tasks per product with the held strips (default: one per
        :data:`HELD_BYTES_PER_TASK` of strips, at most ``groups``).

    Examples
    --------
    Without a client the tasks run on dask's local scheduler:

    >>> from functools import partial
    >>> from diversity_profiles.engines._dask_engine import ship
    >>> from diversity_profiles.large._magnitude_large import _exp_entry
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> op = DaskPairOperator(ship(X), "euclidean", partial(_exp_entry, 1.0))
    >>> op.matmat(np.ones(3), double=True).round(4).tolist()
    [1.4177, 1.5032, 1.1851]
    """

    engine = "dask"

    def __init__(
        self,
        shipped: Shipped,
        distance: str,
        entry: Callable[[np.ndarray, np.ndarray], None],
        *,
        scale: np.ndarray | None = None,
        block: int | None = None,
        groups: int | None = None,
        held_groups: int | None = None,
    ):
        super().__init__(shipped.X, distance, entry, scale=scale)
        self.shipped = shipped
        groups = int(groups or _threads(shipped))
        self.block = int(block or block_rows(self.n, 4 * groups))
        self.groups = deal(self.n, self.block, groups)
        if held_groups is None:
            held_groups = min(groups, math.ceil(2.0 * self.n * self.n / HELD_BYTES_PER_TASK))
        self.held_groups = deal(self.n, self.block, held_groups)
        # The weights go to every worker once, not with every task.
        self._scale = self._send(self.scale, always=True)

    def _send(self, a: np.ndarray | None, always: bool = False) -> Any:
        client = self.shipped.client
        if a is None or client is None or not (always or a.nbytes > SCATTER_BYTES):
            return a
        return client.scatter(a, broadcast=True, hash=False)

    def _args(self, starts: list[int]) -> tuple:
        return (self.distance, self.entry, self._scale, starts, self.block)

    def hold(self) -> None:
        """Form the float32 row strips of K's upper triangle on the workers, one future per
        group (on dask's local scheduler: in this process), for the single-precision
        products."""
        if self.held is not None:
            return
        client = self.shipped.client
        if client is not None:
            self.held = [
                client.submit(_strips_task, self.shipped.handle, *self._args(starts),
                              pure=False)
                for starts in self.held_groups
            ]  # fmt: skip
            return
        import dask

        call = dask.delayed(_strips_task, pure=True)
        parts = [call(self.shipped.handle, *self._args(starts)) for starts in self.held_groups]
        self.held = list(dask.persist(*parts, scheduler="threads"))

    def hold_double(self) -> bool:
        """Holds nothing: the workers form their float64 tiles at each product (see
        :meth:`PairOperator.hold_double`)."""
        return False

    def matmat(
        self, V: np.ndarray, *, double: bool = False, sum_squares: bool = False
    ) -> np.ndarray | tuple[np.ndarray, float]:
        """``K @ V`` in float64 (see :meth:`PairOperator.matmat`), one task per group of
        row blocks.

        ``V`` is cast to the tiles' precision on the client (float32 halves what travels);
        each task multiplies its tiles (or its held strips) in that precision and sums into
        float64, and the partials are added up by a tree.
        """
        vec = V.ndim == 1
        dtype = np.float64 if double else np.float32
        V2 = np.ascontiguousarray(V[:, None] if vec else V, dtype=dtype)
        strips = None if double or sum_squares else self.held
        Vh = self._send(V2)
        if strips is None:
            rows = [(*self._args(g), Vh, double, sum_squares, None) for g in self.groups]
        else:
            rows = [
                (*self._args(g), Vh, False, False, strips[k])
                for k, g in enumerate(self.held_groups)
            ]
        _, out, total = _run(self.shipped, _product_task, rows, _merge_products)
        out = out[:, 0] if vec else out
        return (out, total) if sum_squares else out


# --- on the workers ------------------------------------------------------------------------


def _operator(X: np.ndarray, distance: str, entry, scale) -> PairOperator:
    """An in-memory :class:`PairOperator` over the scattered ``X`` (its float32 copy made
    once per worker), with this product's entry function and weights."""
    X32 = worker_cached(X, ("float32 rows",), lambda: X.astype(np.float32))
    return PairOperator(X, distance, entry, scale=scale, X32=X32)


def _strips_task(X, distance, entry, scale, starts, block) -> list[np.ndarray]:
    """Per row block ``i`` of the group: rows ``i:i+block`` of K from column ``i`` on, in
    float32, formed tile by tile."""
    op = _operator(X, distance, entry, scale)
    strips = []
    for i in starts:
        rows = slice(i, min(i + block, op.n))
        S = np.empty((rows.stop - i, op.n - i), dtype=np.float32)
        for j in range(i, op.n, block):
            stop = min(j + block, op.n)
            S[:, j - i : stop - i] = op.tile(rows, slice(j, stop), double=False)
        strips.append(S)
    return strips


def _product_task(X, distance, entry, scale, starts, block, V, double, sum_squares, strips):
    """The group's share of ``K V``: rows from its first block on (float64), and ``Σ K_ij²``
    of its tiles."""
    op = _operator(X, distance, entry, scale)
    n, first = op.n, min(starts)
    y = np.zeros((n - first, V.shape[1]))
    total = 0.0
    for k, i in enumerate(starts):
        stop = min(i + block, n)
        m, Vi, yi = stop - i, V[i:stop], y[i - first :]
        if strips is not None:  # the held strip: the diagonal tile and those right of it
            yi[:m] += strips[k] @ V[i:]
            yi[m:] += strips[k][:, m:].T @ Vi
            continue
        for j in range(i, n, block):
            cols = slice(j, min(j + block, n))
            T = op.tile(slice(i, stop), cols, double=double)
            yi[:m] += T @ V[cols]
            if j != i:
                yi[j - i : cols.stop - i] += T.T @ Vi
            if sum_squares:
                s = float(np.einsum("ij,ij->", T, T, dtype=np.float64))
                total += s if j == i else 2.0 * s
    return first, y, total


def _merge_products(*parts):
    start = min(p[0] for p in parts)
    y = np.zeros((max(p[0] + len(p[1]) for p in parts) - start, parts[0][1].shape[1]))
    total = 0.0
    for i, part, s in parts:
        y[i - start :] += part
        total += s
    return start, y, total
