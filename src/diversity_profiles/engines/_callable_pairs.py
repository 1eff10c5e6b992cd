"""The n × n matrix of a user's callable over a set of any objects, blockwise.

Only the upper triangle is evaluated (``n (n - 1) / 2`` calls, plus ``n`` on the diagonal),
in row blocks of about equal numbers of pairs, so that the progress bar's ETA is even and
processes share the work evenly. Each block is checked as it arrives (NaN/inf, negative
distances: the first bad pair named with its objects); the diagonal is checked against
``f(x, x)`` (0 for a distance, 1 for a similarity unless normalised), and symmetry is
spot-checked on :data:`SYMMETRY_SAMPLE` × :data:`SYMMETRY_SAMPLE` pairs evaluated in the
other order (a vectorised callable's diagonal blocks are checked in full), since the
lower triangle itself is never evaluated.

A pairwise callable runs where the user asks: in this process, in ``n_jobs`` worker
processes, or, while a ``dask.distributed`` client is active, as row-block tasks on its
cluster (the objects sent to every worker once); :func:`evaluated_on` says which. A
vectorised callable runs its blocks in this process (numpy's own threads do the work) or,
with an active client, as the same row-block tasks on the cluster.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import (
    MATRIX_RTOL,
    PROGRESS_AFTER_S,
    Pairwise,
    available_memory_bytes,
    human_bytes,
    progress,
    short_repr,
)
from ._dask_engine import active_client

#: Row blocks of a pairwise callable per process (more: a smoother bar, more round trips).
BLOCKS_PER_JOB = 16
#: Entries of one block of a vectorised callable (2^20 float64 = 8 MiB): blocks this small
#: skip most of the lower triangle and stay in cache for the checks.
VECTOR_BLOCK_ENTRIES = 1 << 20
#: Of a vectorised callable's diagonal blocks, every this-many-th row is checked for symmetry.
SYMMETRY_STRIDE = 8
#: Objects on each side of the symmetry spot check.
SYMMETRY_SAMPLE = 32

# The set and callable of a worker process, given once when it starts.
_WORKER: dict[str, Any] = {}


def _take(objects: Any, idx: Sequence[int] | np.ndarray) -> Any:
    if isinstance(objects, np.ndarray):
        return objects[np.asarray(idx, dtype=np.intp)]
    return [objects[int(k)] for k in idx]


def _row_bounds(n: int, blocks: int) -> list[tuple[int, int]]:
    """Row ranges [a, b) of about equal numbers of upper-triangle pairs (row i has n-1-i)."""
    total = n * (n - 1) / 2
    bounds: list[tuple[int, int]] = []
    start, done = 0, 0.0
    for i in range(n):
        done += n - 1 - i
        if done >= total * (len(bounds) + 1) / blocks or i == n - 1:
            bounds.append((start, i + 1))
            start = i + 1
    return [b for b in bounds if b[1] > b[0]]


def _pairwise_rows(func, objects, start: int, stop: int) -> np.ndarray:
    """``func(x_i, x_j)`` for rows start <= i < stop and columns j > i (row-major, ragged
    rows packed flat)."""
    n = len(objects)
    out = np.empty(sum(n - 1 - i for i in range(start, stop)), dtype=np.float64)
    at = 0
    for i in range(start, stop):
        a = objects[i]
        row = [func(a, objects[j]) for j in range(i + 1, n)]
        out[at : at + len(row)] = row
        at += len(row)
    return out


def _worker_init(func, objects) -> None:
    _WORKER["func"], _WORKER["objects"] = func, objects


def _worker_rows(bounds: tuple[int, int]) -> np.ndarray:
    return _pairwise_rows(_WORKER["func"], _WORKER["objects"], *bounds)


def _context(func, n_jobs: int, where: str):
    """The multiprocessing context for ``n_jobs`` processes, or None to run here."""
    if n_jobs == 1:
        return None
    import multiprocessing  # only when processes are asked for: import stays light
    import pickle

    # Forked workers inherit the callable and objects without pickling (lambdas, notebook
    # functions); macOS and Windows spawn, which needs both to pickle.
    if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin":
        return multiprocessing.get_context("fork")
    try:
        pickle.dumps(func)
    except Exception as exc:
        warnings.warn(
            f"{where}: the callable cannot be sent to worker processes ({exc}); it runs in "
            f"this process. Define it at module level (not a lambda) for n_jobs > 1.",
            RuntimeWarning,
            stacklevel=4,
        )
        return None
    return multiprocessing.get_context()


def evaluated_on(pw: Pairwise) -> str:
    """Where :func:`callable_matrix` evaluates ``pw`` now, as a tree records it.

    >>> from diversity_profiles.core import Pairwise
    >>> evaluated_on(Pairwise(abs)), evaluated_on(Pairwise(abs, n_jobs=2))
    ('this process', '2 processes')
    """
    client = active_client()
    if client is not None:
        return f"dask.distributed cluster ({client.scheduler.address}), row-block tasks"
    if pw.vectorised:
        return "this process (vectorised blocks)"
    jobs = (os.cpu_count() or 1) if pw.n_jobs == -1 else pw.n_jobs
    return "this process" if jobs == 1 else f"{jobs} processes"


def _cluster_rows(func, objects, start: int, stop: int) -> np.ndarray:
    return _pairwise_rows(func, objects, start, stop)


def _vectorised_rows(func, objects, start: int, stop: int) -> Any:
    """Rows [start, stop) of a vectorised callable against columns start..n."""
    return func(_take(objects, range(start, stop)), _take(objects, range(start, len(objects))))


def _on_cluster(client, pw: Pairwise, objects, bounds, where: str, task=_cluster_rows):
    """(bounds, block) of each row block, computed as ``task`` on the client's workers (in
    order, so the progress bar moves evenly), or None when ``pw.func`` cannot be sent."""
    import cloudpickle  # a dependency of dask: what the client sends functions with

    try:
        cloudpickle.dumps(pw.func)
    except Exception as exc:
        warnings.warn(
            f"{where}: the callable cannot be sent to the dask cluster ({exc}); it runs in "
            f"this process.",
            RuntimeWarning,
            stacklevel=5,
        )
        return None
    # Wrapped in a list: one future for the whole set (a bare list scatters per element).
    [handle] = client.scatter([objects], broadcast=True, hash=False)
    futures = [
        client.submit(task, pw.func, handle, a, b, pure=False, priority=-k)
        for k, (a, b) in enumerate(bounds)
    ]
    return ((b, f.result()) for b, f in zip(bounds, futures, strict=True))


def check_callable_memory(n: int, *, arg: str, where: str, func: str, copies: int) -> None:
    """Refuse before a callable's n × n float64 matrices would exceed the memory."""
    need = float(n) * n * 8 * copies
    have = available_memory_bytes()
    if need > 0.8 * have:
        raise MemoryError(
            f"The {arg!r} callable of {func} would fill {copies} {n} × {n} float64 matrices "
            f"for {where} (about {human_bytes(need)}), but only {human_bytes(have)} is "
            f"available. Pass fewer objects (a random subsample of the set)."
        )


