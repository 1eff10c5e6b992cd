"""The streamed passes as dask graphs: beyond one machine, never an n × n matrix.

The set's embeddings travel to every worker once (``client.scatter(X, broadcast=True)``);
each task then computes one row block's partial result from them with the very
functions of the in-memory engine (:func:`.streaming.row_histogram`,
:func:`.streaming.row_counts`), and the partials are reduced by the same tree
(:func:`.streaming.tree_reduce`). Hence the results equal the in-memory engine's bit
for bit: histograms, counts and degrees (integers) and the float sums alike.

With a ``dask.distributed`` client active (``Client(address)`` or a ``LocalCluster``)
the tasks run there as futures, the heaviest row blocks first; otherwise the same tree
is a delayed graph on dask's local threaded scheduler. dask is imported
only when this module is used: ``pip install "diversity-profiles[dask]"``.

Besides the two passes: :func:`gram` (the d × d covariance of the rows, for the dual
form of cosine Vendi) and :func:`kernel_matvec` (``K v`` for a kernel of the distances).
The large-n solvers' own products run through :class:`.dask_operator.DaskPairOperator`
(the same shipped set, held float32 strips of K on the workers).
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import samples_first
from ._histogram import LogDistanceHistogram
from ._streaming import (
    BLOCK,
    ThresholdCounts,
    _add,
    _Blocks,
    _merge_histograms,
    _prepare,
    _row_pairs,
    finish_counts,
    row_counts,
    row_histogram,
    tree_reduce,
)

#: Rows per task of :func:`gram` (d × d products per task; ~3 ms overhead per task).
GRAM_ROWS = 16384


def is_dask(x) -> bool:
    """Whether ``x`` is a dask collection or an xarray object backed by one (no import).

    Examples
    --------
    >>> is_dask(np.zeros((2, 2)))
    False
    """
    module = type(x).__module__ or ""
    if module.startswith("dask."):
        return True
    return module.startswith("xarray.") and getattr(x, "chunks", None) is not None


def gather_set(x: Any, func: str, name: str) -> np.ndarray:
    """The rows of a dask array or chunked DataArray, computed (samples × features).

    A DataArray's sample dimension is ``"sample"`` when it has one, else its first one
    (the rule of :func:`~diversity_profiles.core.samples_first`, as for numpy-backed ones).
    """
    data = samples_first(x, name, func)
    if getattr(data, "compute", None) is None:  # an xarray object backed by numpy
        return np.asarray(data)
    client = active_client()
    return np.asarray(client.compute(data).result() if client is not None else data.compute())


def active_client() -> Any:
    """The current ``dask.distributed`` client, or None (distributed is never imported here)."""
    if "distributed" not in sys.modules:  # no client can exist without the import
        return None
    from distributed import Client

    try:  # the client of a ``with client.as_current():`` block, else the default one
        return Client.current(allow_global=True)
    except ValueError:
        return None


#: What runs as dask graphs, recorded with the results (see :func:`provenance`).
TASKS = (
    "streamed passes (log-distance histogram, threshold counts, sum of K^2) and the d x d "
    "covariance as row-block tasks reduced by a tree; the iterative solvers' products K V "
    "(magnitude_large CG, vendi_large Lanczos and its certifying pass) as upper-triangle "
    "row-block tasks with K's float32 strips held on the workers; the set shipped to every "
    "worker once"
)


def provenance() -> dict[str, str]:
    """The attributes a profile node records about the dask engine that computed it.

    Examples
    --------
    >>> provenance()["engine"]      # no client here
    'dask (local scheduler)'
    """
    client = active_client()
    address = None if client is None else client.scheduler.address
    engine = "dask (local scheduler)" if client is None else f"dask.distributed ({address})"
    return {"engine": engine, "engine_tasks": TASKS}


@dataclass
class Shipped:
    """One set's embeddings on the workers: a scattered future, or a delayed local array."""

    X: np.ndarray
    handle: object
    client: Any  # a distributed.Client, or None (distributed is imported lazily)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])


def ship(X) -> Shipped:
    """Send ``X`` to every worker once (or wrap it for the local scheduler)."""
    if isinstance(X, Shipped):
        return X
    X = np.asarray(X)
    client = active_client()
    if client is not None:
        return Shipped(X, client.scatter(X, broadcast=True, hash=False), client)
    import dask

    return Shipped(X, dask.delayed(X, pure=True), None)


