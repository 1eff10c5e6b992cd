"""Circles bounds from the geometry of the samples alone, with no pass over the pairs.

Work is O(n·d·(K + depth)) rather than O(n²·d), so these bounds exist where the pair pass
does not fit the memory or the time budget (50,000 × 768 under a 120 s budget: before, the
upper bound there was about n/2 at every threshold).

Below (a witness): a farthest-first traversal picks up to K samples, each as far as
possible from those before it; at each τ a greedy pass over them, in that order, keeps
those farther than τ from every one kept. Their pairwise distances are then checked in
float64 against τ with their rounding bound, so the witness is certified whatever the
traversal's float32 arithmetic chose.

Above: a bisecting tree splits the samples in two, along their principal direction refined
by a few 2-means steps while a node is large; below EXACT_DIAMETER samples (a block, whose
pairs' distances are computed once) at its farthest pair or again along its principal
direction (PRINCIPAL_MIN: two trees, one of each, the better bound kept). Per τ, a node's
samples in an independent set number at most

- 1 where its diameter is at most τ (it is a clique of G_τ; the diameter is twice its
  radius about its mean, or computed from its pairs);
- :func:`in_ball` of its samples' squared distances to its mean (m samples pairwise
  farther than τ have squared distances to any point summing past (m − 1)τ²/2);
- its children's bounds summed, or its size,

whichever is smallest. The cliques among the top TOP_DEPTH levels of the tree are then
merged first-fit where every pair across two of them is within τ, which
``max_{x∈a} |x − μ_b| + r_b`` bounds (μ_b, r_b: b's mean and radius).

Both use Euclidean geometry (the triangle inequality, inner products): cosine thresholds
map to Euclidean ones on unit vectors (1 − cos = |x − y|²/2).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ..core import timed_progress

__all__ = ["GeometricBounds", "geometric_bounds"]

#: Samples of the farthest-first traversal (its cost: one float32 product with the
#: embeddings each; at 50,000 × 768 about 15 ms).
CENTRES = 1024
#: ... of which at least this many run even when the deadline has passed (a few seconds
#: at 100,000 × 768), so that a call out of time still gets witnesses at large τ.
MIN_CENTRES = 32
#: Nodes up to this size get their exact diameter (a float32 Gram of their rows: 32 MB).
EXACT_DIAMETER = 2048
#: Nodes of the tree's top levels (up to 2^TOP_DEPTH - 1 of them) whose cliques may merge.
TOP_DEPTH = 9
#: Two trees, the better bound kept at each τ: in each, nodes of at least this many samples
#: split along their principal direction (then 2-means steps), smaller ones at their farthest
#: pair. Measured on the clustered data of benchmarks/large_n.py: at 50,000, farthest pairs
#: below 2,048 samples gave upper bounds of 50–60 between the 5% and 30% distance quantiles
#: where principal directions down to 64 gave 120–180; at 10,000 the other way round
#: (about 50 against 62 between the 30% and 70%). 7 s a tree at 50,000 × 768.
PRINCIPAL_MIN = (EXACT_DIAMETER + 1, 64)
#: 2-means steps after the split along the principal direction, and power iterations for it.
LLOYD_STEPS = 4
POWER_STEPS = 6
_U32 = 2.0**-24
_U64 = 2.0**-53
_CHUNK = 4096


@dataclass(frozen=True)
class GeometricBounds:
    """Certified Circles bounds at Euclidean thresholds ``tau`` (sorted).

    ``witness[k]`` are samples pairwise farther apart than ``tau[k]`` (``lower[k]`` of
    them); ``upper[k]`` is the size of a clique cover of G_τk.
    """

    tau: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    witness: list[np.ndarray] = field(default_factory=list)
    centres: int = 0
    nodes: int = 0
    seconds: float = 0.0


def geometric_bounds(
    X: np.ndarray,
    tau: np.ndarray,
    *,
    deadline: float | None = None,
    stop: threading.Event | None = None,
    centres: int = CENTRES,
    progress: bool | None = None,
) -> GeometricBounds:
    """Circles bounds of the rows of ``X`` (Euclidean) at sorted thresholds ``tau``.

    Parameters
    ----------
    X : ndarray, shape (n, d), float64
        Prepared embeddings.
    tau : ndarray
        Sorted Euclidean thresholds.
    deadline : float, optional
        ``time.perf_counter()`` value after which the traversal stops (past MIN_CENTRES)
        and the tree stops splitting; what was found by then still bounds every threshold.
    stop : threading.Event, optional
        Set from another thread to stop as at the deadline.
    centres : int
        Samples of the farthest-first traversal at most.
    progress : bool, optional
        Bars with an ETA over the traversal and the tree's blocks; by default when the
        first step, timed, predicts the rest to take more than a few seconds.

    Returns
    -------
    GeometricBounds

    Examples
    --------
    Two tight pairs 10 apart: two circles from τ = 0.1 up to 10, one beyond.

    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [10.0, 0.0], [10.0, 0.1]])
    >>> b = geometric_bounds(X, np.array([0.05, 0.5, 9.0, 11.0]))
    >>> b.lower.tolist(), b.upper.tolist()
    ([4, 2, 2, 1], [4, 2, 2, 1])
    >>> [w.tolist() for w in b.witness][2]  # samples farther than 9 apart
    [0, 3]
    """
    t0 = time.perf_counter()
    X = np.asarray(X, dtype=np.float64)
    tau = np.asarray(tau, dtype=np.float64)
    X32 = X.astype(np.float32)
    sq = np.einsum("ij,ij->i", X, X)
    order = _farthest_first(X32, sq, min(centres, len(X)), deadline, stop, progress)
    lower, witness = _greedy_packing(X[order], sq[order], tau)
    upper, nodes = np.full(len(tau), len(X), dtype=np.int64), 0
    for k, principal_min in enumerate(PRINCIPAL_MIN):
        if k and _out_of_time(deadline, stop):
            break
        tree = _BisectingTree.grow(X, X32, sq, tau, principal_min, deadline, stop, progress)
        np.minimum(upper, tree.cover(tau, X32, sq), out=upper)
        nodes += tree.count
    # α is nonincreasing in τ, so a bound at τ holds at every larger one (the first-fit
    # merging is greedy: its covers need not shrink as τ grows)
    upper = np.minimum.accumulate(upper)
    return GeometricBounds(
        tau=tau, lower=lower, upper=upper, witness=[np.sort(order[w]) for w in witness],
        centres=len(order), nodes=nodes, seconds=time.perf_counter() - t0,
    )  # fmt: skip


def _out_of_time(deadline: float | None, stop: threading.Event | None) -> bool:
    if stop is not None and stop.is_set():
        return True
    return deadline is not None and time.perf_counter() > deadline


def _squared_error(d: int, unit: float, sq_a, sq_b):
    """Rounding bound of ``|a|² + |b|² − 2 a·b`` from a GEMM at unit round-off ``unit`` (of
    both operands rounded to it, and the products summed): ``4·d·u·(|a|² + |b|²)``; the one
    bound of this package's squared distances (``circles_large``'s tiles too)."""
    return 4.0 * d * unit * (sq_a + sq_b)


def _farthest_first(X32, sq, k: int, deadline, stop, progress=None) -> np.ndarray:
    """Up to ``k`` samples, each the farthest (in float32) from those before it."""
    n = len(X32)
    nearest = np.full(n, np.inf)
    chosen = [int(np.argmax(sq))]  # an extreme sample: the start matters little
    desc = f"circles_large: farthest-first samples, {n:,} points"
    for _ in timed_progress(range(k - 1), total=k - 1, desc=desc, enabled=progress,
                            unit="sample"):  # fmt: skip
        c = chosen[-1]
        d2 = sq + sq[c] - 2.0 * (X32 @ X32[c]).astype(np.float64)
        np.minimum(nearest, d2, out=nearest)
        nearest[c] = -np.inf
        nxt = int(np.argmax(nearest))
        if nearest[nxt] <= 0.0:  # every sample duplicates one chosen
            break
        chosen.append(nxt)
        if len(chosen) >= MIN_CENTRES and _out_of_time(deadline, stop):
            break
    return np.array(chosen, dtype=np.int64)


def _greedy_packing(C: np.ndarray, sq: np.ndarray, tau: np.ndarray):
    """Per threshold, the rows of ``C`` (in their order) kept by a greedy pass when their
    certified distance to every row kept before exceeds the threshold: sizes and indices."""
    d = C.shape[1]
    d2 = sq[:, None] + sq[None, :] - 2.0 * (C @ C.T)
    d2 -= _squared_error(d, _U64, sq[:, None], sq[None, :])
    apart = np.sqrt(np.maximum(d2, 0.0))  # ≤ the true distances
    np.fill_diagonal(apart, np.inf)
    kept = np.zeros((len(tau), len(C)), dtype=bool)
    for j in range(len(C)):
        closest = np.where(kept, apart[j], np.inf).min(axis=1)
        kept[:, j] = closest > tau
    return kept.sum(axis=1), [np.flatnonzero(row) for row in kept]


@dataclass
class _BisectingTree:
    """Nodes are ranges ``perm[start:stop]`` of one permutation of the samples; a node's
    children are made after it, so reversed order is bottom-up."""

    perm: np.ndarray
    start: list[int] = field(default_factory=list)
    stop: list[int] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    diameter: list[float] = field(default_factory=list)  # certified upper bounds
    radius: list[float] = field(default_factory=list)  # about ``mean``, certified
    ball: list[np.ndarray | None] = field(default_factory=list)  # in_ball per τ
    mean: list[np.ndarray | None] = field(default_factory=list)
    children: list[tuple[int, int] | None] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.start)

    def _add(self, a: int, b: int, depth: int) -> int:
        self.start.append(a)
        self.stop.append(b)
        self.depth.append(depth)
        self.diameter.append(np.inf)
        self.radius.append(np.inf)
        self.ball.append(None)
        self.mean.append(None)
        self.children.append(None)
        return self.count - 1

    def _split_at(self, k: int, rows: np.ndarray, left: np.ndarray) -> tuple[int, int]:
        """Children of node ``k`` (whose samples are ``rows``): ``left`` first in ``perm``."""
        a, b = self.start[k], self.stop[k]
        middle = a + int(left.sum())
        self.perm[a:b] = np.r_[rows[left], rows[~left]]
        depth = self.depth[k] + 1
        pair = (self._add(a, middle, depth), self._add(middle, b, depth))
        self.children[k] = pair
        return pair

    @classmethod
    def grow(cls, X, X32, sq, tau, principal_min, deadline, stop, progress=None) -> _BisectingTree:
        """Split until every node is a clique at the smallest τ, holds two samples or fewer,
        or time is out (an unsplit node is then covered sample by sample).

        Nodes above EXACT_DIAMETER samples split along their principal direction, breadth
        first. Each node at or below it (a block) then gets its samples' certified distances
        once and its subtree is split from them alone, at its farthest pair, with exact
        diameters. Nodes of depth below TOP_DEPTH, and the large ones, get their ball:
        mean, radius and :func:`in_ball` per τ.
        """
        smallest = float(tau[0])
        tree = cls(np.arange(len(X)))
        queue, blocks = [tree._add(0, len(X), 0)], []
        while queue:
            k = queue.pop(0)
            rows = tree.perm[tree.start[k] : tree.stop[k]]
            if len(rows) <= EXACT_DIAMETER:
                blocks.append(k)
                continue
            tree._set_ball(k, X, rows, tau)
            tree.diameter[k] = 2.0 * tree.radius[k]
            if tree.diameter[k] > smallest and not (k and _out_of_time(deadline, stop)):
                left = _split(X32[rows])
                if 0 < left.sum() < len(rows):
                    queue += tree._split_at(k, rows, left)
        desc = f"circles_large: clique cover from a tree, {len(X):,} points"
        for k in timed_progress(blocks, total=len(blocks), desc=desc, enabled=progress,
                                unit="block"):  # fmt: skip
            rows = tree.perm[tree.start[k] : tree.stop[k]]
            if _out_of_time(deadline, stop):  # its diameter from its ball, unsplit
                tree._set_ball(k, X, rows, tau)
                tree.diameter[k] = 2.0 * tree.radius[k]
                continue
            D = _distances_up_to(X32[rows], sq[rows])
            tree._grow_within(k, D, X, X32, tau, principal_min)
        return tree

    def _set_ball(self, k: int, X, rows, tau) -> None:
        self.mean[k], squared = _ball(X, rows)
        self.radius[k] = float(np.sqrt(squared.max()))
        self.ball[k] = in_ball(squared, tau)

    def _grow_within(self, k, D, X, X32, tau, principal_min) -> None:
        """Split node ``k`` and its subtree from ``D``, its samples' distances (upper
        bounds), in their order in ``perm``."""
        rows = self.perm[self.start[k] : self.stop[k]].copy()
        smallest = float(tau[0])
        todo = [(k, np.arange(len(rows)))]
        while todo:
            k, local = todo.pop()
            sub = D[np.ix_(local, local)]
            self.diameter[k] = float(sub.max())
            if self.depth[k] < TOP_DEPTH:
                self._set_ball(k, X, rows[local], tau)
            if len(local) < 3 or self.diameter[k] <= smallest:
                continue
            if len(local) >= principal_min:
                left = _split(X32[rows[local]])
            else:
                p = int(np.argmax(sub[0]))
                q = int(np.argmax(sub[p]))
                left = sub[p] <= sub[q]  # nearer p (p itself) than q
            if left.all() or not left.any():  # at distance 0 under their bounds
                continue
            pair = self._split_at(k, rows[local], left)
            local = np.r_[local[left], local[~left]]
            cut = int(left.sum())
            todo += [(pair[0], local[:cut]), (pair[1], local[cut:])]

    def cover(self, tau: np.ndarray, X32, sq) -> np.ndarray:
        """Upper bounds of Circles at every τ (see the module's docstring)."""
        size = np.array(self.stop) - np.array(self.start)
        diameter = np.array(self.diameter)
        best = np.empty((self.count, len(tau)), dtype=np.int64)
        for k in reversed(range(self.count)):
            split = self.children[k]
            below = size[k] if split is None else best[split[0]] + best[split[1]]
            ball = self.ball[k]
            alone = np.minimum(below, size[k] if ball is None else ball)
            best[k] = np.where(diameter[k] <= tau, 1, alone)
        merged = self._merged(tau, best, X32, sq)
        return np.minimum(best[0], merged)

    def _merged(self, tau, best, X32, sq) -> np.ndarray:
        """Per τ, the cover with the cliques among the top nodes merged first-fit."""
        top = [k for k in range(self.count) if self.depth[k] < TOP_DEPTH]
        index = np.full(self.count, -1)  # node -> its row in ``across`` (top nodes only)
        index[top] = np.arange(len(top))
        size = np.array([self.stop[k] - self.start[k] for k in top])
        radius = np.array([self.radius[k] for k in top])
        means = np.array([self.mean[k] for k in top])
        far = _farthest_from(X32, sq, self.perm, means, [self.start[k] for k in top],
                             [self.stop[k] for k in top])  # fmt: skip
        across = np.minimum(far + radius[None, :], far.T + radius[:, None])
        out = np.empty(len(tau), dtype=np.int64)
        for i, t in enumerate(tau):
            cliques, rest, todo = [], 0, [0]
            while todo:  # the top of the cut best[:, i] chose; below the top, its counts
                k = todo.pop()
                split = self.children[k]
                if index[k] < 0:
                    rest += int(best[k, i])
                elif self.diameter[k] <= t:
                    cliques.append(int(index[k]))
                elif split is not None and best[split[0], i] + best[split[1], i] == best[k, i]:
                    todo += list(split)
                else:  # its samples one by one, or the bound for its ball
                    rest += int(best[k, i])
            by_size = sorted(cliques, key=lambda c: -size[c])  # the biggest first
            out[i] = rest + _first_fit(by_size, across, t)
        return out


def in_ball(squared: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """How many of some samples can be pairwise farther apart than each τ, at most, given
    (upper bounds of) their squared distances ``squared`` from any one point c.

    With v = x − c, |v|² ≤ the given value and pairwise inner products
    ⟨v, w⟩ = (|v|² + |w|² − |x − y|²)/2 < (|v|² + |w|² − τ²)/2, so m samples pairwise
    apart satisfy 0 ≤ |Σv|² < m·Σ|v|² − m(m − 1)τ²/2: their squared distances sum to more
    than (m − 1)τ²/2, and so do the m largest given ones, T(m). T is concave, so the m
    for which that holds are 1 .. m*: the bound. It is dimension-free; with every
    distance R (the regular simplex, which meets it) m* is the largest m below
    τ²/(τ² − 2R²) for τ > √2·R, and no bound at or below √2·R.

    >>> in_ball(np.ones(1000), np.array([1.6, 3.0])).tolist()  # 2.56/0.56 = 4.6; 9/7 = 1.3
    [4, 1]
    >>> in_ball(np.ones(1000), np.array([1.4])).tolist()  # below √2: all of them
    [1000]
    """
    top = np.cumsum(np.sort(np.asarray(squared, dtype=np.float64))[::-1])
    top *= 1.0 + 1e-12  # rounded up: the sums of upper bounds stay upper bounds
    m = np.arange(1, len(top) + 1)
    out = np.empty(len(tau), dtype=np.int64)
    for i, t in enumerate(tau):
        holds = top > (m - 1) * (t * t / 2.0)
        out[i] = max(int(holds.sum()), 1)  # an interval 1 .. m* (concave minus linear)
    return out


def _first_fit(nodes: list[int], across: np.ndarray, t: float) -> int:
    """Groups of ``nodes`` with every pair across at most ``t`` apart, first-fit."""
    groups: list[list[int]] = []
    for k in nodes:
        for g in groups:
            if (across[k, g] <= t).all():
                g.append(k)
                break
        else:
            groups.append([k])
    return len(groups)


def _ball(X: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean of ``X[rows]`` and certified upper bounds of the samples' squared distances
    from it (float64, by chunks)."""
    mean = np.zeros(X.shape[1])
    for i in range(0, len(rows), _CHUNK):
        mean += X[rows[i : i + _CHUNK]].sum(axis=0)
    mean /= len(rows)
    squared = np.empty(len(rows))
    for i in range(0, len(rows), _CHUNK):
        diff = X[rows[i : i + _CHUNK]] - mean
        squared[i : i + _CHUNK] = np.einsum("ij,ij->i", diff, diff)
    # the rounding of the differences and the sum of squares: relative (d + 2)·u at most
    squared *= 1.0 + 4.0 * (X.shape[1] + 2) * _U64
    return mean, squared


def _distances_up_to(A32: np.ndarray, sq: np.ndarray) -> np.ndarray:
    """Certified upper bounds of the distances among the rows of ``A32`` (float32 Gram;
    ``sq``: the float64 squared norms)."""
    d2 = sq[:, None] + sq[None, :] - 2.0 * (A32 @ A32.T).astype(np.float64)
    d2 += _squared_error(A32.shape[1], _U32, sq[:, None], sq[None, :])
    np.maximum(d2, 0.0, out=d2)
    np.fill_diagonal(d2, 0.0)  # a sample is at distance 0 from itself, not at its bound
    return np.sqrt(d2, out=d2)


def _farthest_from(X32, sq, perm, means, starts, stops) -> np.ndarray:
    """``far[a, b]``: a certified upper bound of ``max |x − means[b]|`` over the rows x of
    ``X32[perm[starts[a]:stops[a]]]`` (by chunks of rows, never all n × len(means)). Like
    the tiles of ``circles_large``, the product is of float32 roundings of both sides,
    which the bound covers; the squared norms are the float64 ones."""
    m32 = means.astype(np.float32)
    msq = np.einsum("ij,ij->i", means, means)
    far = np.zeros((len(means), len(means)))
    for i in range(0, len(perm), _CHUNK):
        rows = perm[i : i + _CHUNK]
        a, s = X32[rows], sq[rows]
        d2 = s[:, None] + msq[None, :] - 2.0 * (a @ m32.T).astype(np.float64)
        d2 += _squared_error(X32.shape[1], _U32, s[:, None], msq[None, :])
        dist = np.sqrt(np.maximum(d2, 0.0))
        for k, (lo, hi) in enumerate(zip(starts, stops, strict=True)):
            lo, hi = max(lo - i, 0), min(hi - i, len(a))
            if lo < hi:
                np.maximum(far[k], dist[lo:hi].max(axis=0), out=far[k])
    return far


def _split(A32: np.ndarray) -> np.ndarray:
    """Left half of the rows: the sign of their principal component, then 2-means steps."""
    centre = A32.mean(axis=0)
    v = np.random.default_rng(len(A32)).standard_normal(A32.shape[1], dtype=np.float32)
    for _ in range(POWER_STEPS):
        w = A32 @ v - centre @ v
        v = A32.T @ w - centre * w.sum()
        v /= max(float(np.linalg.norm(v)), 1e-30)
    p = A32 @ v
    left = p < np.median(p)
    if not left.any():
        left = p < p.max()
    for _ in range(LLOYD_STEPS):
        if left.all() or not left.any():
            break
        c1, c2 = A32[left].mean(axis=0), A32[~left].mean(axis=0)
        # |x − c1|² < |x − c2|²  ⇔  2 x·(c2 − c1) < |c2|² − |c1|²
        new = 2.0 * (A32 @ (c2 - c1)) < float(c2 @ c2 - c1 @ c1)
        if (new == left).all():
            break
        left = new
    return left