def _pair_error(kind: str, arg: str, func: str, where: str, i: int, j: int, objects, msg: str):
    return ValueError(
        f"The {arg!r} {kind} callable of {func} {msg} for {where}, pair ({i}, {j}): objects "
        f"{short_repr(objects[i])} and {short_repr(objects[j])}."
    )


def _check_values(
    values: np.ndarray, pairs, kind: str, arg: str, func: str, where: str, objects
) -> None:
    """NaN/inf anywhere, negative distances: the first such pair named. ``pairs(k)`` maps
    a flat index of ``values`` to its (i, j). One pass (the minimum and maximum) when all
    is well."""
    if values.size == 0:
        return
    with np.errstate(invalid="ignore"):
        low, high = float(values.min()), float(values.max())
    if np.isfinite(low) and np.isfinite(high) and (low >= 0 or kind != "distance"):
        return
    bad = ~np.isfinite(values)
    if bad.any():
        k = int(np.argmax(bad.ravel()))
        i, j = pairs(k)
        what = "NaN" if np.isnan(values.flat[k]) else repr(float(values.flat[k]))
        raise _pair_error(kind, arg, func, where, i, j, objects, f"returned {what}")
    k = int(np.argmax((values < 0).ravel()))
    i, j = pairs(k)
    raise _pair_error(
        kind,
        arg,
        func,
        where,
        i,
        j,
        objects,
        f"returned the negative distance {float(values.flat[k])!r}",
    )


