"""Circles at large n: certified brackets from sparse τ-neighbourhood graphs.

One pass over float32 distance tiles keeps the pairs within the largest threshold (pairs
whose float32 distance is too close to a threshold to be trusted are recomputed in
float64); each threshold's graph is a prefix of those pairs sorted by distance. A
degree-ordered greedy independent set bounds Circles below (with the samples as witness),
a greedy clique cover grown inside each sample's neighbourhood bounds it above, both are
carried across thresholds, and components small enough are solved exactly by CP-SAT.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ._blockwise import DEFAULT_MEMORY, TILE
from ._validation import check_parameter, one_of
from .distances import _block, _refine_close_pairs, prepare_embeddings

__all__ = ["CirclesBounds", "circles_large"]

FUNC = "circles_large"
#: Cliques of the cover stop growing here (cost per clique is O(size · degree)).
CLIQUE_CAP = 1024
#: Components up to this size also get a DSATUR cover (dense, O(size²) memory and time).
DENSE_MAX = 2000
_U32 = 2.0**-24  # unit round-off of float32


@dataclass
class CirclesBounds:
    """Certified bounds per threshold (arrays in the order of the given ``tau``).

    ``lower[k]`` is the size of ``witness[k]``, a set of samples pairwise farther apart
    than ``tau[k]``; ``upper[k]`` is a proven upper bound; ``exact`` where they meet.
    Thresholds above ``tau_cap`` (when the pairs did not fit in memory) keep ``lower = 1``
    and the upper bound carried from below. ``kind[k]`` is ``"exact"``, ``"certified"``
    or ``"skipped"`` (time budget spent before τ_k was reached: its bounds are only the
    carried ones, still valid; the caller may supply better cheap ones).
    """

    tau: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    exact: np.ndarray
    witness: list[np.ndarray] = field(default_factory=list)
    n_pairs: int = 0
    tau_cap: float = np.inf
    seconds: dict = field(default_factory=dict)
    kind: list[str] = field(default_factory=list)


def circles_large(
    X: ArrayLike,
    tau: ArrayLike,
    *,
    distance: str = "euclidean",
    exact_max_component: int = 200,
    time_limit: float = 1.0,
    seed: int = 0,
    memory_limit: float | None = None,
    device: str | None = None,
    time_budget: float | None = None,
) -> CirclesBounds:
    """Circles(τ) brackets for the rows of ``X`` at every ``τ``, for large n.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Embeddings; identical rows are at distance 0 (always joined), as in ``circles``.
    tau : float or array_like of float
        Thresholds in [0, inf).
    distance : {"euclidean", "cosine"}
    exact_max_component : int, default 200
        Components up to this size whose bounds differ are solved by CP-SAT (0: never).
    time_limit : float
        CP-SAT seconds per component; on time-out the bounds found so far stay.
    memory_limit : float, optional
        Bytes for the kept pairs (16 per pair; default 4 GiB).
    device : str, optional
        A torch device (``"cuda:0"``, ``"cpu"``) for the float32 distance tiles; the
        near-threshold pairs are still recomputed here, in float64 numpy.
    time_budget : float, optional
        Seconds for the call. Thresholds are bounded in increasing order; those not
        reached when the budget is spent (all of them when the pair pass itself overruns)
        are ``"skipped"``: they keep only carried bounds (the clique cover from below or
        n, the independent set from above or one sample), which still hold.

    Returns
    -------
    CirclesBounds

    Notes
    -----
    Circles(τ) is the independence number of G_τ (samples joined at distance ≤ τ). An
    independent set of G_τ′ is independent in every G_τ with τ < τ′, so lower bounds flow
    to smaller τ; a partition into cliques of G_τ stays one for τ′ > τ, and a clique holds
    at most one sample of an independent set, so upper bounds flow to larger τ. Both are
    kept per connected component (α adds over components). Edge decisions are made in
    float64: a pair is recomputed from its difference when its float32 distance lies
    within the float32 GEMM error bound (``4·d·u·(|x|²+|y|²)`` in squared distance,
    u = 2⁻²⁴) of a threshold.

    Examples
    --------
    Four points on a line at 0, 1, 2, 3 (compare ``circles``):

    >>> r = circles_large([[0.0], [1.0], [2.0], [3.0]], [0.5, 1.0, 2.0, 3.0])
    >>> r.lower.tolist(), r.upper.tolist(), r.exact.all()
    ([4, 2, 2, 1], [4, 2, 2, 1], np.True_)
    """
    one_of(distance, "distance", FUNC, ("euclidean", "cosine"))
    X = prepare_embeddings(X, distance, FUNC)
    taus, _ = check_parameter(tau, "tau", FUNC, low=0.0)
    grid, inverse = np.unique(taus, return_inverse=True)
    limit = DEFAULT_MEMORY if memory_limit is None else float(memory_limit)
    t0 = time.perf_counter()
    deadline = None if time_budget is None else t0 + float(time_budget)
    n = X.shape[0]
    pairs = _pairs_within(X, distance, grid, int(limit // 16), device, deadline)
    t1 = time.perf_counter()
    if pairs is None:  # the budget ran out in the pair pass: nothing is bounded
        lo, hi = np.ones(len(grid), dtype=np.int64), np.full(len(grid), n, dtype=np.int64)
        sets = np.zeros((len(grid), n), dtype=bool)
        sets[:, 0] = True
        done = over_cap = np.zeros(len(grid), dtype=bool)
        n_pairs, cap = 0, np.nan
    else:
        i, j, d, cap = pairs
        lo, hi, sets, done = _sweep(n, i, j, d, grid, cap, exact_max_component, time_limit,
                                    seed, deadline)  # fmt: skip
        n_pairs, over_cap = len(d), grid > cap
    t2 = time.perf_counter()
    kind = np.where(lo == hi, "exact", np.where(done | over_cap, "certified", "skipped"))
    return CirclesBounds(
        tau=taus, lower=lo[inverse], upper=hi[inverse], exact=(lo == hi)[inverse],
        witness=[np.flatnonzero(sets[k]) for k in inverse], n_pairs=n_pairs, tau_cap=cap,
        seconds={"pairs": t1 - t0, "bounds": t2 - t1}, kind=[str(x) for x in kind[inverse]],
    )  # fmt: skip


def _pairs_within(X, distance, grid, max_pairs, device=None, deadline=None):
    """Pairs i < j with distance ≤ the largest threshold that fits: (i, j, d sorted, cap);
    None when ``deadline`` passes before the last row of tiles."""
    if device is None:
        candidates = _host_candidates(X, distance)
    else:  # the tiles on a torch device; near-threshold pairs still settled here in float64
        from .torch_engine import pair_candidates

        candidates = pair_candidates(X, distance, device, TILE, 4.0 * X.shape[1] * _U32)
    n = X.shape[0]
    cap = float(grid[-1])
    chunks, count = [], 0
    for a in range(0, n, TILE):
        if deadline is not None and a and time.perf_counter() > deadline:
            return None
        for b in range(a, n, TILE):
            r, c, dv, bv = candidates(a, b, cap)
            near = _near_threshold(dv, bv, grid)
            if near.any():
                dv[near] = _exact(X, a + r[near], b + c[near], distance)
            inside = dv <= cap
            chunks.append((a + r[inside], b + c[inside], dv[inside]))
            count += int(inside.sum())
            while count > max_pairs and len(grid) > 1:  # keep what fits: lower the cap
                grid = grid[:-1]
                cap = float(grid[-1])
                chunks = [(ci[dd <= cap], cj[dd <= cap], dd[dd <= cap]) for ci, cj, dd in chunks]
                count = sum(len(dd) for _, _, dd in chunks)
            if count > max_pairs:
                raise MemoryError(
                    f"{FUNC}: the pairs within the smallest threshold {cap:.4g} do not fit in "
                    f"memory_limit ({max_pairs} pairs). Raise memory_limit or use smaller tau."
                )
    i = np.concatenate([c[0] for c in chunks]).astype(np.int32)
    j = np.concatenate([c[1] for c in chunks]).astype(np.int32)
    d = np.concatenate([c[2] for c in chunks])
    order = np.argsort(d, kind="stable")
    return i[order], j[order], d[order], cap


def _host_candidates(X, distance):
    """``candidates(a, b, cap)``: tile (a, b)'s pairs (r < c on the diagonal) whose float32
    distance may be ≤ cap, with that distance (float64, close pairs refined) and its error
    bound."""
    X32 = X.astype(np.float32)
    sq = np.einsum("ij,ij->i", X, X)
    err = 4.0 * X.shape[1] * _U32  # float32 GEMM error bound, relative to |x|² + |y|²

    def candidates(a, b, cap):
        A, B = X32[a : a + TILE], X32[b : b + TILE]
        D, close = _block(A, B, distance)
        D = D.astype(np.float64)
        _refine_close_pairs(D, X[a : a + TILE], X[b : b + TILE], distance, close)
        bound = err * (sq[a : a + TILE, None] + sq[None, b : b + TILE])
        if distance == "euclidean":  # the bound is on D², move it to D near τ
            bound = bound / np.maximum(D + np.sqrt(np.maximum(D * D - bound, 0.0)), 1e-300)
        if close is not None:
            bound[close] = 0.0  # already recomputed in float64
        r, c = np.nonzero(D <= cap + bound)
        if a == b:
            keep = r < c
            r, c = r[keep], c[keep]
        return r, c, D[r, c], bound[r, c]

    return candidates


def _near_threshold(d, bound, grid):
    """Pairs whose distance is within its error bound of some threshold."""
    g = np.r_[-np.inf, grid, np.inf]
    k = np.searchsorted(grid, d)  # grid[k-1] < d <= grid[k]: neighbours g[k], g[k+1]
    return np.minimum(np.abs(d - g[k]), np.abs(g[k + 1] - d)) <= bound


def _exact(X, r, c, distance):
    diff = X[r] - X[c]
    s = np.einsum("ij,ij->i", diff, diff)
    return s / 2.0 if distance == "cosine" else np.sqrt(s)


def _graph(n, i, j):
    from scipy.sparse import coo_matrix

    A = coo_matrix((np.ones(2 * len(i), dtype=np.int8), (np.r_[i, j], np.r_[j, i])), (n, n))
    A = A.tocsr()
    A.sum_duplicates()
    return A


def _greedy_set(A, rank):
    """Min-degree greedy independent set: repeatedly take a vertex of least residual degree
    (ties by rank) and delete it with its neighbours; isolated vertices are taken at once.

    Measured on dense graphs (``circles``): 0.83 of the optimum in the worst case, 0.97 on
    average, against 0.71 for a random order.
    """
    n = A.shape[0]
    ptr, ind = A.indptr, A.indices
    big = np.int64(n + 1)
    # key = residual degree · (n + 1) + rank; removed vertices get a key above every live one.
    key = np.diff(ptr).astype(np.int64) * big + rank
    gone = np.int64(2**62)
    chosen = np.zeros(n, dtype=bool)
    while True:
        v = int(key.argmin())
        if key[v] >= gone:
            return chosen
        if key[v] < big:  # residual degree 0: every such vertex can be taken
            free = key < big
            chosen |= free
            key[free] = gone
            continue
        chosen[v] = True
        nb = ind[ptr[v] : ptr[v + 1]]
        removed = np.r_[v, nb[key[nb] < gone]]
        key[removed] = gone
        touched = np.concatenate([ind[ptr[u] : ptr[u + 1]] for u in removed])
        touched = touched[key[touched] < gone]  # live neighbours of deleted vertices
        np.subtract.at(key, touched, big)  # each loses one degree per deleted neighbour


def _clique_cover(A, rank):
    """Clique labels: from each uncovered vertex (increasing degree), a clique grown among
    its uncovered neighbours, up to CLIQUE_CAP. Each step adds, of (at most) 32 candidates,
    the one adjacent to most other candidates, and keeps only its neighbours."""
    n = A.shape[0]
    deg = np.diff(A.indptr)
    ptr, ind = A.indptr, A.indices
    label = np.full(n, -1, dtype=np.int64)
    mark = np.zeros(n, dtype=bool)
    k = 0
    for v in np.lexsort((rank, deg)):
        if label[v] >= 0:
            continue
        label[v] = k
        cand = ind[ptr[v] : ptr[v + 1]]
        cand = cand[label[cand] < 0]
        size = 1
        while len(cand) and size < CLIQUE_CAP:
            if len(cand) > 1:
                mark[cand] = True
                score = [np.count_nonzero(mark[ind[ptr[u] : ptr[u + 1]]]) for u in cand[:32]]
                mark[cand] = False
                u = cand[int(np.argmax(score))]
            else:
                u = cand[0]
            label[u] = k
            size += 1
            nb = ind[ptr[u] : ptr[u + 1]]
            mark[nb] = True
            cand = cand[mark[cand] & (cand != u)]
            mark[nb] = False
        k += 1
    return label


def _dense_covers(A, lab, ncomp, cover, rank):
    """Per component of at most DENSE_MAX vertices, DSATUR's cover when it has fewer cliques
    (measured on dense graphs: 1.005–1.07× the optimum on average)."""
    from .circles import _dsatur_clique_cover

    size = np.bincount(lab, minlength=ncomp)
    count = _per_component(cover, lab, ncomp, True)
    out = cover.copy()
    top = int(cover.max()) + 1
    order = np.argsort(lab, kind="stable")
    starts = np.r_[0, np.cumsum(size)]
    for c in np.flatnonzero((size > 2) & (size <= DENSE_MAX) & (count > 1)):
        members = np.sort(order[starts[c] : starts[c + 1]])
        sub = A[members][:, members].toarray() > 0
        labels = _dsatur_clique_cover(sub, np.argsort(np.argsort(rank[members])))
        if labels.max() + 1 < count[c]:
            out[members] = top + labels
            top += int(labels.max()) + 1
    return out


def _per_component(values_mask_or_labels, lab, ncomp, cover=False):
    if cover:
        first = np.unique(values_mask_or_labels, return_index=True)[1]
        return np.bincount(lab[first], minlength=ncomp)
    return np.bincount(lab[values_mask_or_labels], minlength=ncomp)


def _sweep(n, i, j, d, grid, cap, exact_max, time_limit, seed, deadline=None):
    from scipy.sparse.csgraph import connected_components

    m = len(grid)
    rank = np.random.default_rng(seed).permutation(n)
    lower, upper = np.ones(m, dtype=np.int64), np.full(m, n, dtype=np.int64)
    sets = np.zeros((m, n), dtype=bool)
    graphs = {}
    todo = [k for k in range(m) if grid[k] <= cap]

    def graph(k):
        if k not in graphs:
            A = _graph(n, i[: np.searchsorted(d, grid[k], side="right")],
                       j[: np.searchsorted(d, grid[k], side="right")])  # fmt: skip
            ncomp, lab = connected_components(A, directed=False)
            graphs.clear()  # one graph at a time: memory
            graphs[k] = (A, lab, ncomp)
        return graphs[k]

    def spent():
        return deadline is not None and time.perf_counter() > deadline

    covers = {}
    prev = None
    for pos, k in enumerate(todo):  # upward: a clique cover stays a cover as τ grows
        if pos and spent():  # the rest is skipped (the carried cover still bounds it)
            todo = todo[:pos]
            break
        A, lab, ncomp = graph(k)
        own = _dense_covers(A, lab, ncomp, _clique_cover(A, rank), rank)
        if prev is not None:
            better = _per_component(prev, lab, ncomp, True) < _per_component(own, lab, ncomp, True)
            own = np.where(better[lab], prev, own + n)
        covers[k] = prev = np.unique(own, return_inverse=True)[1]
        upper[k] = int(prev.max()) + 1
    cp_model = None
    if exact_max > 0:
        from .circles import _cp_model

        cp_model = _cp_model()
    prev = None
    full = np.zeros(m, dtype=bool)  # both bounds computed at τ_k (not cut by the budget)
    for k in todo[::-1]:  # downward: an independent set stays independent as τ shrinks
        if spent():  # keep the carried set, if any: still independent
            if prev is not None:
                sets[k], lower[k] = prev, int(prev.sum())
            continue
        full[k] = True
        A, lab, ncomp = graph(k)
        own = _greedy_set(A, rank)
        if prev is not None:
            keep = _per_component(prev, lab, ncomp) > _per_component(own, lab, ncomp)
            own = np.where(keep[lab], prev, own)
        if cp_model is not None and not spent():
            own, upper[k] = _solve_small(cp_model, A, lab, ncomp, covers[k], own, exact_max,
                                         time_limit, seed)  # fmt: skip
        sets[k] = prev = own
        lower[k] = int(own.sum())
    # Circles is nonincreasing in τ: each bound also holds on the other side.
    upper = np.minimum.accumulate(upper)
    for k in range(m - 2, -1, -1):
        if lower[k + 1] > lower[k]:
            lower[k], sets[k] = lower[k + 1], sets[k + 1]
    for k in range(m):
        if not sets[k].any():  # above the cap or skipped: one sample is a valid witness
            sets[k, 0] = True
    return lower, upper, sets, full


def _solve_small(cp_model, A, lab, ncomp, cover, best, exact_max, time_limit, seed):
    """CP-SAT on the components of at most ``exact_max`` vertices whose bounds differ."""
    from .circles import _solve_component

    size = np.bincount(lab, minlength=ncomp)
    lo = _per_component(best, lab, ncomp)
    hi = _per_component(cover, lab, ncomp, True)
    open_ = np.flatnonzero((lo < hi) & (size <= exact_max))
    if len(open_):
        order = np.argsort(lab, kind="stable")
        starts = np.r_[0, np.cumsum(size)]
        for c in open_:
            members = np.sort(order[starts[c] : starts[c + 1]])
            sub = A[members][:, members].toarray() > 0
            sub_cover = np.unique(cover[members], return_inverse=True)[1]
            found, lo_c, hi_c, _ = _solve_component(
                cp_model, sub, sub_cover, best[members], seed, time_limit
            )
            if lo_c > lo[c]:
                best[members] = found
            hi[c] = min(hi[c], hi_c)
    return best, int(hi.sum())