def _run(shipped: Shipped, task: Callable, rows: list[tuple], merge: Callable):
    """``task(X, *args)`` per row (in order), the results reduced by :func:`tree_reduce`.

    On a client: futures, the heaviest rows (the first: they pair with every later block)
    prioritised so that two workers finish together, merges as soon as they can run. Without
    one: a delayed graph of the same tree on dask's threaded scheduler.
    """
    client = shipped.client
    if client is not None:
        top = len(rows)
        parts = [
            client.submit(task, shipped.handle, *args, priority=top - k, pure=False)
            for k, args in enumerate(rows)
        ]
        total = tree_reduce(
            parts, lambda *xs: client.submit(merge, *xs, priority=top + 1, pure=False)
        )
        return total.result()
    import dask

    call = dask.delayed(task, pure=True)
    parts = [call(shipped.handle, *args) for args in rows]
    total = tree_reduce(parts, dask.delayed(merge, pure=True))
    return dask.compute(total, scheduler="threads")[0]


# --- on the workers: the prepared arrays of a scattered set, cached -------------------------

_CACHE: OrderedDict = OrderedDict()
_LOCK = threading.Lock()


def worker_cached(X: np.ndarray, key: tuple, make: Callable[[], Any]) -> Any:
    """``make()`` computed once per worker for the scattered ``X`` (and ``key``), kept while
    ``X`` lives there: the prepared copies of one set serve all of its tasks."""
    full = (id(X), *key)
    with _LOCK:
        hit = _CACHE.get(full)
        if hit is None or hit[0]() is not X:
            hit = (weakref.ref(X), make())
            _CACHE[full] = hit
            while len(_CACHE) > 3:  # one set at a time: both precisions, the solvers' rows
                _CACHE.popitem(last=False)
    return hit[1]


def _blocks(X: np.ndarray, distance: str, block: int, dtype) -> _Blocks:
    """A :class:`_Blocks` over X whose float32 copy and norms are prepared once per worker."""
    key = (distance, np.dtype(dtype).str)
    prepared = worker_cached(X, key, lambda: _prepare(X, distance, dtype))
    return _Blocks(X, distance, block, dtype, prepared=prepared)


def _hist_task(X, distance, block, dtype, i) -> LogDistanceHistogram:
    return row_histogram(_blocks(X, distance, block, dtype), i)


def _counts_task(X, distance, block, dtype, i, taus, kernel):
    m = taus.size
    bins = np.zeros((X.shape[0] - i, m + 1), dtype=np.int64) if m else None
    s = row_counts(_blocks(X, distance, block, dtype), i, taus, kernel, bins)
    # Per task a count is at most n: int32 halves what travels back.
    return i, None if bins is None else bins.astype(np.int32), s


def _merge_counts(*parts):
    start = min(p[0] for p in parts)
    bins = None
    if parts[0][1] is not None:
        n = start + max(p[0] + len(p[1]) for p in parts) - start
        bins = np.zeros((n - start, parts[0][1].shape[1]), dtype=np.int64)
        for i, b, _ in parts:
            bins[i - start :] += b
    return start, bins, _add(*[p[2] for p in parts])


def _matvec_task(X, distance, block, i, v, kernel, k0):
    blocks = _blocks(X, distance, block, np.float32)
    y = np.zeros((X.shape[0] - i, *v.shape[1:]))
    vi = v[i : i + block]
    for _, j, D, keep in _row_pairs(blocks, i):
        K = kernel(D).astype(np.float64)
        rows, cols = K.shape
        if keep is not None:  # diagonal block: strict upper triangle, its transpose, K_ii
            K[~keep] = 0.0
            y[:rows] += K @ vi + K.T @ vi + k0 * vi
        else:
            y[:rows] += K @ v[j : j + cols]
            y[j - i : j - i + cols] += K.T @ vi
    return i, y


def _merge_vectors(*parts):
    start = min(p[0] for p in parts)
    y = np.zeros((max(p[0] + len(p[1]) for p in parts) - start, *parts[0][1].shape[1:]))
    for i, part in parts:
        y[i - start :] += part
    return start, y


def _gram_task(X, start, stop, scale, rows):
    C = np.zeros((X.shape[1], X.shape[1]))
    for s in range(start, stop, rows):
        B = np.asarray(X[s : min(s + rows, stop)], dtype=np.float64) * scale
        C += B.T @ B
    return C