def _as_block(value, rows: int, cols: int, arg: str, func: str) -> np.ndarray:
    try:
        block = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"The vectorised {arg!r} callable of {func} must return a {rows} × {cols} matrix "
            f"of numbers for blocks of {rows} and {cols} objects; got {type(value).__name__} "
            f"({exc})."
        ) from None
    if block.shape != (rows, cols):
        raise ValueError(
            f"The vectorised {arg!r} callable of {func} must return a {rows} × {cols} matrix "
            f"for blocks of {rows} and {cols} objects; got shape {block.shape}. Declare a "
            f"callable f(a, b) -> float with dp.pairwise(f) (vectorised=False)."
        )
    return block


def _evaluate(pw: Pairwise, objects, idx_a, idx_b, arg: str, func: str) -> np.ndarray:
    """``f`` on every pair of ``idx_a`` × ``idx_b`` (a small block)."""
    if pw.vectorised:
        block = pw.func(_take(objects, idx_a), _take(objects, idx_b))
        return _as_block(block, len(idx_a), len(idx_b), arg, func)
    return np.array(
        [[pw.func(objects[a], objects[b]) for b in idx_b] for a in idx_a], dtype=np.float64
    ).reshape(len(idx_a), len(idx_b))


def callable_matrix(
    objects: Any,
    pw: Pairwise,
    *,
    kind: str,
    arg: str,
    func: str,
    where: str,
    seed: int = 0,
) -> np.ndarray:
    """The n × n matrix ``M[i, j] = f(x_i, x_j)`` of a distance or similarity callable.

    Parameters
    ----------
    objects : sequence
        The set's objects (a list, or a numpy array whose slices a vectorised callable
        gets as blocks).
    pw : Pairwise
        The callable and how to run it (:func:`diversity_profiles.pairwise`).
    kind : {"distance", "similarity"}
        A distance must be non-negative with ``f(x, x) = 0``; a similarity must have
        ``f(x, x) = 1`` unless ``pw.normalize``, which divides by the diagonal.
    arg, func, where : str
        The argument, the public function and the set, named in errors.
    seed : int
        Seed of the symmetry spot check's pairs.

    Raises
    ------
    ValueError
        A NaN/inf result, a negative distance, a self-distance other than 0, a
        self-similarity other than 1 (or not positive, with ``normalize``), an asymmetric
        pair: each naming the first such pair and its objects.
    MemoryError
        When the matrix (and the copies the checks hold) would not fit in memory.

    Examples
    --------
    >>> from diversity_profiles.core import Pairwise
    >>> M = callable_matrix(["ab", "abc", "x"], Pairwise(lambda a, b: abs(len(a) - len(b))),
    ...                     kind="distance", arg="distance", func="profiles", where="set 'a'")
    >>> M.tolist()
    [[0.0, 1.0, 1.0], [1.0, 0.0, 2.0], [1.0, 2.0, 0.0]]
    """
    n = len(objects)
    check_callable_memory(n, arg=arg, where=where, func=func, copies=3)
    M = np.empty((n, n), dtype=np.float64)
    if pw.vectorised:  # the diagonal blocks hold f(x, x)
        _fill_vectorised(M, objects, pw, kind, arg, func, where)
        diag = np.diagonal(M).copy()
    else:
        diag = np.array([pw.func(x, x) for x in objects], dtype=np.float64)
        _check_values(diag, lambda k: (k, k), kind, arg, func, where, objects)
        _fill_pairwise(M, objects, pw, kind, arg, func, where)
    np.fill_diagonal(M, 0.0)
    _check_diagonal(diag, M, pw, kind, arg, func, where, objects)
    if kind == "similarity":
        np.fill_diagonal(M, 1.0)
    if kind == "similarity" and pw.normalize:
        s = np.sqrt(diag)
        M /= s[:, None]
        M /= s[None, :]
        np.fill_diagonal(M, 1.0)
    _spot_check_symmetry(M, objects, pw, arg, func, where, seed, diag if pw.normalize else None)
    return M


