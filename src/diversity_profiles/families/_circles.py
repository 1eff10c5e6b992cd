"""Circles: the largest set of samples that are pairwise farther apart than τ.

Circles(τ) is the independence number of the graph G_τ that joins two samples when their
distance is at most τ (Xie et al., 2023). It is NP-hard, so a sweep brackets every threshold
between certified bounds — a greedy independent set below, a clique cover above — and CP-SAT
closes the remaining gaps when an exact answer is wanted.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import check_distance_matrix, check_parameter, one_of

METHODS = ("auto", "exact", "greedy")
#: Largest n for which method="auto" solves exactly (CP-SAT takes seconds up to here).
AUTO_EXACT_MAX_N = 250
#: Per-threshold CP-SAT budget, in seconds, of method="auto".
AUTO_TIME_LIMIT = 10.0
#: With method="auto", a whole sweep spends at most this long in CP-SAT (then bounds stay).
AUTO_SWEEP_BUDGET = 60.0


def load_cp_model() -> Any:
    # Lazy: importing ortools costs far more than the rest of the package.
    try:
        from ortools.sat.python import cp_model
    except ImportError as exc:
        raise ImportError(
            "circles(method='exact' or 'auto') needs OR-Tools for the exact maximum "
            "independent set. Install it with `pip install ortools`, or use method='greedy'."
        ) from exc
    return cp_model


def _adjacency(D: np.ndarray, tau: float) -> np.ndarray:
    A = D <= tau
    np.fill_diagonal(A, False)
    return A


def column_counts(A: np.ndarray) -> np.ndarray:
    """True entries per column of a boolean matrix (per row, for a symmetric adjacency).

    About 5x faster than ``np.count_nonzero(A, axis=0)`` (which widens every entry to
    intp): the bytes are summed as uint8 into int16 while no column can exceed it.

    >>> column_counts(np.array([[True, False], [True, True]])).tolist()
    [2, 1]
    """
    dtype = np.int16 if A.shape[0] < 2**15 else np.int64
    return A.view(np.uint8).sum(axis=0, dtype=dtype)


def min_degree_greedy(A: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Maximal independent set by repeatedly taking a vertex of minimum residual degree.

    Ties go to the lowest ``rank`` (a seeded permutation), so the result is deterministic.
    ``A`` is a symmetric adjacency without loops.
    """
    k = len(A)
    chosen = np.zeros(k, dtype=bool)
    # key = residual degree * k + rank orders candidates; taken or removed vertices get
    # key >= gone, far above any live key even after later degree decrements.
    key = column_counts(A).astype(np.int64) * k + rank
    gone = np.int64(2**62)
    while True:
        v = key.argmin()
        if key[v] >= gone // 2:
            return chosen
        if key[v] < k:
            # Residual degree-0 vertices would be taken one by one anyway; take them at once.
            free = key < k
            chosen |= free
            key[free] = gone
            continue
        removed = A[v] & (key < gone // 2)
        removed[v] = True
        chosen[v] = True
        key[removed] = gone
        key -= column_counts(A[removed]).astype(np.int64) * k


def dsatur_clique_cover(A: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Partition the vertices into cliques of G by DSATUR colouring of the complement.

    Each colour class is independent in the complement, i.e. a clique of G, and a clique
    holds at most one vertex of any independent set: the class count bounds Circles above.
    """
    k = len(A)
    H = ~A
    np.fill_diagonal(H, False)
    # blocked[c, u]: clique c holds a vertex not adjacent to u, so u cannot join it.
    blocked = np.zeros((k, k), dtype=bool)
    # DSATUR order: most blocked cliques first (the integer part), then fewest G-neighbours,
    # then seeded rank (the fraction). A float key lets one cheap add bump saturation.
    key = (column_counts(H).astype(np.int64) * k + (k - 1 - rank)) / (k * k + k)
    label = np.empty(k, dtype=np.int64)
    ncol = 0
    for _ in range(k):
        v = key.argmax()
        key[v] = -np.inf
        c = blocked[:ncol, v].argmin() if ncol else 0
        if ncol == 0 or blocked[c, v]:
            c = ncol
            ncol += 1
        label[v] = c
        newly = np.greater(H[v], blocked[c])
        blocked[c] |= newly
        np.add(key, newly.view(np.uint8), out=key, casting="unsafe")
    return label


def graph_at(D: np.ndarray) -> Callable[[float], tuple]:
    """Return ``at(τ) -> (A, component labels, component count, non-clique components)``."""
    from scipy.cluster.hierarchy import linkage  # lazy: slow to import
    from scipy.spatial.distance import squareform

    # Single-linkage merges at height <= τ are exactly the components of G_τ: one
    # O(n²) linkage serves every threshold. Its heights never decrease, so the merges
    # up to τ are a prefix; each points its two children at the merged node, and pointer
    # jumping finds every sample's root in log(depth) vectorised steps (fcluster, which
    # validates the whole linkage at every call, took a third of a replicate's sweep).
    n = D.shape[0]
    Z = linkage(squareform(D, checks=False), method="single")
    heights, children = Z[:, 2], Z[:, :2].astype(np.int64)
    merged = n + np.arange(n - 1, dtype=np.int64)

    def components(tau: float) -> np.ndarray:
        r = int(np.searchsorted(heights, tau, side="right"))
        parent = np.arange(2 * n - 1, dtype=np.int64)
        parent[children[:r, 0]] = merged[:r]
        parent[children[:r, 1]] = merged[:r]
        while True:
            up = parent[parent]
            if np.array_equal(up, parent):
                return np.unique(parent[:n], return_inverse=True)[1].ravel()
            parent = up

    def at(tau):
        A = _adjacency(D, tau)
        lab = components(tau)
        size = np.bincount(lab)
        deg = column_counts(A)  # A is symmetric: its column counts are the degrees
        hard = np.bincount(lab, weights=deg != size[lab] - 1, minlength=len(size)) > 0
        return A, lab, len(size), hard

    return at


def _hard_part(A, lab, hard, rank):
    """Vertices of the non-clique components, their subgraph, and their ranks 0..k-1."""
    idx = np.flatnonzero(hard[lab])
    sub = A if len(idx) == len(lab) else A[idx][:, idx]
    return idx, sub, np.argsort(np.argsort(rank[idx]))


def greedy_independent_set(A, lab, hard, rank) -> np.ndarray:
    """Greedy independent set; a clique component contributes its lowest-ranked vertex."""
    order = np.lexsort((rank, lab))
    out = np.zeros(len(lab), dtype=bool)
    out[order[np.r_[True, np.diff(lab[order]) != 0]]] = True
    idx, sub, sub_rank = _hard_part(A, lab, hard, rank)
    if len(idx):
        out[idx] = min_degree_greedy(sub, sub_rank)
    return out


def clique_cover(A, lab, hard, rank) -> np.ndarray:
    """Clique labels covering all vertices; a clique component is a single clique."""
    out = lab.astype(np.int64) + len(lab)
    idx, sub, sub_rank = _hard_part(A, lab, hard, rank)
    if len(idx):
        out[idx] = dsatur_clique_cover(sub, sub_rank)
    return out


def _cover_counts(cover, lab, ncomp):
    # Cliques are connected, so every clique lies inside one component.
    first = np.unique(cover, return_index=True)[1]
    return np.bincount(lab[first], minlength=ncomp)


def solve_component(cp_model, A, cover, hint, seed, limit) -> tuple:
    """Exact MIS of one component with CP-SAT; returns (set, lower, upper, optimal)."""
    k = len(A)
    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x{i}") for i in range(k)]
    # One at-most-one per cover clique is a tighter relaxation than its pairwise edges;
    # CP-SAT's presolve merges the remaining pairs into larger cliques itself.
    order = np.argsort(cover, kind="stable")
    for members in np.split(order, np.flatnonzero(np.diff(cover[order])) + 1):
        if len(members) > 1:
            model.add_at_most_one([x[i] for i in members.tolist()])
    iu, ju = np.nonzero(np.triu(A & (cover[:, None] != cover[None, :]), 1))
    for i, j in zip(iu.tolist(), ju.tolist(), strict=True):
        model.add_at_most_one(x[i], x[j])
    # Explicit bounds on the objective slowed the proofs down in measurements; hints do not.
    model.maximize(sum(x))
    for i, h in enumerate(hint.tolist()):
        model.add_hint(x[i], h)
    solver = cp_model.CpSolver()
    solver.parameters.random_seed = seed % (2**31)
    # One worker per solve, deterministic; thresholds run in parallel instead (measured:
    # CP-SAT's two-worker portfolio used 1.7x the CPU of one worker for the same proofs).
    solver.parameters.num_workers = 1
    # Generic cuts cost more than they prune here: clique constraints carry the bound.
    solver.parameters.cut_level = 0
    if limit is not None:
        solver.parameters.max_time_in_seconds = max(limit, 0.01)
    status = solver.solve(model)
    lo, hi = int(hint.sum()), k
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return hint, lo, hi, False
    found = np.array([solver.boolean_value(v) for v in x])
    value = int(found.sum())
    if status == cp_model.OPTIMAL:
        return found, value, value, True
    return found, value, min(hi, int(np.floor(solver.best_objective_bound + 1e-6))), False


def solve_threshold(cp_model, graph, cover, best, seed, time_limit) -> tuple:
    """Close the gap of every component at one threshold; returns (set, lo, hi, timed_out)."""
    A, lab, ncomp, _ = graph
    lo = np.bincount(lab[best], minlength=ncomp)
    hi = _cover_counts(cover, lab, ncomp)
    deadline = None if time_limit is None else time.monotonic() + time_limit
    timed_out = False
    for c in np.flatnonzero(lo < hi):
        members = np.flatnonzero(lab == c)
        limit = None if deadline is None else deadline - time.monotonic()
        found, lo_c, hi_c, optimal = solve_component(
            cp_model, A[members][:, members], cover[members], best[members], seed, limit
        )
        if lo_c >= lo[c]:
            best[members], lo[c] = found, lo_c
        hi[c] = min(hi_c, hi[c])
        timed_out |= not optimal
    return best, int(lo.sum()), int(hi.sum()), timed_out


def _solve_open(cp_model, at, grid, covers, sets, lower, upper, seed, limit, budget=None):
    """Solve, in place, the thresholds whose bounds differ; return those that timed out.

    Circles is nonincreasing in τ, so a value solved at τ_i bounds every threshold on either
    side. Bisection lets a plateau between two solved thresholds close without solving, and
    the midpoints of one bisection level are independent: they run in parallel threads
    (CP-SAT releases the GIL), one single-worker solve each.
    """
    from concurrent.futures import ThreadPoolExecutor

    end = None if budget is None else time.monotonic() + budget

    def solve(i, hint):
        left = limit
        if end is not None:  # no single solve may run past the sweep's budget
            left = max(0.1, min(np.inf if limit is None else limit, end - time.monotonic()))
        return solve_threshold(cp_model, at(grid[i]), covers[i], hint, seed, left)

    hits = []
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        intervals = [(0, len(grid) - 1)]
        while intervals:
            upper[:] = np.minimum.accumulate(upper)
            if end is not None and time.monotonic() > end:
                # The sweep's budget is spent: what is still open keeps its certified bounds.
                hits += [i for a, b in intervals for i in range(a, b + 1) if lower[i] < upper[i]]
                break
            picks, intervals_next = [], []
            for a, b in intervals:
                open_ = a + np.flatnonzero(lower[a : b + 1] < upper[a : b + 1])
                if len(open_):
                    i = int(open_[len(open_) // 2])
                    picks.append(i)
                    intervals_next += [(a, i - 1), (i + 1, b)]
            # Hints are copied up front: results are applied while later solves still run.
            results = pool.map(solve, picks, [sets[i].copy() for i in picks])
            for i, (found, lo, hi, timed_out) in zip(picks, results, strict=True):
                if lo > lower[i]:
                    # The set found at τ_i is independent at every smaller threshold too.
                    below = np.flatnonzero(lower[: i + 1] < lo)
                    sets[below], lower[below] = found, lo
                upper[i:] = np.minimum(upper[i:], hi)
                if timed_out:
                    hits.append(i)
            intervals = intervals_next
    return hits


def circles_sweep(
    D: np.ndarray,
    taus: np.ndarray,
    *,
    method: str = "auto",
    seed: int = 0,
    time_limit: float | None = None,
    remedy: str = "Pass a larger time_limit, or return_bounds=True to see the gap.",
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Certified (lower, upper) Circles bounds at every threshold; assumes checked input.

    ``remedy``: what the time-limit warning tells the caller to do (the arguments of
    :func:`circles` by default; :func:`profiles` has others). ``method="lower"`` is the
    greedy lower bound alone (resampling's replicates), with the trivial upper bound n."""
    n = D.shape[0]
    grid, inverse = np.unique(taus, return_inverse=True)
    m = len(grid)
    lower = np.ones(m, dtype=np.int64)
    upper = np.ones(m, dtype=np.int64)
    if n == 1:
        return lower[inverse], upper[inverse], True
    if not np.array_equal(D, D.T):
        D = (D + D.T) / 2  # validation tolerates round-off asymmetry; G_τ must be undirected
    off = D[~np.eye(n, dtype=bool)]
    lower[grid < off.min()] = upper[grid < off.min()] = n  # no edges at all
    # From the largest distance on, G_τ is one clique (answer 1): only the rest needs work.
    todo = np.flatnonzero((grid >= off.min()) & (grid < off.max()))
    exact = method == "exact" or (method == "auto" and n <= AUTO_EXACT_MAX_N)
    if method == "auto" and time_limit is None:
        time_limit = AUTO_TIME_LIMIT
    cp_model = load_cp_model() if exact else None
    at = graph_at(D)
    rank = np.random.default_rng(seed).permutation(n)
    sets = np.zeros((m, n), dtype=bool)
    covers = np.zeros((m, n), dtype=np.int64)

    # A clique cover stays a cover as τ grows: sweep upward, keeping per component the
    # cover with fewer cliques.
    prev = None
    for i in todo if method != "lower" else ():
        A, lab, ncomp, hard = at(grid[i])
        own = clique_cover(A, lab, hard, rank)
        if prev is not None:
            better = _cover_counts(prev, lab, ncomp) < _cover_counts(own, lab, ncomp)
            own = np.where(better[lab], prev, own + 2 * n)  # shifted: labels stay distinct
        covers[i] = prev = np.unique(own, return_inverse=True)[1]
        upper[i] = prev.max() + 1
    if method == "lower":
        upper[todo] = n
    # An independent set stays independent as τ shrinks: sweep downward likewise.
    prev = None
    for i in todo[::-1]:
        A, lab, ncomp, hard = at(grid[i])
        own = greedy_independent_set(A, lab, hard, rank)
        if prev is not None:
            kept = np.bincount(lab[prev], minlength=ncomp)
            own = np.where((kept > np.bincount(lab[own], minlength=ncomp))[lab], prev, own)
        sets[i] = prev = own
        lower[i] = own.sum()

    hits = []
    if exact:
        budget = AUTO_SWEEP_BUDGET if method == "auto" else None
        hits = _solve_open(cp_model, at, grid, covers, sets, lower, upper, seed, time_limit, budget)
    # Circles is nonincreasing in τ, so each bound also holds on the other side.
    upper = np.minimum.accumulate(upper)
    lower = np.maximum.accumulate(lower[::-1])[::-1]
    hits = sorted(i for i in hits if lower[i] < upper[i])
    if hits:
        where = ", ".join(f"{grid[i]:.4g}" for i in hits[:5])
        more = "" if len(hits) <= 5 else f" and {len(hits) - 5} more"
        warnings.warn(
            f"circles: CP-SAT reached the time limit ({time_limit:g} s per threshold, "
            f"{AUTO_SWEEP_BUDGET:g} s per sweep with method='auto') before proving optimality "
            f"at {len(hits)} of {m} threshold(s) (tau = {where}{more}). "
            f"Certified bounds are returned there; the value is the lower bound. {remedy}",
            UserWarning,
            stacklevel=3,
        )
    return lower[inverse], upper[inverse], bool(np.array_equal(lower, upper))


def circles(
    D,
    tau,
    *,
    method: str = "auto",
    return_bounds: bool = False,
    seed: int = 0,
    time_limit: float | None = None,
) -> int | np.ndarray | tuple[int, int] | tuple[np.ndarray, np.ndarray]:
    """Largest number of samples whose pairwise distances all exceed ``tau``.

    Circles(τ) counts the circles of radius τ/2 that fit, without overlap, around distinct
    samples: the independence number α(G_τ) of the graph joining samples at distance
    <= τ. It is nonincreasing in τ, n below the smallest distance (duplicates, at distance
    0, are always joined) and 1 from the largest distance on.

    Parameters
    ----------
    D : array_like, shape (n, n)
        Symmetric pairwise distances with a zero diagonal, n >= 1.
    tau : float or array_like of float
        Threshold(s) in [0, inf), in any order.
    method : {"auto", "exact", "greedy"}, default "auto"
        ``"exact"`` solves every threshold with OR-Tools CP-SAT (seconds for n <= 200);
        ``"greedy"`` gives certified bounds in milliseconds per threshold; ``"auto"`` is
        exact for n <= 250 with a 10 s ``time_limit`` per threshold, greedy above.
    return_bounds : bool, default False
        Return ``(lower, upper)`` instead of one value.
    seed : int, default 0
        Seeds the tie-breaking of the heuristics and CP-SAT; results are deterministic.
    time_limit : float, optional
        CP-SAT seconds per threshold; when they run out, a warning is issued and the
        bounds found so far are returned. Default none for ``"exact"``, 10 s for
        ``"auto"``; ignored by ``"greedy"``.

    Returns
    -------
    int or ndarray of int64
        The largest set size found (the exact value when solved): a Python int for a
        scalar ``tau``, otherwise an array shaped like ``tau``.
    (lower, upper) : tuple
        With ``return_bounds=True``: ``lower`` is the size of an actual set of samples
        pairwise farther apart than τ, ``upper`` a proven bound; equal where exact.

    Notes
    -----
    The reference code of #Circles [1]_ keeps each sample, in random order, unless a
    kept one lies within τ: a maximal independent set of G_τ, so a lower bound with no
    guarantee. The maximum itself is the maximum independent set problem, NP-hard.

    Here a min-degree greedy finds an independent set (lower bound) and DSATUR [2]_
    colouring of the complement graph partitions the samples into cliques of G_τ, each
    holding at most one sample of any independent set (upper bound). A set independent at
    τ stays so below τ and a cover stays a cover above τ, so the sweep keeps the best of
    each per connected component (α adds over components). Exact solving runs CP-SAT, one
    at-most-one constraint per cover clique, on components whose bounds still differ,
    visiting thresholds by bisection so that plateaus close without solving.

    References
    ----------
    .. [1] Xie et al. (2023). "#Circles". International Conference on Learning
       Representations (ICLR 2023).
    .. [2] Brélaz, D. (1979). New methods to color the vertices of a graph.
       Communications of the ACM 22(4), 251-256.

    Examples
    --------
    Four points on a line at 0, 1, 2 and 3; at τ = 2 the points 0 and 3 still count:

    >>> import numpy as np
    >>> x = np.arange(4.0)
    >>> D = np.abs(x[:, None] - x[None, :])
    >>> circles(D, 0.5)
    4
    >>> circles(D, [0.5, 1.0, 2.0, 3.0])
    array([4, 2, 2, 1])
    >>> circles(D, 2.0, method="greedy", return_bounds=True)
    (2, 2)
    """
    func = "circles"
    D = check_distance_matrix(D, func, min_size=1)
    taus, scalar = check_parameter(tau, "tau", func, low=0.0)
    one_of(method, "method", func, METHODS)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(
            f"The 'seed' argument of {func} must be a non-negative integer. Got {seed!r} instead."
        )
    if time_limit is not None and (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, int | float | np.integer | np.floating)
        or not 0 < time_limit < np.inf
    ):
        raise ValueError(
            f"The 'time_limit' argument of {func} must be None (no limit) or a positive, "
            f"finite number of seconds per threshold. Got {time_limit!r} instead."
        )
    lower, upper, exact = circles_sweep(
        D, taus, method=method, seed=int(seed), time_limit=time_limit
    )
    if not (exact or return_bounds) and method == "auto" and D.shape[0] > AUTO_EXACT_MAX_N:
        gap = lower < upper
        warnings.warn(
            f"circles: with n = {D.shape[0]} > {AUTO_EXACT_MAX_N}, method='auto' is not exact; "
            f"at {int(gap.sum())} of {gap.size} threshold(s) the value returned is a lower "
            f"bound (up to {float((upper / lower).max()):.3g}x below the proven upper bound). "
            f"Pass return_bounds=True to get both bounds, method='greedy' to accept them "
            f"silently, or method='exact' to solve (may be slow).",
            UserWarning,
            stacklevel=2,
        )
    shape = np.shape(tau)
    if scalar:
        return (int(lower[0]), int(upper[0])) if return_bounds else int(lower[0])
    if return_bounds:
        return lower.reshape(shape), upper.reshape(shape)
    return lower.reshape(shape)