def _sum(*parts):
    return sum(parts[1:], parts[0])


# --- the passes ----------------------------------------------------------------------------


def distance_pass(
    X, distance: str, *, block: int = BLOCK, precision: str = "float64", **_ignored
) -> LogDistanceHistogram:
    """:func:`.streaming.distance_pass` as a dask graph: one task per row block.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    >>> h = distance_pass(X, "euclidean")      # no client: dask's local scheduler
    >>> h.n_pairs, round(h.mean_distance(), 6)
    (3.0, 6.666667)
    """
    shipped = ship(X)
    dtype = np.float32 if precision == "float32" else np.float64
    rows = [(distance, block, dtype, i) for i in range(0, shipped.n, block)]
    return _run(shipped, _hist_task, rows, _merge_histograms)


def threshold_pass(
    X,
    distance: str,
    taus: np.ndarray | None = None,
    kernel: Callable[[np.ndarray], np.ndarray] | None = None,
    *,
    block: int = BLOCK,
    precision: str = "float64",
    **_ignored,
) -> ThresholdCounts:
    """:func:`.streaming.threshold_pass` as a dask graph: one task per row block.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> c = threshold_pass(X, "euclidean", np.array([1.0, 2.0]), lambda d: 1.0 - d / 4)
    >>> c.pairs.tolist(), c.degrees.tolist(), c.sum_k2
    ([1, 2], [[1, 1], [1, 2], [0, 1]], 0.875)
    """
    shipped = ship(X)
    taus = np.empty(0) if taus is None else np.asarray(taus, dtype=np.float64)
    if np.any(np.diff(taus) < 0):
        raise ValueError("threshold_pass needs the thresholds sorted ascending.")
    dtype = np.float32 if precision == "float32" else np.float64
    rows = [(distance, block, dtype, i, taus, kernel) for i in range(0, shipped.n, block)]
    _, bins, sum_k2 = _run(shipped, _counts_task, rows, _merge_counts)
    return finish_counts(taus, bins, shipped.n, sum_k2 if kernel is not None else None)


def kernel_matvec(
    X, v: np.ndarray, distance: str, kernel: Callable[[np.ndarray], np.ndarray], *, block=BLOCK
) -> np.ndarray:
    """``K v`` with ``K_ij = kernel(d_ij)`` (``K_ii = kernel(0)``), from upper-triangle blocks.

    ``v`` is a vector or an n × k block of vectors. Distances are the float32 blocks of
    the streamed pass; the products are summed in float64.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> kernel_matvec(X, np.ones(3), "euclidean", lambda d: np.exp(-d)).round(4).tolist()
    [1.4177, 1.5032, 1.1851]
    """
    shipped = ship(X)
    v = np.asarray(v, dtype=np.float64)
    k0 = float(np.asarray(kernel(np.zeros((1, 1), dtype=np.float32)))[0, 0])
    if shipped.client is not None:
        v = shipped.client.scatter(v, broadcast=True, hash=False)  # once per product
    rows = [(distance, block, i, v, kernel, k0) for i in range(0, shipped.n, block)]
    return _run(shipped, _matvec_task, rows, _merge_vectors)[1]


def gram(X, scale: float = 1.0, *, rows: int = 4096, per_task: int = GRAM_ROWS) -> np.ndarray:
    """``Σ_i (scale · x_i)(scale · x_i)ᵀ`` (d × d): per-task products plus a tree sum.

    Examples
    --------
    >>> gram(np.array([[1.0, 0.0], [1.0, 2.0]]), rows=1, per_task=1).tolist()
    [[2.0, 2.0], [2.0, 4.0]]
    """
    shipped = ship(X)
    n = shipped.n
    tasks = [(s, min(s + per_task, n), scale, rows) for s in range(0, n, per_task)]
    return _run(shipped, _gram_task, tasks, _sum)


def dual_spectrum(X) -> np.ndarray:
    """Eigenvalues of ``XᵀX / n`` (cosine Vendi's dual form; rows already unit)."""
    from ._blockwise import dual_eigenvalues

    shipped = ship(X)
    C = gram(shipped, float(np.sqrt(1.0 / shipped.n)))
    return dual_eigenvalues(C)