def _check_diagonal(diag, M, pw: Pairwise, kind, arg, func, where, objects) -> None:
    if kind == "distance":  # M's diagonal is 0 here: its extremes are the pairs'
        scale = max(float(M.max()), -float(M.min()), 1.0)
        off = np.abs(diag)
        if (off > MATRIX_RTOL * scale).any():
            i = int(np.argmax(off))
            raise ValueError(
                f"The {arg!r} distance callable of {func} must give 0 for an object and "
                f"itself; for {where} it gives {float(diag[i])!r} for object {i}, "
                f"{short_repr(objects[i])}."
            )
        return
    if pw.normalize:
        if (diag <= 0).any():
            i = int(np.argmax(diag <= 0))
            raise ValueError(
                f"The {arg!r} similarity callable of {func} with normalize=True needs a "
                f"positive self-similarity; for {where} it gives {float(diag[i])!r} for "
                f"object {i}, {short_repr(objects[i])}."
            )
        return
    off = np.abs(diag - 1.0)
    if (off > MATRIX_RTOL).any():
        i = int(np.argmax(off))
        raise ValueError(
            f"The {arg!r} similarity callable of {func} must give 1 for an object and itself "
            f"(each sample fully similar to itself); for {where} it gives {float(diag[i])!r} "
            f"for object {i}, {short_repr(objects[i])}. Pass dp.pairwise(f, normalize=True) "
            f"to divide by sqrt(f(a, a) f(b, b)), as vendi-score's normalize=True does."
        )


def _show(pw: Pairwise, elapsed: float, share: float) -> bool:
    if pw.progress is not None:
        return pw.progress
    return share > 0 and elapsed / share * (1 - share) > PROGRESS_AFTER_S


def _fill_pairwise(M, objects, pw: Pairwise, kind, arg, func, where) -> None:
    n = M.shape[0]
    jobs = (os.cpu_count() or 1) if pw.n_jobs == -1 else pw.n_jobs
    bounds = _row_bounds(n, BLOCKS_PER_JOB * jobs) if n > 1 else []
    total = n * (n - 1) / 2 or 1

    def place(block: np.ndarray, start: int, stop: int) -> None:
        at = 0
        offsets = []
        for i in range(start, stop):
            offsets.append(at)
            M[i, i + 1 :] = block[at : at + n - 1 - i]
            at += n - 1 - i
        starts = np.array(offsets)

        def pairs(k: int) -> tuple[int, int]:
            r = int(np.searchsorted(starts, k, side="right") - 1)
            return start + r, start + r + 1 + k - int(starts[r])

        _check_values(block, pairs, kind, arg, func, where, objects)

    client = active_client() if bounds else None
    if client is not None:
        workers = len(client.scheduler_info().get("workers", {}))
        bounds = _row_bounds(n, BLOCKS_PER_JOB * max(workers, 1)) if n > 1 else []
        blocks = _on_cluster(client, pw, objects, bounds, f"{func} ({arg})")
        if blocks is not None:
            desc = f"{arg} pairs of {where} (dask, {workers} workers)"
            _run_blocks(blocks, bounds, pw, place, total, desc)
            _mirror(M, bounds)
            return
    ctx = _context(pw.func, jobs, f"{func} ({arg})") if bounds else None
    if ctx is None:
        _run_blocks(
            ((b, _pairwise_rows(pw.func, objects, *b)) for b in bounds),
            bounds,
            pw,
            place,
            total,
            f"{arg} pairs of {where}",
        )
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(
            jobs, mp_context=ctx, initializer=_worker_init, initargs=(pw.func, objects)
        ) as pool:
            results = pool.map(_worker_rows, bounds)
            _run_blocks(
                zip(bounds, results, strict=True),
                bounds,
                pw,
                place,
                total,
                f"{arg} pairs of {where} ({jobs} processes)",
            )
    _mirror(M, bounds)


def _mirror(M: np.ndarray, bounds: list[tuple[int, int]]) -> None:
    """Copy the upper triangle (rows [a, b) filled from column a on) to the lower, block by
    block: no n² index arrays."""
    for a, b in bounds:
        M[b:, a:b] = M[a:b, b:].T
        square = M[a:b, a:b]
        lower = np.tril_indices(b - a, k=-1)
        square[lower] = square.T[lower]


def _run_blocks(results, bounds, pw: Pairwise, place, total: float, desc: str) -> None:
    """Place each block as it arrives; after the first, show a bar if the rest is slow."""
    it = iter(results)
    start = time.perf_counter()
    first = next(it, None)
    if first is None:
        return
    (a, b), block = first
    place(block, a, b)
    share = block.size / total
    show = _show(pw, time.perf_counter() - start, share)
    for (a, b), block in progress(it, total=len(bounds) - 1, desc=desc, enabled=show, unit="block"):
        place(block, a, b)


