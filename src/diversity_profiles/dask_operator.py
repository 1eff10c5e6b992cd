"""The large-n solvers' products ``K @ V`` as dask tasks: a :class:`._blockwise.PairOperator`
whose tiles are formed on the workers, from the set shipped to them once.

``magnitude_large`` (preconditioned CG) and ``vendi_large`` (Lanczos and the certifying
Rayleigh–Ritz pass) spend their time in products with ``K = F(D)``. On a dask set each
product is one task per row block ``i``: the tiles ``(i, j ≥ i)`` of the upper triangle
multiply ``V`` on the worker (both ``K_ij V_j`` and ``K_ijᵀ V_i``, as in memory), and the
partial products (rows ``i:``, plus ``Σ K²`` when asked) are reduced by the tree of
:func:`.dask_engine._run`. ``hold()`` keeps the float32 row strips of K *on the workers*
(dask futures, 2 n² bytes over the cluster): later single-precision products are one
product per strip, on the worker that holds it. No n × n matrix reaches the client.

What stays on the client: the few columns of pivoted Cholesky and the diagonal blocks of the
preconditioner (``columns``, ``tile``), computed from the gathered n × d embeddings with
the in-memory code. Tiles are computed by the very :meth:`PairOperator.tile` of the
in-memory engine, so every entry of K is the same; only the order of the float64 sums of
the partial products differs (a tree instead of a sweep): results agree with the
in-memory solvers within their stated bounds, not bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._blockwise import TILE, PairOperator
from .dask_engine import Shipped, _run, ship, worker_cached

#: Fewest rows per task: at ~3 ms per task, smaller blocks cost more than they balance.
MIN_BLOCK = 256
#: Vectors larger than this go to every worker once per product (scatter) instead of
#: travelling inside each task.
SCATTER_BYTES = 1 << 20


def task_rows(n: int, tasks: int = 8) -> int:
    """Rows per task: about ``tasks`` row blocks, a multiple of 128 in [256, TILE].

    Examples
    --------
    >>> task_rows(600), task_rows(4000), task_rows(100_000)
    (256, 512, 2048)
    """
    rows = 128 * math.ceil(n / tasks / 128)
    return int(min(max(rows, MIN_BLOCK), TILE))


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
        Rows per task (default :func:`task_rows`).

    Examples
    --------
    Without a client the tasks run on dask's local scheduler:

    >>> from functools import partial
    >>> from diversity_profiles.dask_engine import ship
    >>> from diversity_profiles.magnitude_large import _exp_entry
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
    ):
        super().__init__(shipped.X, distance, entry, scale=scale)
        self.shipped = shipped
        self.block = int(block or task_rows(self.n))
        # The weights go to every worker once, not with every task.
        self._scale = self._send(self.scale, always=True)

    def _send(self, a: np.ndarray | None, always: bool = False) -> Any:
        client = self.shipped.client
        if a is None or client is None or not (always or a.nbytes > SCATTER_BYTES):
            return a
        return client.scatter(a, broadcast=True, hash=False)

    def _args(self, i: int) -> tuple:
        return (self.distance, self.entry, self._scale, i, self.block)

    def hold(self) -> None:
        """Form the float32 row strips of K's upper triangle on the workers (futures; on
        dask's local scheduler, in this process) for the single-precision products."""
        if self.held is not None:
            return
        starts = range(0, self.n, self.block)
        client = self.shipped.client
        if client is not None:
            top = len(starts)
            self.held = [
                client.submit(_strip_task, self.shipped.handle, *self._args(i),
                              priority=top - k, pure=False)
                for k, i in enumerate(starts)
            ]  # fmt: skip
            return
        import dask

        call = dask.delayed(_strip_task, pure=True)
        parts = [call(self.shipped.handle, *self._args(i)) for i in starts]
        self.held = list(dask.persist(*parts, scheduler="threads"))

    def matmat(
        self, V: np.ndarray, *, double: bool = False, sum_squares: bool = False
    ) -> np.ndarray | tuple[np.ndarray, float]:
        """``K @ V`` in float64 (see :meth:`PairOperator.matmat`), one task per row block.

        ``V`` is cast to the tiles' precision on the client (float32 halves what travels);
        each task multiplies its tiles (or its held strip) in that precision and sums into
        float64, and the partials are added up by a tree.
        """
        vec = V.ndim == 1
        dtype = np.float64 if double else np.float32
        V2 = np.ascontiguousarray(V[:, None] if vec else V, dtype=dtype)
        strips = None if double or sum_squares else self.held
        Vh = self._send(V2)
        rows = [
            (*self._args(i), Vh, double, sum_squares, None if strips is None else strips[k])
            for k, i in enumerate(range(0, self.n, self.block))
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


def _strip_task(X, distance, entry, scale, i, block) -> np.ndarray:
    """Rows ``i:i+block`` of K from column ``i`` on, in float32, tile by tile."""
    op = _operator(X, distance, entry, scale)
    rows = slice(i, min(i + block, op.n))
    S = np.empty((rows.stop - i, op.n - i), dtype=np.float32)
    for j in range(i, op.n, block):
        stop = min(j + block, op.n)
        S[:, j - i : stop - i] = op.tile(rows, slice(j, stop), double=False)
    return S


def _product_task(X, distance, entry, scale, i, block, V, double, sum_squares, strip):
    """Row block ``i``'s share of ``K V``: rows ``i:`` (float64) and its ``Σ K_ij²``."""
    op = _operator(X, distance, entry, scale)
    n = op.n
    stop = min(i + block, n)
    m = stop - i
    y = np.zeros((n - i, V.shape[1]))
    Vi = V[i:stop]
    if strip is not None:  # the held strip: diagonal tile and those right of it
        y[:m] += strip @ V[i:]
        y[m:] += strip[:, m:].T @ Vi
        return i, y, 0.0
    total = 0.0
    for j in range(i, n, block):
        cols = slice(j, min(j + block, n))
        T = op.tile(slice(i, stop), cols, double=double)
        y[:m] += T @ V[cols]
        if j != i:
            y[j - i : cols.stop - i] += T.T @ Vi
        if sum_squares:
            s = float(np.einsum("ij,ij->", T, T, dtype=np.float64))
            total += s if j == i else 2.0 * s
    return i, y, total


def _merge_products(*parts):
    start = min(p[0] for p in parts)
    y = np.zeros((max(p[0] + len(p[1]) for p in parts) - start, parts[0][1].shape[1]))
    total = 0.0
    for i, part, s in parts:
        y[i - start :] += part
        total += s
    return start, y, total
