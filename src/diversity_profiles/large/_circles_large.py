"""Circles at large n: certified brackets from sparse τ-neighbourhood graphs.

One pass over float32 distance tiles keeps the pairs within the largest threshold (pairs
whose float32 distance is too close to a threshold to be trusted are recomputed in
float64) in one adjacency structure holding every threshold's graph (:mod:`._tau_graphs`).
A degree-ordered greedy independent set, grown by (1,2)-swaps, bounds Circles below (with
the samples as witness); the cliques of the previous threshold's cover, merged first-fit,
bound it above (DSATUR where a component is small); above the median distance both run on
the sparser complement graph. Bounds are carried across thresholds, and components small
enough are solved exactly by CP-SAT. Where the pass cannot finish (a time budget) or its
pairs do not fit (thresholds above the cap), bounds from the geometry alone
(:mod:`._geometric_cover`) stand beside these, the better kept at each threshold.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field, replace
from itertools import pairwise

import numpy as np
from numpy.typing import ArrayLike

from ..core import check_parameter, counts_as_pair_work, one_of, timed_progress
from ..engines import (
    DEFAULT_MEMORY,
    TILE,
    distance_block,
    distance_matrix,
    pair_candidates,
    prepare_embeddings,
    refine_close_pairs,
)
from ._geometric_cover import (
    _U32,
    _U64,
    GeometricBounds,
    _out_of_time,
    _squared_error,
    geometric_bounds,
)
from ._tau_graphs import TauGraphs
from ._threshold_bins import ThresholdBins

__all__ = ["CirclesBounds", "circles_large"]

FUNC = "circles_large"
#: Distances whose float32 GEMM error bound decides the edges (see _threshold_graphs).
DISTANCES = ("euclidean", "cosine")
#: Below the median distance, the complement's DSATUR cover runs where the graph holds at
#: least DSATUR_MIN_DENSITY of all pairs and DSATUR_GROWTH times the pairs of where it last
#: ran, and at every DSATUR_STRIDE-th threshold. Measured (summed upper bounds over 100
#: thresholds): n = 10,000 Gaussian, every 4th only: 216k without, 141k with (58 -> 69 s);
#: n = 3,000 Gaussian 47.6k (growth only), 48.0k (every 4th), 47.0k (both; dense 45.9k).
DSATUR_MIN_DENSITY = 0.02
DSATUR_GROWTH = 1.25
DSATUR_STRIDE = 4  # ... and at every 4th threshold (fine grids)
#: Orders tried by the greedy on the complement (each costs n per sample it takes).
RESTARTS = 8
#: Rounds of (1,2)-swaps at most per threshold (_improved_by_swaps; each usually finds less
#: than the one before).
SWAP_ROUNDS = 8
#: Thresholds above the cap (pairs did not fit) get witnesses from this many samples.
SUBSAMPLE = 3000
#: A pair pass under a time budget stops after a row of tiles once the rows so far predict
#: the whole pass to take more than this many times the budget: it could not finish, and
#: its thresholds would keep only the carried bounds anyway. Measured at 50,000 × 768 with
#: a budget of 120 s: the first of 25 rows (1/13 of the tiles) took 16 s, and the pass
#: ran out the budget for nothing (9 of 25 rows).
OVERRUN = 1.25
#: Under a time budget (the pair pass may not finish) the bounds from the geometry alone
#: (:mod:`._geometric_cover`) run first, in at most this share of the budget (past a
#: minimum of work); without one they run after the pair pass, at the thresholds whose pairs
#: did not fit memory_limit. Measured at 50,000 × 768, clustered, time_budget=120: 20 s a
#: set; Circles' upper/lower from 900–25,000 (the threshold pass's bounds) to 1.0–1.6 from
#: the 2% to the 30% distance quantile and at most 6.3 to the 98%.
GEOMETRIC_SHARE = 0.25
#: Below this mean degree the min-degree greedy also runs with degree updates (each
#: threshold then costs every edge; measured at n = 3000, clustered: as often better as worse).
DYNAMIC_MAX_DEGREE = 64
#: Components up to this size also get a DSATUR cover (dense, O(size²) memory and time).
DENSE_MAX = 2000
#: A tile with more near-threshold pairs than this is redone by float64 GEMM (measured:
#: ~12 µs a pair from differences at d = 768, ~0.3 s a float64 2048² tile).
REFINE_TILE = 20_000


@dataclass
class CirclesBounds:
    """Certified bounds per threshold (arrays in the order of the given ``tau``).

    ``lower[k]`` is the size of ``witness[k]``, a set of samples pairwise farther apart
    than ``tau[k]``; ``upper[k]`` is a proven upper bound; ``exact`` where they meet.
    Thresholds above ``tau_cap`` (when the pairs did not fit in memory) take the better of
    a greedy independent set of SUBSAMPLE random samples and the geometric witnesses below,
    and of the bound carried from below and the geometric clique cover above.
    ``kind[k]`` is ``"exact"``, ``"certified"`` or ``"skipped"`` (time budget spent before
    τ_k was reached: its bounds are only the carried and geometric ones, still valid; the
    caller may supply better cheap ones). ``seconds["geometric"]``: the time those took.
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
    progress: bool | None = None,
    stop: threading.Event | None = None,
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
        n, the independent set from above or SUBSAMPLE samples' greedy set) and the
        geometric bounds, made first in at most :data:`GEOMETRIC_SHARE` of the budget;
        all still hold. A pair pass whose first rows of tiles predict it to take over
        :data:`OVERRUN` times the budget stops there, rather than spend the budget.
    progress : bool, optional
        Bars with an ETA over the pair pass (rows of tiles) and the sweeps over the
        thresholds; by default when the first step, timed, predicts the rest to take more
        than a few seconds.
    stop : threading.Event, optional
        Set from another thread to end the call at its next check, as when the time
        budget is spent (what was found so far still bounds each threshold): ``profiles``
        sets it when it fails or is interrupted while Circles runs beside the others.

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
    one_of(distance, "distance", FUNC, DISTANCES)
    X = prepare_embeddings(X, distance, FUNC)
    taus, _ = check_parameter(tau, "tau", FUNC, low=0.0)
    grid, inverse = np.unique(taus, return_inverse=True)
    limit = DEFAULT_MEMORY if memory_limit is None else float(memory_limit)
    t0 = time.perf_counter()
    deadline = None if time_budget is None else t0 + float(time_budget)
    n = X.shape[0]
    geometric = None
    if n > 1 and deadline is not None:  # the pair pass may not finish: these first (seconds)
        share = t0 + GEOMETRIC_SHARE * (deadline - t0)
        geometric = _geometric_at(X, distance, grid, range(len(grid)), share, stop, progress)
    built = _threshold_graphs(X, distance, grid, int(limit // 16), device, deadline, progress,
                              stop)  # fmt: skip
    t1 = time.perf_counter()
    if built is None:  # the budget ran out in the pair pass: a subsample's witnesses only
        hi = np.full(len(grid), n, dtype=np.int64)
        sets = np.zeros((len(grid), n), dtype=bool)
        for k, witness in _subsample_witnesses(X, distance, grid, range(len(grid)), seed).items():
            sets[k, witness] = True
        lo = np.maximum(sets.sum(axis=1), 1)
        sets[lo == 1, 0] = True  # kept only when no pair of the subsample is apart
        sets[lo == 1, 1:] = False
        done = over_cap = np.zeros(len(grid), dtype=bool)
        n_pairs, cap = 0, np.nan
    else:
        graphs, top = built
        above = {}  # thresholds above the cap: witnesses from a subsample
        if top < len(grid) - 1:
            above = _subsample_witnesses(X, distance, grid, range(top + 1, len(grid)), seed)
        lo, hi, sets, done = _sweep(graphs, top + 1, len(grid), exact_max_component,
                                    time_limit, seed, deadline, above, progress, stop)  # fmt: skip
        n_pairs, cap = int(graphs.edges[top]), float(grid[top])
        over_cap = np.arange(len(grid)) > top
        if geometric is None and over_cap.any():  # the thresholds whose pairs did not fit
            ks = range(top + 1, len(grid))
            geometric = _geometric_at(X, distance, grid, ks, None, stop, progress)
    if geometric is not None:  # the better of the two at each threshold
        better = geometric.lower > lo
        for k in np.flatnonzero(better):
            sets[k] = False
            sets[k, geometric.witness[k]] = True
        lo = np.where(better, geometric.lower, lo)
        hi = np.minimum(hi, geometric.upper)
    t2 = time.perf_counter()
    kind = np.where(lo == hi, "exact", np.where(done | over_cap, "certified", "skipped"))
    return CirclesBounds(
        tau=taus, lower=lo[inverse], upper=hi[inverse], exact=(lo == hi)[inverse],
        witness=[np.flatnonzero(sets[k]) for k in inverse], n_pairs=n_pairs, tau_cap=cap,
        seconds={"geometric": 0.0 if geometric is None else geometric.seconds,
                 "pairs": t1 - t0, "bounds": t2 - t1}, kind=[str(x) for x in kind[inverse]],
    )  # fmt: skip


def _geometric_at(X, distance, grid, ks, deadline, stop, progress) -> GeometricBounds:
    """:func:`geometric_bounds` at the thresholds ``grid[ks]`` (a range to the end), spread
    over the whole grid: bounds that say nothing (0 below, n above) at the others. Only
    the thresholds asked for are passed down, so the tree stops splitting at the smallest
    of them (at large thresholds, near the top: seconds)."""
    ks = np.asarray(ks)
    at = grid[ks] if distance == "euclidean" else np.sqrt(2.0 * grid[ks])
    g = geometric_bounds(X, at, deadline=deadline, stop=stop, progress=progress)
    lower, upper = np.zeros(len(grid), dtype=np.int64), np.full(len(grid), len(X))
    witness = [np.zeros(0, dtype=np.int64)] * len(grid)
    lower[ks], upper[ks] = g.lower, g.upper
    for i, k in enumerate(ks):
        witness[k] = g.witness[i]
    return replace(g, tau=grid, lower=lower, upper=upper, witness=witness)


@counts_as_pair_work
def _threshold_graphs(X, distance, grid, max_pairs, device=None, deadline=None, progress=None,
                      stop=None):  # fmt: skip
    """The threshold graphs of ``grid[:top + 1]`` (the largest prefix whose pairs fit in
    ``max_pairs``) and ``top``; None when ``deadline`` passes before the last row of tiles.
    When every pair fits, every pair is kept (those beyond the grid in a last bin of their
    own), so the complement graphs are stored too."""
    if device is None:
        candidates = _host_candidates(X, distance)
    else:  # the tiles on a torch device; near-threshold pairs still settled here in float64
        candidates = pair_candidates(X, distance, device, TILE, 4.0 * X.shape[1] * _U32)
    n = X.shape[0]
    top = len(grid) - 1
    every = n * (n - 1) // 2 <= max_pairs
    bin_type = np.min_scalar_type(len(grid))
    tiles, count = {}, 0
    rows = range(0, n, TILE)
    desc = f"circles_large: pairs within the thresholds, {n:,} points"
    whole = every and hasattr(candidates, "whole")
    table = _bin_table(X, distance, grid, candidates) if whole else None
    per_row = [len(range(a, n, TILE)) for a in rows]  # tiles: the rows shrink down
    start, done, total = time.perf_counter(), 0, sum(per_row)
    for i, a in enumerate(
        timed_progress(rows, total=len(rows), desc=desc, enabled=progress, unit="tile row")
    ):
        if a and (_out_of_time(deadline, stop) or _overruns(start, deadline, done / total)):
            return None
        done += per_row[i]
        for b in range(a, n, TILE):
            if whole:  # all pairs kept: each tile's bins as one dense matrix, from float64
                tiles[a, b] = _tile_bins(X, distance, grid, candidates, a, b, table)
                continue
            r, c, dv, bv = candidates(a, b, np.inf if every else float(grid[top]))
            joined = np.searchsorted(grid, dv, side="left")  # in G_τk from k = joined on
            near = _near_threshold(dv, bv, grid, joined)
            if near.sum() > REFINE_TILE and hasattr(candidates, "precise"):
                dv, bv = candidates.precise(a, b, r, c)
                joined = np.searchsorted(grid, dv, side="left")
                near = _near_threshold(dv, bv, grid, joined)
            if near.any():
                dv[near] = _exact(X, a + r[near], b + c[near], distance)
                joined[near] = np.searchsorted(grid, dv[near], side="left")
            inside = joined <= (top + 1 if every else top)
            tiles[a, b] = (r[inside].astype(np.uint16), c[inside].astype(np.uint16),
                           joined[inside].astype(bin_type))  # fmt: skip
            count += int(inside.sum())
            while count > max_pairs and top > 0:  # keep what fits: lower the cap
                top -= 1
                tiles = {t: (r_[k <= top], c_[k <= top], k[k <= top])
                         for t, (r_, c_, k) in tiles.items()}  # fmt: skip
                count = sum(len(k) for _, _, k in tiles.values())
            if count > max_pairs:
                raise MemoryError(
                    f"{FUNC}: the pairs within the smallest threshold {grid[top]:.4g} do not "
                    f"fit in memory_limit ({max_pairs} pairs). Raise memory_limit or use "
                    "smaller tau."
                )
    if whole:
        return TauGraphs.from_dense_tiles(n, tiles, top + 2, TILE), top
    return TauGraphs.from_tiles(n, tiles, top + 2 if every else top + 1, TILE), top


def _tile_bins(X, distance, grid, candidates, a, b, table=None) -> np.ndarray:
    """Tile (a, b)'s threshold bins (``searchsorted(grid, d)``: joined from τ_bin on;
    ``len(grid)`` beyond the grid) as a dense matrix of the smallest unsigned type, from a
    float64 GEMM, pairs within its error bound of a threshold recomputed from their
    differences. A diagonal tile is symmetric (its upper triangle mirrored), its diagonal
    ``len(grid) + 1``.

    With ``table`` (a :class:`.ThresholdBins` whose slack bounds every pair's error that
    matters) the bins are looked up and only the unsure pairs searched and checked: at
    30,000 × 64 the search and the per-pair bounds took 49 of Circles' 187 s a set."""
    if table is None:
        D, bound = candidates.whole(a, b)
        joined = np.searchsorted(grid, D, side="left")
        unsure = _near_threshold(D, bound, grid, joined)
    else:
        D = candidates.distances(a, b)
        joined, unsure = table.lookup(D)
    if a == b:
        unsure = np.triu(unsure, 1)
    if unsure.any():
        r, c = np.nonzero(unsure)
        d = D[r, c]
        if table is not None:  # unsure: searched here, and near only within the slack
            joined[r, c] = np.searchsorted(grid, d, side="left")
            near = _near_threshold(d, table.slack, grid, joined[r, c])
            r, c = r[near], c[near]
        joined[r, c] = np.searchsorted(grid, _exact(X, a + r, b + c, distance), side="left")
    bins = joined.astype(np.min_scalar_type(len(grid) + 1))
    if a == b:
        upper = np.triu(np.ones(bins.shape, dtype=bool), 1)
        bins = np.where(upper, bins, bins.T)
        np.fill_diagonal(bins, len(grid) + 1)
    return bins


def _bin_table(X, distance, grid, candidates) -> ThresholdBins | None:
    """The lookup of :func:`_tile_bins`, or None where one slack cannot bound the errors
    that matter. With ``s`` the largest bound on a squared Euclidean distance, a distance
    is within ``√s`` of the truth (|a − b|² ≤ |a² − b²|), and within ``2s/τ`` where it is
    at least τ/2; below τ/2 it cannot cross τ while ``s ≤ 3τ²/4``. So ``2s/τ_0`` bounds the
    errors that matter when every threshold is positive, ``√s`` when τ = 0 is one (the
    distinct points). A cosine distance's bound is ``s`` itself."""
    if not hasattr(candidates, "distances"):
        return None
    s = candidates.squared_slack
    if distance != "euclidean":
        return ThresholdBins(grid, s)
    positive = grid[grid > 0]
    if not len(positive) or s > 0.75 * float(positive[0]) ** 2:
        return None
    slack = math.sqrt(s) if grid[0] <= 0 else min(math.sqrt(s), 2.0 * s / float(grid[0]))
    return ThresholdBins(grid, slack)


def _overruns(start: float, deadline: float | None, share: float) -> bool:
    """Whether a pass begun at ``start`` that has done ``share`` of its work is predicted
    to take more than :data:`OVERRUN` times the time from ``start`` to ``deadline``.

    >>> _overruns(0.0, None, 0.5), _overruns(time.perf_counter(), time.perf_counter() + 60, 0.5)
    (False, False)
    >>> _overruns(time.perf_counter() - 10, time.perf_counter() + 10, 0.1)  # ~100 s for 20 s
    True
    """
    if deadline is None or share <= 0:
        return False
    now = time.perf_counter()
    return (now - start) / share > OVERRUN * (deadline - start)


def _host_candidates(X, distance):
    """``candidates(a, b, cap)``: tile (a, b)'s pairs (r < c on the diagonal) whose float32
    distance may be ≤ cap, with that distance (float64, close pairs refined) and its error
    bound; ``candidates.precise(a, b, r, c)``: those pairs' distances from a float64 GEMM,
    with its (2⁻²⁹ times smaller) bound; ``candidates.whole(a, b)``: the whole tile's;
    ``candidates.distances(a, b)``: the whole tile's distances alone, each within
    ``candidates.squared_slack`` of the truth squared (see :func:`_bin_table`)."""
    X32 = X.astype(np.float32)
    sq = np.einsum("ij,ij->i", X, X)

    def tile(a, b, A, B, unit, bounded=True):
        D, close = distance_block(A, B, distance)
        D = D.astype(np.float64, copy=False)
        refine_close_pairs(D, X[a : a + TILE], X[b : b + TILE], distance, close)
        if not bounded:
            return D
        bound = _squared_error(X.shape[1], unit, sq[a : a + TILE, None], sq[None, b : b + TILE])
        if distance == "euclidean":  # the bound is on D², move it to D near τ
            bound = bound / np.maximum(D + np.sqrt(np.maximum(D * D - bound, 0.0)), 1e-300)
        if close is not None:
            bound[close] = 0.0  # already recomputed in float64
        return D, bound

    def candidates(a, b, cap):
        D, bound = tile(a, b, X32[a : a + TILE], X32[b : b + TILE], _U32)
        r, c = np.nonzero(D <= cap + bound)
        if a == b:
            keep = r < c
            r, c = r[keep], c[keep]
        return r, c, D[r, c], bound[r, c]

    def whole(a, b):
        return tile(a, b, X[a : a + TILE], X[b : b + TILE], _U64)

    def precise(a, b, r, c):
        D, bound = whole(a, b)
        return D[r, c], bound[r, c]

    def distances(a, b):
        return tile(a, b, X[a : a + TILE], X[b : b + TILE], _U64, bounded=False)

    candidates.precise, candidates.whole, candidates.distances = precise, whole, distances
    # every float64 tile's bound on squared distances (cosine: on distances) is below this
    top = float(sq.max()) if len(sq) else 0.0
    candidates.squared_slack = _squared_error(X.shape[1], _U64, top, top)
    return candidates


def _near_threshold(d, bound, grid, k):
    """Pairs whose distance is within its error bound of some threshold; ``k`` is
    ``searchsorted(grid, d)`` (grid[k-1] < d <= grid[k]: neighbours g[k], g[k+1] below)."""
    g = np.r_[-np.inf, grid, np.inf]
    return np.minimum(np.abs(d - g[k]), np.abs(g[k + 1] - d)) <= bound


def _exact(X, r, c, distance):
    diff = X[r] - X[c]
    s = np.einsum("ij,ij->i", diff, diff)
    return s / 2.0 if distance == "cosine" else np.sqrt(s)


def _greedy_set(g: TauGraphs, k: int, rank: np.ndarray) -> np.ndarray:
    """Min-degree greedy independent set of G_τk: repeatedly take a vertex of least residual
    degree (ties by rank) and delete it with its neighbours; isolated vertices are taken at
    once.

    Measured on dense graphs (``circles``): 0.83 of the optimum in the worst case, 0.97 on
    average, against 0.71 for a random order.
    """
    n = g.n
    big = np.int64(n + 1)
    # key = residual degree · (n + 1) + rank; removed vertices get a key above every live one.
    key = g.degrees(k) * big + rank
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
        nb = g.neighbours(v, k)
        removed = np.r_[v, nb[key[nb] < gone]]
        key[removed] = gone
        touched = g.gather(removed, k)[0]
        touched = touched[key[touched] < gone]  # live neighbours of deleted vertices
        # each loses one degree per deleted neighbour
        if 8 * len(touched) > n:
            key -= big * np.bincount(touched, minlength=n)
        else:
            np.subtract.at(key, touched, big)


def _improved_by_swaps(g: TauGraphs, k: int, chosen: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """A larger independent set of G_τk from ``chosen`` by (1,2)-swaps (Andrade, Resende and
    Werneck, J. Heuristics 2012): a taken vertex v whose neighbours include two non-adjacent
    vertices with no other taken neighbour gives way to both (+1), then vertices left with
    no taken neighbour are taken, by rank. Rounds run until one finds nothing.

    Within a round a swap is made only where no earlier swap of the round touched the
    vertices involved or their neighbours, so every swap keeps the set independent; the
    result is checked all the same, and ``chosen`` is returned if the check fails. Measured
    on a 5-mode mixture (d = 32, n = 4,000, Euclidean) at the 2-10% distance quantiles: 3-9%
    more samples (e.g. 251 -> 267 at 10%), in a fraction of a second per threshold.
    """
    n = g.n
    S = chosen.copy()
    scratch = np.zeros(n, dtype=bool)  # all False between uses (see _non_adjacent_pair)
    for _ in range(SWAP_ROUNDS):
        taken = np.flatnonzero(S)
        nb, counts = g.gather(taken, k)
        tight = np.bincount(nb, minlength=n)
        # the one taken neighbour of a 1-tight vertex: the sum of its taken neighbours
        owner = np.bincount(nb, weights=np.repeat(taken, counts), minlength=n)
        one = np.flatnonzero((tight == 1) & ~S)
        by = np.lexsort((rank[one], owner[one]))
        one, own = one[by], owner[one[by]].astype(np.int64)
        cuts: list[int] = (
            np.flatnonzero(np.r_[True, own[1:] != own[:-1], True]).tolist() if len(one) else []
        )
        touched = np.zeros(n, dtype=bool)  # changed this round: their tightness is stale
        swaps = 0
        for a, b in pairwise(cuts):
            v = int(own[a])
            if b - a < 2 or touched[v]:
                continue
            group = one[a:b][~touched[one[a:b]]]
            pair = _non_adjacent_pair(g, k, group, scratch)
            if pair is None:
                continue
            S[v], S[list(pair)] = False, True
            touched[[v, *pair]] = True
            for x in (v, *pair):
                touched[g.neighbours(x, k)] = True
            swaps += 1
        # vertices left with no taken neighbour (beside a vertex that gave way), by rank
        nb, _ = g.gather(np.flatnonzero(S), k)
        free = np.ones(n, dtype=bool)
        free[nb] = False
        free &= ~S
        added = 0
        for u in np.flatnonzero(free)[np.argsort(rank[free])]:
            if not S[g.neighbours(u, k)].any():
                S[u] = True
                added += 1
        if not swaps and not added:
            break
    nb, _ = g.gather(np.flatnonzero(S), k)
    return chosen if S[nb].any() else S  # never a set that is not independent


def _non_adjacent_pair(
    g: TauGraphs, k: int, group: np.ndarray, scratch: np.ndarray | None = None
) -> tuple[int, int] | None:
    """Two vertices of ``group`` (in its order) not joined in G_τk, or None.

    ``scratch``: n booleans, all False, returned so. u's neighbours are marked in it and
    the rest of the group read from it: O(degree) where ``np.isin`` sorted the neighbours
    (28 of Circles' 300 s at 30,000 × 64, py-spy).
    """
    if len(group) < 2:
        return None
    mark = np.zeros(g.n, dtype=bool) if scratch is None else scratch
    for i, u in enumerate(group[:-1].tolist()):
        rest = group[i + 1 :]
        nb = g.neighbours(u, k)
        mark[nb] = True
        apart = rest[~mark[rest]]
        mark[nb] = False
        if len(apart):
            return u, int(apart[0])
    return None


def _best_of_orders(g: TauGraphs, k: int, rank: np.ndarray, pass_over) -> np.ndarray:
    """The largest of the sets ``pass_over(order)`` finds for RESTARTS orders: increasing
    degree in G_τk (ties by rank), then the degrees jittered by up to 10% (measured at
    n = 2,500, clustered: the summed bracket width over 100 thresholds 665 with one order,
    642 with 8, 634 with 32)."""
    rng = np.random.default_rng(int(rank[0]))
    deg = g.degrees(k)
    best = np.zeros(g.n, dtype=bool)  # every pass takes at least one sample
    for attempt in range(RESTARTS):
        key = deg if attempt == 0 else deg * rng.uniform(0.9, 1.1, g.n)
        chosen = pass_over(np.lexsort((rank, key)).tolist())
        if chosen.sum() > best.sum():
            best = chosen
    return best


def _greedy_static(g: TauGraphs, k: int, rank: np.ndarray) -> np.ndarray:
    """Independent set of G_τk taking vertices in increasing order of degree unless a
    neighbour was taken: the min-degree greedy without degree updates, whose cost is the
    taken vertices' degrees rather than every edge (best of several orders)."""

    def pass_over(order):
        chosen = np.zeros(g.n, dtype=bool)
        blocked = np.zeros(g.n, dtype=bool)
        for v in order:
            if not blocked[v]:
                chosen[v] = True
                blocked[g.neighbours(v, k)] = True
        return chosen

    return _best_of_orders(g, k, rank, pass_over)


def _greedy_far_static(g: TauGraphs, k: int, rank: np.ndarray) -> np.ndarray:
    """:func:`_greedy_static` on the complement of a dense G_τk: vertices in decreasing
    order of complement degree, each taken when it is a complement neighbour of all taken
    (cost n per taken vertex; best of several orders)."""

    def pass_over(order):
        chosen = np.zeros(g.n, dtype=bool)
        live = np.ones(g.n, dtype=bool)
        for v in order:
            if live[v]:
                chosen[v] = True
                keep = np.zeros(g.n, dtype=bool)
                keep[g.neighbours_far(v, k)] = True
                live &= keep
        return chosen

    return _best_of_orders(g, k, rank, pass_over)


def _first_greedy(g: TauGraphs, k: int, rank: np.ndarray) -> np.ndarray:
    """The static greedy independent set of G_τk, on whichever of the graph and its
    complement is stored sparser."""
    if g.prefer_complement(k):
        return _greedy_far_static(g, k, rank)
    return _greedy_static(g, k, rank)


def _merge_cover(g: TauGraphs, k: int, cover: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Clique labels for G_τk: the cliques of ``cover`` (a clique cover of a subgraph of
    G_τk, so still one of G_τk) merged first-fit, biggest first, into the biggest clique
    they are wholly joined to. Never more cliques than ``cover``."""
    far = g.prefer_complement(k)
    size = np.bincount(cover)
    order = np.argsort(cover, kind="stable")
    starts = np.r_[0, np.cumsum(size)]
    deg = g.degrees(k)
    # a clique with no edge leaving it merges with nothing
    outside = np.bincount(cover, weights=deg, minlength=len(size)) - size * (size - 1.0)
    first = np.full(len(size), g.n, dtype=np.int64)
    np.minimum.at(first, cover, rank)
    new = np.zeros(g.n, dtype=np.int32)  # 1 + the clique label; 0: not placed yet
    new_size = np.zeros(len(size) + 1, dtype=np.int64)  # clique sizes, by new label
    count = 0
    for u in np.lexsort((first, -size)):
        members = order[starts[u] : starts[u + 1]]
        c = 0
        if outside[u] > 0.5 and count:
            c = _clique_to_join(g, k, far, members, new, new_size[: count + 1])
        if c == 0:
            count += 1
            c = count
        new[members] = c
        new_size[c] += len(members)
    return new - 1


def _clique_to_join(g: TauGraphs, k: int, far: bool, members, new, new_size) -> int:
    """The biggest placed clique (label ``c`` >= 1 in ``new``, sizes ``new_size``; the
    lowest label among equals) that every one of ``members`` is joined to in G_τk, or 0.

    Member by member, the candidates left are narrowed, and the search ends when none is
    left: most cliques join none, and then one member's neighbours usually settle it
    instead of every member's (Circles' merge gathered 50 and read 57 of its 230 s at
    30,000 × 64 from every member's rows)."""
    if far:  # joined to every clique without a complement edge to it
        fits = new_size.copy()
        fits[0] = 0
        for v in members.tolist():
            fits[new[g.neighbours_far(v, k)]] = 0
            if not fits.any():
                return 0
        return int(fits.argmax())
    cand: np.ndarray | None = None  # labels wholly joined to the members so far, ascending
    for v in members.tolist():
        met = new[g.neighbours(v, k)]
        if 8 * len(met) < len(new_size):  # few neighbours: sort them rather than count all
            labels, hits = np.unique(met, return_counts=True)
        else:
            hits = np.bincount(met, minlength=len(new_size))
            labels = np.flatnonzero(hits)
            hits = hits[labels]
        whole = labels[(hits == new_size[labels]) & (labels > 0)]
        cand = whole if cand is None else np.intersect1d(cand, whole, assume_unique=True)
        if not len(cand):
            return 0
    assert cand is not None  # a clique has members
    return int(cand[new_size[cand].argmax()])


def _dsatur_far_cover(g: TauGraphs, k: int, rank: np.ndarray) -> np.ndarray:
    """Clique labels for a dense G_τk: DSATUR colouring of its complement, whose colour
    classes are cliques of G_τk. Next is the vertex whose complement neighbours hold most
    colours, then most complement neighbours, then rank; it takes the first colour none of
    them holds.

    Each step reads the coloured vertex's row in G_τk or in its complement, whichever is
    cheaper (the same colouring either way): DSATUR runs from 2% of the pairs joined up,
    and reading the complement's rows at the low end took 52 of Circles' 187 s a set at
    30,000 × 64.
    """
    n = g.n
    far_deg = (n - 1) - g.degrees(k)
    step = np.int64(n + 1) ** 2
    key = far_deg * np.int64(n + 1) + (n - rank)  # + saturation · step as colours appear
    # A coloured vertex's key sinks so far that no update brings it back (at most n steps
    # either way), so updates need not read which vertices are coloured.
    key_done = np.int64(-(2**62))
    # A step costs about the row read either way, a G_τk row ~1.5 times as much per entry
    # (measured at 12,000: equal at 40% of the pairs joined).
    far = g.edges[k] >= 0.4 * (n * (n - 1) // 2)
    by_rows = _dsatur_by_far_rows if far else _dsatur_by_rows
    return by_rows(g, k, key, step, key_done)


def _dsatur_by_far_rows(g: TauGraphs, k: int, key, step, key_done) -> np.ndarray:
    """DSATUR from the complement's rows: a colour is blocked for the complement
    neighbours of each vertex that takes it, whose saturation then grows."""
    n = g.n
    label = np.empty(n, dtype=np.int64)
    blocked = np.zeros((8, n), dtype=bool)  # blocked[c, u]: colour c is on a neighbour of u
    count = 0
    for _ in range(n):
        v = int(key.argmax())
        key[v] = key_done
        free = np.flatnonzero(~blocked[:count, v])
        c = int(free[0]) if len(free) else count
        if c == count:
            count += 1
            if count > len(blocked):
                blocked = np.vstack([blocked, np.zeros_like(blocked)])
        label[v] = c
        nb = g.neighbours_far(v, k)
        row = blocked[c]  # 1-d take/compress/put: ~30% faster than 2-d fancy indexing
        nb = nb.compress(~row.take(nb))
        row.put(nb, True)
        key.put(nb, key.take(nb) + step)
    return label


def _dsatur_by_rows(g: TauGraphs, k: int, key, step, key_done) -> np.ndarray:
    """DSATUR from G_τk's rows: colour c is free for u exactly when its class lies in u's
    neighbourhood, so each class keeps the vertices it fits, shrunk to a newcomer's
    neighbours. A saturation is the number of colours less the classes a vertex fits:
    the keys keep ``−step`` per class fitted (less ``count·step`` than the saturation's,
    the same for every uncoloured vertex: the same order)."""
    n = g.n
    label = np.empty(n, dtype=np.int64)
    fits = np.zeros((8, n), dtype=bool)  # fits[c, u]: class c lies in u's neighbourhood
    members: list[np.ndarray] = []  # per class, the u with fits[c, u]
    seen = np.full(n, -1, dtype=np.int64)  # seen[u] == v: u is a neighbour of v
    count = 0
    for _ in range(n):
        v = int(key.argmax())
        key[v] = key_done
        near = g.neighbours(v, k)
        free = np.flatnonzero(fits[:count, v])
        if len(free):  # v joins class c, which then fits only v's neighbours among them
            c = int(free[0])
            cand = members[c]
            seen.put(near, v)
            stays = seen.take(cand) == v
            gone = cand.compress(~stays)
            fits[c].put(gone, False)
            key.put(gone, key.take(gone) + step)
            members[c] = cand.compress(stays)
        else:  # a new class {v}: v's neighbours fit it
            c = count
            count += 1
            if count > len(fits):
                fits = np.vstack([fits, np.zeros_like(fits)])
            fits[c].put(near, True)
            key.put(near, key.take(near) - step)
            members.append(near.copy())
        label[v] = c
    return label


def _dense_covers(g: TauGraphs, k: int, lab, ncomp, cover, rank):
    """Per component of at most DENSE_MAX vertices, DSATUR's cover when it has fewer cliques
    (measured on dense graphs: 1.005–1.07× the optimum on average)."""
    from ..families import dsatur_clique_cover

    size = np.bincount(lab, minlength=ncomp)
    count = _per_component(cover, lab, ncomp, True)
    out = cover.copy()
    top = int(cover.max()) + 1
    order = np.argsort(lab, kind="stable")
    starts = np.r_[0, np.cumsum(size)]
    for c in np.flatnonzero((size > 2) & (size <= DENSE_MAX) & (count > 1)):
        members = np.sort(order[starts[c] : starts[c + 1]])
        labels = dsatur_clique_cover(g.dense(members, k), np.argsort(np.argsort(rank[members])))
        if labels.max() + 1 < count[c]:
            out[members] = top + labels
            top += int(labels.max()) + 1
    return np.unique(out, return_inverse=True)[1]


def _fewer_cliques(cover, other, lab, ncomp):
    """Per component, the cover with fewer cliques (labels renumbered 0..)."""
    better = _per_component(other, lab, ncomp, True) < _per_component(cover, lab, ncomp, True)
    both = np.where(better[lab], other + len(lab), cover)
    return np.unique(both, return_inverse=True)[1]


def _per_component(values_mask_or_labels, lab, ncomp, cover=False):
    if cover:
        first = np.unique(values_mask_or_labels, return_index=True)[1]
        return np.bincount(lab[first], minlength=ncomp)
    return np.bincount(lab[values_mask_or_labels], minlength=ncomp)


def _sweep(g: TauGraphs, m, n_grid, exact_max, time_limit, seed, deadline=None, above=None,
           progress=None, stop=None):  # fmt: skip
    """Bounds at every threshold of the grid (``n_grid`` of them; those above the first
    ``m``, the graphs' cap, keep carried bounds and the witnesses in ``above``), the
    witnesses, and which thresholds got both bounds."""
    n = g.n
    rank = np.random.default_rng(seed).permutation(n)
    lower, upper = np.ones(n_grid, dtype=np.int64), np.full(n_grid, n, dtype=np.int64)
    sets = np.zeros((n_grid, n), dtype=bool)

    def spent():
        return _out_of_time(deadline, stop)

    components, covers = [], []
    cover = np.arange(n)  # singletons: a clique cover of every graph
    below = None
    last_dsatur = 0.0  # the graph density where DSATUR last ran
    static: dict[int, np.ndarray] = {}  # the downward pass's first greedy set, found early
    desc = f"circles_large: clique covers of {n:,} points, upward over τ"
    upward = timed_progress(range(m), total=m, desc=desc, enabled=progress, unit="threshold")
    for k in upward:  # upward: a clique cover stays a cover as τ grows
        if k and spent():  # the rest is skipped (the carried cover still bounds it)
            break
        below = g.components(k, below)
        cover = _dense_covers(g, k, *below, _merge_cover(g, k, cover, rank), rank)
        # DSATUR on the complement (O(n) a step): at every threshold above the median, and
        # down to DSATUR_MIN_DENSITY wherever the graph has grown DSATUR_GROWTH-fold since
        # it last ran or at every DSATUR_STRIDE-th threshold (the merge carries its cliques
        # on to the thresholds between).
        density = g.edges[k] / max(n * (n - 1) / 2, 1)
        grown = density >= DSATUR_MIN_DENSITY and (
            density >= DSATUR_GROWTH * last_dsatur or k % DSATUR_STRIDE == 0
        )
        if g.complete and density > 0 and (g.prefer_complement(k) or grown):
            # Where the downward pass's greedy set already meets the cover in every
            # component, the cover is optimal and DSATUR cannot shorten it (at 10,000 × 64
            # the sparsest graphs: a nearly complete complement, 0.34 s a DSATUR call).
            static[k] = _first_greedy(g, k, rank)
            if (_per_component(static[k], *below) < _per_component(cover, *below, True)).any():
                cover = _fewer_cliques(cover, _dsatur_far_cover(g, k, rank), *below)
            last_dsatur = density
        components.append(below)
        covers.append(cover)
        upper[k] = int(cover.max()) + 1
    cp_model = None
    if exact_max > 0:
        from ..families import load_cp_model

        cp_model = load_cp_model()
    prev = None
    full = np.zeros(n_grid, dtype=bool)  # both bounds computed at τ_k (not cut by the budget)
    desc = f"circles_large: independent sets of {n:,} points, downward over τ"
    steps = range(len(covers) - 1, -1, -1)
    downward = timed_progress(
        steps, total=len(covers), desc=desc, enabled=progress, unit="threshold"
    )
    for k in downward:  # downward: an independent set stays one
        if spent():  # keep the carried set, if any: still independent
            if prev is not None:
                sets[k], lower[k] = prev, int(prev.sum())
            continue
        full[k] = True
        lab, ncomp = components[k]
        found = [static.pop(k) if k in static else _first_greedy(g, k, rank)]
        # the updating greedy costs every edge (measured at n = 5000 and 10,000: as often
        # better as worse than the static one): only where the graph is sparse
        if not g.prefer_complement(k) and 2 * g.edges[k] <= DYNAMIC_MAX_DEGREE * n:
            found.append(_greedy_set(g, k, rank))
        own = found.pop()
        for other in found + ([] if prev is None else [prev]):
            keep = _per_component(other, lab, ncomp) > _per_component(own, lab, ncomp)
            own = np.where(keep[lab], other, own)
        if not g.prefer_complement(k) and own.sum() < upper[k]:
            own = _improved_by_swaps(g, k, own, rank)
        if cp_model is not None and not spent():
            own, upper[k] = _solve_small(cp_model, g, k, lab, ncomp, covers[k], own, exact_max,
                                         time_limit, seed)  # fmt: skip
        sets[k] = prev = own
        lower[k] = int(own.sum())
    for k, witness in (above or {}).items():
        sets[k, witness] = True
        lower[k] = len(witness)
    # Circles is nonincreasing in τ: each bound also holds on the other side.
    upper = np.minimum.accumulate(upper)
    for k in range(n_grid - 2, -1, -1):
        if lower[k + 1] > lower[k]:
            lower[k], sets[k] = lower[k + 1], sets[k + 1]
    for k in range(n_grid):
        if not sets[k].any():  # above the cap or skipped: one sample is a valid witness
            sets[k, 0] = True
    return lower, upper, sets, full


def _subsample_witnesses(X, distance, grid, ks, seed) -> dict:
    """Greedy independent sets at the thresholds ``ks`` among SUBSAMPLE random samples:
    samples pairwise farther apart than τ there are so in the whole set, so each is a
    witness. A pair is decided from its float64 GEMM distance unless that lies within the
    GEMM's error bound of τ; those few are recomputed from their difference."""
    from ..families import min_degree_greedy

    rng = np.random.default_rng(seed)
    n = X.shape[0]
    S = np.sort(rng.choice(n, size=min(n, SUBSAMPLE), replace=False))
    D = distance_matrix(X[S], distance)
    sq = np.einsum("ij,ij->i", X[S], X[S])
    rank = rng.permutation(len(S))
    out = {}
    for k in ks:
        A = D <= grid[k]
        np.fill_diagonal(A, False)
        w = np.flatnonzero(min_degree_greedy(A, rank))  # positions in S
        r, c = np.triu_indices(len(w), 1)
        d = D[w[r], w[c]]
        bound = _squared_error(X.shape[1], _U64, sq[w[r]], sq[w[c]])
        if distance == "euclidean":  # the bound is on D², move it to D near τ
            bound = bound / np.maximum(d + np.sqrt(np.maximum(d * d - bound, 0.0)), 1e-300)
        near = np.flatnonzero(d - grid[k] <= bound)
        close = near[_exact(X, S[w[r[near]]], S[w[c[near]]], distance) <= grid[k]]
        out[k] = np.setdiff1d(S[w], S[w[c[close]]])  # drop one sample of each pair too close
    return out


def _solve_small(cp_model, g, k, lab, ncomp, cover, best, exact_max, time_limit, seed):
    """CP-SAT on the components of at most ``exact_max`` vertices whose bounds differ."""
    from ..families import solve_component

    size = np.bincount(lab, minlength=ncomp)
    lo = _per_component(best, lab, ncomp)
    hi = _per_component(cover, lab, ncomp, True)
    open_ = np.flatnonzero((lo < hi) & (size <= exact_max))
    if len(open_):
        order = np.argsort(lab, kind="stable")
        starts = np.r_[0, np.cumsum(size)]
        for c in open_:
            members = np.sort(order[starts[c] : starts[c + 1]])
            sub_cover = np.unique(cover[members], return_inverse=True)[1]
            found, lo_c, hi_c, _ = solve_component(
                cp_model, g.dense(members, k), sub_cover, best[members], seed, time_limit
            )
            if lo_c > lo[c]:
                best[members] = found
            hi[c] = min(hi[c], hi_c)
    return best, int(hi.sum())