def _fill_vectorised(M, objects, pw: Pairwise, kind, arg, func, where) -> None:
    n = M.shape[0]
    rows = int(min(n, max(1, VECTOR_BLOCK_ENTRIES // max(n, 1))))
    bounds = [(a, min(a + rows, n)) for a in range(0, n, rows)]
    total = n * (n + 1) / 2

    desc = f"{arg} blocks of {where}"
    client = active_client() if n > 1 else None
    # On a cluster the blocks are tasks on the workers; each returns its block as computed
    # and is checked here, as in this process.
    sent = None
    if client is not None:
        sent = _on_cluster(client, pw, objects, bounds, f"{func} ({arg})", _vectorised_rows)
        if sent is not None:
            desc += f" (dask, {len(client.scheduler_info().get('workers', {}))} workers)"

    def blocks():
        computed = sent if sent is not None else (
            ((a, b), _vectorised_rows(pw.func, objects, a, b)) for a, b in bounds
        )
        for (a, b), block in computed:
            yield (a, b), _as_block(block, b - a, n - a, arg, func)

    def place(block: np.ndarray, a: int, b: int) -> None:
        def pairs(k: int) -> tuple[int, int]:
            r, c = divmod(k, n - a)
            return a + r, a + c

        _check_values(block, pairs, kind, arg, func, where, objects)
        # the diagonal block holds both orders: every SYMMETRY_STRIDE-th row checked
        _check_symmetric_block(block[:, : b - a], a, arg, func, where, objects)
        M[a:b, a:] = block

    _run_blocks(blocks(), bounds, pw, place, total, desc)
    _mirror(M, bounds)


def _asymmetric(arg, func, where, objects, i, j, mij, mji) -> ValueError:
    return ValueError(
        f"The {arg!r} callable of {func} must be symmetric, f(a, b) == f(b, a); for {where} "
        f"f(x_{i}, x_{j}) = {mij!r} but f(x_{j}, x_{i}) = {mji!r}, objects "
        f"{short_repr(objects[i])} and {short_repr(objects[j])}. Symmetrise it, e.g. "
        f"lambda a, b: (f(a, b) + f(b, a)) / 2."
    )


def _check_symmetric_block(square: np.ndarray, a: int, arg, func, where, objects) -> None:
    """Rows ``::SYMMETRY_STRIDE`` of a (finite) square block against its columns."""
    rows = np.arange(0, square.shape[0], SYMMETRY_STRIDE)
    strip, mirrored = square[rows], square[:, rows].T
    scale = max(float(np.abs(square[rows]).max(initial=0.0)), 1.0)
    asym = np.abs(strip - mirrored)
    if asym.size and float(asym.max()) > MATRIX_RTOL * scale:
        r, c = np.unravel_index(int(np.argmax(asym)), asym.shape)
        i, j = int(rows[r]), int(c)
        i, j = (i, j) if i < j else (j, i)
        raise _asymmetric(
            arg, func, where, objects, a + i, a + j, float(square[i, j]), float(square[j, i])
        )


def _spot_check_symmetry(M, objects, pw: Pairwise, arg, func, where, seed, diag) -> None:
    """Pairs (i, j), i > j, of a random sample evaluated as ``f(x_i, x_j)`` (the upper
    triangle holds ``f(x_j, x_i)``)."""
    n = M.shape[0]
    if n < 2:
        return
    rng = np.random.default_rng(seed)
    m = min(n, SYMMETRY_SAMPLE)
    idx = np.sort(rng.choice(n, size=m, replace=False))
    rows, cols = idx[m // 2 :], idx[: m // 2]  # every row index above every column index
    if rows.size == 0 or cols.size == 0:
        return
    lower = _evaluate(pw, objects, rows, cols, arg, func)
    if diag is not None:  # normalised like the matrix
        lower = lower / np.sqrt(diag[rows])[:, None] / np.sqrt(diag[cols])[None, :]
    upper = M[np.ix_(cols, rows)].T  # f(x_j, x_i) as computed
    scale = max(float(M.max()), -float(M.min()), 1.0)
    with np.errstate(invalid="ignore"):
        gap = np.abs(np.where(np.isfinite(lower), lower, np.inf) - upper)
    if (gap > MATRIX_RTOL * scale).any():
        r, c = np.unravel_index(int(np.argmax(gap > MATRIX_RTOL * scale)), gap.shape)
        i, j = int(cols[c]), int(rows[r])
        raise _asymmetric(arg, func, where, objects, i, j, float(upper[r, c]), float(lower[r, c]))
