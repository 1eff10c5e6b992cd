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

import numpy as np

from ._validation import check_distance_matrix, check_parameter, one_of

METHODS = ("auto", "exact", "greedy")
#: Largest n for which method="auto" solves exactly (CP-SAT takes seconds up to here).
AUTO_EXACT_MAX_N = 250
#: Per-threshold CP-SAT budget, in seconds, of method="auto".
AUTO_TIME_LIMIT = 10.0


def _cp_model():
    # Lazy: importing ortools costs far more than the rest of the package.
    try:
        from ortools.sat.python import cp_model
    except ImportError as exc:  # pragma: no cover - ortools is a declared dependency
        raise ImportError(
            "circles(method='exact' or 'auto') needs OR-Tools for the exact maximum "
            "independent set. Install it with `pip install ortools`, or use method='greedy'."
        ) from exc
    return cp_model


def _adjacency(D: np.ndarray, tau: float) -> np.ndarray:
    A = D <= tau
    np.fill_diagonal(A, False)
    return A


def _min_degree_greedy(A: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Maximal independent set by repeatedly taking a vertex of minimum residual degree.

    Ties go to the lowest ``rank`` (a seeded permutation), so the result is deterministic.
    """
    k = len(A)
    alive = np.ones(k, dtype=bool)
    chosen = np.zeros(k, dtype=bool)
    deg = A.sum(axis=1)
    while alive.any():
        # Residual degree-0 vertices would be taken one by one anyway; take them at once.
        free = alive & (deg == 0)
        if free.any():
            chosen |= free
            alive &= ~free
            continue
        key = np.where(alive, deg * k + rank, np.iinfo(np.int64).max)
        v = int(np.argmin(key))
        removed = A[v] & alive
        removed[v] = True
        chosen[v] = True
        alive &= ~removed
        deg -= A[removed].sum(axis=0)
    return chosen


def _dsatur_clique_cover(A: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Partition the vertices into cliques of G by DSATUR colouring of the complement.

    Each colour class is independent in the complement, i.e. a clique of G, and a clique
    holds at most one vertex of any independent set: the class count bounds Circles above.
    """
    k = len(A)
    H = ~A
    np.fill_diagonal(H, False)
    # blocked[c, u]: clique c holds a vertex not adjacent to u, so u cannot join it.
    blocked = np.zeros((k, k), dtype=bool)
    big = np.int64(k) * k + k
    # DSATUR order: most blocked cliques first, then fewest G-neighbours, then seeded rank.
    key = H.sum(axis=1).astype(np.int64) * k + (k - 1 - rank)
    done = np.iinfo(np.int64).min
    label = np.empty(k, dtype=np.int64)
    ncol = 0
    for _ in range(k):
        v = int(np.argmax(key))
        key[v] = done
        c = int(np.argmin(blocked[:ncol, v])) if ncol else 0
        if ncol == 0 or blocked[c, v]:
            c = ncol
            ncol += 1
        label[v] = c
        newly = np.greater(H[v], blocked[c])
        blocked[c] |= newly
        np.add(key, big, out=key, where=newly)
    return label


def _structure(D, tau, Z, fcluster):
    """Adjacency, component labels and which components are not cliques."""
    A = _adjacency(D, tau)
    # Single-linkage merges at height <= τ are exactly the components of G_τ.
    lab = fcluster(Z, tau, criterion="distance") - 1
    size = np.bincount(lab)
    ncomp = len(size)
    deg = A.sum(axis=1)
    hard = np.bincount(lab, weights=deg != size[lab] - 1, minlength=ncomp) > 0
    return A, lab, ncomp, hard


def _own_bounds(A, lab, ncomp, hard, rank, which):
    """Greedy set (which="set") or clique-cover labels (which="cover") for one threshold."""
    # Clique components are solved outright: one vertex, one clique.
    inner = hard[lab]
    idx = np.flatnonzero(inner)
    sub = A[np.ix_(idx, idx)]
    sub_rank = np.argsort(np.argsort(rank[idx]))
    if which == "set":
        out = np.zeros(len(lab), dtype=bool)
        easy = np.flatnonzero(~inner)
        first = easy[np.unique(lab[easy], return_index=True)[1]] if len(easy) else easy
        out[first] = True
        out[idx] = _min_degree_greedy(sub, sub_rank)
    else:
        out = lab.astype(np.int64) + len(lab)  # a clique component is one clique
        out[idx] = _dsatur_clique_cover(sub, sub_rank)
    return out


def _cover_counts(cover, lab, ncomp):
    first = np.unique(cover, return_index=True)[1]
    return np.bincount(lab[first], minlength=ncomp)


def _solve_component(cp_model, A, cover, hint, lo, hi, seed, limit):
    """Exact MIS of one component with CP-SAT; returns (set, lower, upper, optimal)."""
    k = len(A)
    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x{i}") for i in range(k)]
    # At-most-one per cover clique is a much tighter relaxation than its pairwise edges.
    order = np.argsort(cover, kind="stable")
    bounds = np.flatnonzero(np.diff(cover[order])) + 1
    for members in np.split(order, bounds):
        if len(members) > 1:
            model.add_at_most_one([x[i] for i in members.tolist()])
    iu, ju = np.nonzero(np.triu(A & (cover[:, None] != cover[None, :]), 1))
    for i, j in zip(iu.tolist(), ju.tolist(), strict=True):
        model.add_bool_or([~x[i], ~x[j]])
    total = sum(x)
    model.add(total >= lo)
    model.add(total <= hi)
    model.maximize(total)
    for i, h in enumerate(hint.tolist()):
        model.add_hint(x[i], h)
    solver = cp_model.CpSolver()
    solver.parameters.random_seed = seed % (2**31)
    solver.parameters.num_workers = min(8, os.cpu_count() or 1)
    if limit is not None:
        solver.parameters.max_time_in_seconds = max(limit, 0.01)
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return hint, lo, hi, False
    found = np.array([solver.boolean_value(v) for v in x])
    value = int(found.sum())
    if status == cp_model.OPTIMAL:
        return found, value, value, True
    return found, max(value, lo), min(hi, int(np.floor(solver.best_objective_bound + 1e-6))), False


def _circles_sweep(
    D: np.ndarray,
    taus: np.ndarray,
    *,
    method: str = "auto",
    seed: int = 0,
    time_limit: float | None = None,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Certified (lower, upper) Circles bounds at every threshold; assumes checked input."""
    n = D.shape[0]
    grid, inverse = np.unique(taus, return_inverse=True)
    m = len(grid)
    lower = np.ones(m, dtype=np.int64)
    upper = np.ones(m, dtype=np.int64)
    off = D[~np.eye(n, dtype=bool)]
    if n == 1 or off.size == 0:
        return lower[inverse], upper[inverse], True
    exact = method == "exact" or (method == "auto" and n <= AUTO_EXACT_MAX_N)
    if method == "auto" and time_limit is None:
        time_limit = AUTO_TIME_LIMIT
    cp_model = _cp_model() if exact else None
    lower[grid < off.min()] = upper[grid < off.min()] = n  # no edges at all
    todo = np.flatnonzero((grid >= off.min()) & (grid < off.max()))  # tau >= max: one clique

    from scipy.cluster.hierarchy import fcluster, linkage  # lazy: slow to import
    from scipy.spatial.distance import squareform

    Z = linkage(squareform(D, checks=False), method="single")
    rank = np.random.default_rng(seed).permutation(n)

    # Clique covers stay covers as τ grows: sweep upward, keeping the better per component.
    covers = {}
    prev = None
    for i in todo:
        A, lab, ncomp, hard = _structure(D, grid[i], Z, fcluster)
        own = _own_bounds(A, lab, ncomp, hard, rank, "cover")
        if prev is not None:
            better = _cover_counts(prev, lab, ncomp) < _cover_counts(own, lab, ncomp)
            own = np.where(better[lab], prev, own + 2 * n)
        covers[i] = prev = np.unique(own, return_inverse=True)[1]

    # Independent sets stay independent as τ shrinks: sweep downward, solving on the way
    # so each exact optimum seeds the next, smaller threshold.
    hits = []
    best = None
    for i in todo[::-1]:
        A, lab, ncomp, hard = _structure(D, grid[i], Z, fcluster)
        own = _own_bounds(A, lab, ncomp, hard, rank, "set")
        if best is not None:
            better = np.bincount(lab[best], minlength=ncomp) > np.bincount(
                lab[own], minlength=ncomp
            )
            own = np.where(better[lab], best, own)
        best = own
        lo = np.bincount(lab[best], minlength=ncomp)
        hi = _cover_counts(covers[i], lab, ncomp)
        if exact:
            deadline = None if time_limit is None else time.monotonic() + time_limit
            timed_out = False
            for c in np.flatnonzero(lo < hi):
                members = np.flatnonzero(lab == c)
                limit = None if deadline is None else deadline - time.monotonic()
                found, lo[c], hi[c], optimal = _solve_component(
                    cp_model,
                    A[np.ix_(members, members)],
                    covers[i][members],
                    best[members],
                    int(lo[c]),
                    int(hi[c]),
                    seed,
                    limit,
                )
                best[members] = found
                timed_out |= not optimal
            if timed_out:
                hits.append(i)
        lower[i], upper[i] = lo.sum(), hi.sum()

    # Circles is nonincreasing in τ, so each bound also holds on the other side.
    upper = np.minimum.accumulate(upper)
    lower = np.maximum.accumulate(lower[::-1])[::-1]
    if hits:
        where = ", ".join(f"{grid[i]:.4g}" for i in sorted(hits)[:5])
        more = "" if len(hits) <= 5 else f" and {len(hits) - 5} more"
        warnings.warn(
            f"circles: CP-SAT reached the time limit of {time_limit:g} s per threshold before "
            f"proving optimality at {len(hits)} of {len(taus)} threshold(s) (tau = {where}"
            f"{more}). Certified bounds are returned there; the value is the lower bound. "
            f"Pass a larger time_limit, or return_bounds=True to see the gap.",
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
    """PLACEHOLDER"""
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
    lower, upper, _ = _circles_sweep(
        D, taus, method=method, seed=int(seed), time_limit=time_limit
    )
    if scalar:
        return (int(lower[0]), int(upper[0])) if return_bounds else int(lower[0])
    shape = np.shape(tau)
    if return_bounds:
        return lower.reshape(shape), upper.reshape(shape)
    return lower.reshape(shape)
