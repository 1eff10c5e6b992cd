"""One streamed pass over the pairs of a large set: never an n × n matrix.

Row blocks of the upper triangle are multiplied in float32 (GEMM runs near its
peak there) into preallocated buffers; near-duplicate pairs, whose float32 GEMM
distance is mostly round-off, are recomputed in float64 from the row difference
(the logic of :mod:`.distances`), and the diagonal is skipped explicitly (float32
self-distances come out near 1e-3, which would wreck the histogram's range).

Two passes, because the Circles thresholds and the Gaussian bandwidth are
quantiles of the very distances being streamed:

1. :func:`distance_pass` fills a :class:`~.histogram.LogDistanceHistogram`
   (every energy with certified bounds, the mean distance, quantiles within one
   bin, i.e. a factor ``2 ** (1 / 1024)`` ≈ 1.0007 in distance);
2. :func:`threshold_pass`, once the thresholds and bandwidth are fixed from the
   pooled histograms, counts the pairs at distance ≤ τ and each point's degree
   at every τ, and sums the squared kernel ``Σ_{i<j} K_ij²`` (Vendi of order 2).

Besides the pairs, :func:`dual_spectrum` streams the rows once into the d × d covariance
(cosine Vendi's dual form), as :mod:`.dask_engine` and :mod:`.torch_engine` do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..core import counts_as_pair_work, progress
from ._blockwise import dual_eigenvalues
from ._distances import _SAFE_EXPONENT as _SAFE_EXPONENT64
from ._distances import _pow2_scale, refine_close_pairs, row_norms
from ._histogram import LogDistanceHistogram

T = TypeVar("T")

#: Rows per block. 2048² float32 = 16 MiB per buffer: a few of them, never n × n.
BLOCK = 2048
#: float32 round-off of the GEMM identity is ~1e-6 of the norms, so pairs below this share of
#: the norms are recomputed in float64 (1e-4, the float64 threshold, left 1% errors at the edge).
_CLOSE32 = 1e-2
_CLOSE64 = 1e-4
#: Show progress bars for passes over more pairs than this (about 3 s of streaming).
PROGRESS_PAIRS = 1.5e8


#: Euclidean sets whose largest coordinate lies outside 2**±this are streamed divided by a
#: power of two (exact) and their distances scaled back: beyond it the squares of the GEMM
#: identity over- or underflow (float64 squares at 2**±400 as in :mod:`.distances`; float32
#: ones reach 3.4e38 near 2**64, less d).
_SAFE_EXPONENT = {np.float64: _SAFE_EXPONENT64, np.float32: 48}


def _set_scale(X: np.ndarray, distance: str, dtype) -> float:
    """The power of two the set's rows are divided by before squaring (1 for most sets)."""
    if distance != "euclidean" or X.size == 0:
        return 1.0
    top = float(np.max(np.abs(X)))
    safe = _SAFE_EXPONENT[np.dtype(dtype).type]
    if top == 0 or 2.0**-safe <= top <= 2.0**safe:
        return 1.0
    if np.dtype(dtype) == np.float32 and top < 2.0**-100:  # float32 distances would be 0
        raise ValueError(
            f"The Euclidean distances of these embeddings (coordinates up to {top:.3g}) lie "
            "below the float32 range of this pass. Use precision='float64' or multiply the "
            "embeddings by a constant first."
        )
    return float(_pow2_scale(top))


def _prepare(X: np.ndarray, distance: str, dtype) -> tuple[np.ndarray, np.ndarray | None, float]:
    scale = _set_scale(X, distance, dtype)
    if scale != 1.0:
        X = X / scale
    X32 = np.ascontiguousarray(X, dtype=dtype)
    if distance == "euclidean":
        # float64 norms: exact enough for the identity
        return X32, np.einsum("ij,ij->i", X, X), scale
    if distance in ("tanimoto", "jaccard"):
        return X32, X32.sum(axis=1, dtype=np.float64), scale  # bit counts, exact
    return X32, None, scale


def _scale_back(G: np.ndarray, scale: float) -> None:
    """Distances of the scaled rows back to the set's units, refusing what the dtype can't hold."""
    with np.errstate(over="ignore", invalid="ignore"):
        G *= G.dtype.type(scale)
    if not np.isfinite(G).all():
        raise range_error(str(G.dtype), scale)


def range_error(dtype: str, scale: float) -> ValueError:
    """The refusal of a set whose distances the pass's ``dtype`` cannot hold."""
    return ValueError(
        f"The Euclidean distances of these embeddings exceed the {dtype} range of the "
        f"streamed pass (coordinates near {scale:.3g}). Divide the embeddings by a constant "
        "first; scale-free families (Vendi with cosine, richness) do not change."
    )


class _Blocks:
    """Distances of the upper-triangle block pairs, float32, into reused buffers."""

    def __init__(
        self, X: np.ndarray, distance: str, block: int = BLOCK, dtype=np.float32, prepared=None
    ):
        self.X, self.distance, self.block = X, distance, block
        # ``prepared``: (X32, sq, scale) from :func:`_prepare`, e.g. cached on a dask worker;
        # X32 and sq are of the rows divided by ``scale``.
        self.X32: np.ndarray
        self.sq: np.ndarray | None
        self.scale: float
        self.X32, self.sq, self.scale = (
            _prepare(X, distance, dtype) if prepared is None else prepared
        )
        self.n = X.shape[0]
        b = min(block, self.n)
        self._G = np.empty((b, b), dtype=dtype)
        self._W = np.empty((b, b), dtype=dtype)
        self.close = _CLOSE32 if dtype == np.float32 else _CLOSE64
        self.upper = np.triu(np.ones((b, b), dtype=bool), k=1)  # strictly above the diagonal

    def starts(self) -> list[int]:
        return list(range(0, self.n, self.block))

    def distances(self, i: int, j: int, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        G = self._G[: len(A), : len(B)]
        np.matmul(A, B.T, out=G)
        W = self._W[: len(A), : len(B)]
        if self.distance == "cosine":
            np.subtract(self._G.dtype.type(1.0), G, out=G)
            np.maximum(G, 0.0, out=G)
            close = G < self.close
        elif self.distance == "euclidean":
            assert self.sq is not None  # squared norms are prepared for these distances
            norms = self.sq[i : i + len(A), None] + self.sq[None, j : j + len(B)]
            G *= -2.0
            G += norms
            close = G < self.close * norms
            np.maximum(G, 0.0, out=G)
            np.sqrt(G, out=G)
        else:  # tanimoto / jaccard: 1 - |a & b| / |a | b|, integer counts exact in float32
            assert self.sq is not None
            np.add(self.sq[i : i + len(A), None], self.sq[None, j : j + len(B)], out=W)
            W -= G
            np.divide(G, W, out=G, where=W > 0)
            G[W <= 0] = 1.0  # two empty fingerprints: identical, distance 0
            np.subtract(self._G.dtype.type(1.0), G, out=G)
            np.maximum(G, 0.0, out=G)
            close = None
        if close is not None and close.any():
            rows_a, rows_b = self.X[i : i + len(A)], self.X[j : j + len(B)]
            if self.scale != 1.0:  # in the units of G until scaled back below
                rows_a, rows_b = rows_a / self.scale, rows_b / self.scale
            refine_close_pairs(G, rows_a, rows_b, self.distance, close)
        if self.scale != 1.0:
            _scale_back(G, self.scale)
        return G


def _walk(
    X: np.ndarray, distance: str, block: int, desc: str, show: bool | None, dtype=np.float32
) -> Iterator[tuple[int, int, np.ndarray, np.ndarray | None]]:
    """(i, j, D, keep) per block pair; ``keep`` masks the strict upper triangle on i == j."""
    blocks = _Blocks(X, distance, block, dtype)
    n = blocks.n
    if show is None:
        show = n * (n - 1) / 2 > PROGRESS_PAIRS
    starts = blocks.starts()
    pairs = [(i, j) for i in starts for j in starts if j >= i]
    for i, j in progress(pairs, total=len(pairs), desc=desc, enabled=show, unit="block"):
        A, B = blocks.X32[i : i + block], blocks.X32[j : j + block]
        D = blocks.distances(i, j, A, B)
        yield i, j, D, (blocks.upper[: D.shape[0], : D.shape[1]] if i == j else None)


def _row_pairs(blocks: _Blocks, i: int) -> Iterator[tuple[int, int, np.ndarray, np.ndarray | None]]:
    """(i, j, D, keep) for the block pairs (i, j ≥ i) of row block ``i``, as :func:`_walk`."""
    A = blocks.X32[i : i + blocks.block]
    for j in range(i, blocks.n, blocks.block):
        D = blocks.distances(i, j, A, blocks.X32[j : j + blocks.block])
        yield i, j, D, (blocks.upper[: D.shape[0], : D.shape[1]] if i == j else None)


def _per_row(walk: Iterable[tuple], new: Callable[[], T], add: Callable[..., T]) -> Iterator[T]:
    """One partial per row block: ``add(part, i, j, D, keep)`` over that row's block pairs."""
    part, row = None, None
    for i, j, D, keep in walk:
        if i != row:
            if part is not None:
                yield part
            part, row = new(), i
        part = add(part, i, j, D, keep)
    if part is not None:
        yield part


#: Partial results are combined this many at a time, adjacent ones left to right (see
#: :func:`tree_reduce`). The in-memory and the dask engine (:mod:`.dask_engine`) share the
#: per-row partials and the tree, so their float sums agree bit for bit.
TREE_FANIN = 4


def tree_reduce(parts: Iterable[T], combine: Callable[..., T], fanin: int = TREE_FANIN) -> T:
    """Combine ``parts`` (in order) as a tree: groups of ``fanin`` adjacent items per level.

    Consumes ``parts`` lazily and holds at most ``fanin`` items per level, so an in-memory
    pass keeps O(fanin log R) partials alive; given dask ``Delayed`` parts and a delayed
    ``combine`` it builds the same tree as a graph. A lone leftover item moves up unchanged.

    Examples
    --------
    >>> show = lambda *xs: "(" + "+".join(map(str, xs)) + ")"
    >>> tree_reduce(range(6), show, fanin=4)
    '((0+1+2+3)+(4+5))'
    >>> tree_reduce(range(4), show, fanin=4), tree_reduce(range(1), show)
    ('(0+1+2+3)', 0)
    """
    levels: list[list] = []
    for item in parts:
        level = 0
        while True:
            if len(levels) == level:
                levels.append([])
            levels[level].append(item)
            if len(levels[level]) < fanin:
                break
            item, levels[level] = combine(*levels[level]), []
            level += 1
    if not levels:
        raise ValueError("tree_reduce needs at least one part.")
    carry: T | None = None
    for items in levels:
        # The carry comes from the level below, i.e. after this level's items in row order.
        group = items + ([] if carry is None else [carry])
        if group:
            carry = group[0] if len(group) == 1 else combine(*group)
    assert carry is not None  # at least one part (checked above)
    return carry


def _merge_histograms(*parts: LogDistanceHistogram) -> LogDistanceHistogram:
    return parts[0].merged(list(parts[1:]))


def _add_to_histogram(hist: LogDistanceHistogram, i, j, D, keep) -> LogDistanceHistogram:
    hist.add(D[keep] if keep is not None else D)
    return hist


def row_histogram(blocks: _Blocks, i: int) -> LogDistanceHistogram:
    """Log-distance histogram of the pairs of row block ``i`` (with the blocks j ≥ i)."""
    parts = _per_row(_row_pairs(blocks, i), LogDistanceHistogram, _add_to_histogram)
    return next(parts)


@counts_as_pair_work
def distance_pass(
    X: np.ndarray,
    distance: str,
    *,
    block: int = BLOCK,
    desc: str = "distances",
    show: bool | None = None,
    precision: str = "float64",
) -> LogDistanceHistogram:
    """Log-distance histogram (and exact sum) of every unordered pair of prepared rows X.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    >>> h = distance_pass(X, "euclidean")
    >>> h.n_pairs, round(h.mean_distance(), 6)
    (3.0, 6.666667)
    """
    dtype = np.float32 if precision == "float32" else np.float64
    walk = _walk(X, distance, block, desc, show, dtype)
    return tree_reduce(_per_row(walk, LogDistanceHistogram, _add_to_histogram), _merge_histograms)


@dataclass
class ThresholdCounts:
    """What :func:`threshold_pass` accumulates for one set."""

    taus: np.ndarray
    #: Unordered pairs at distance ≤ τ, per τ.
    pairs: np.ndarray
    #: degrees[i, k]: neighbours of point i at distance ≤ taus[k] (point i itself excluded).
    degrees: np.ndarray
    #: Σ_{i<j} K_ij² for the kernel given (NaN without one).
    sum_k2: float


#: Pairs whose GEMM distance is within this share of a threshold are recomputed from the row
#: difference before counting (float32 GEMM distances are off by ~1e-6 relative, float64 ones
#: by ~1e-13).
_NEAR = {np.float32: 1e-5, np.float64: 1e-10}


def _pair_distances(X: np.ndarray, r: np.ndarray, c: np.ndarray, distance: str) -> np.ndarray:
    """float64 distances of the row pairs (r, c) from the rows themselves."""
    A, B = X[r].astype(np.float64), X[c].astype(np.float64)
    if distance in ("tanimoto", "jaccard"):
        both = np.einsum("ij,ij->i", A, B)
        union = A.sum(axis=1) + B.sum(axis=1) - both
        return np.where(union > 0, 1.0 - both / np.where(union > 0, union, 1.0), 0.0)
    diff = A - B
    if distance == "cosine":
        return np.einsum("ij,ij->i", diff, diff) / 2.0
    return row_norms(diff)  # scaled: differences near 1e160 must not square to inf


def _settle_near_thresholds(k, D, X, i, j, distance, taus, tausD, keep) -> None:
    """Recount, from the row difference, the pairs whose distance sits next to a threshold."""
    tol = _NEAR[D.dtype.type]
    above = np.append(tausD, np.inf).astype(D.dtype)[k]
    below = np.insert(tausD, 0, -np.inf).astype(D.dtype)[k]
    near = (above - D <= tol * above) | (D - below <= tol * np.abs(below))
    if keep is not None:
        near &= keep
    r, c = np.nonzero(near)
    for start in range(0, r.size, 65536):  # bounded memory: 65536 row pairs at a time
        rr, cc = r[start : start + 65536], c[start : start + 65536]
        exact = _pair_distances(X, i + rr, j + cc, distance)
        k[rr, cc] = np.searchsorted(taus, exact, side="left")


@counts_as_pair_work
def threshold_pass(
    X: np.ndarray,
    distance: str,
    taus: np.ndarray | None = None,
    kernel: Callable[[np.ndarray], np.ndarray] | None = None,
    *,
    block: int = BLOCK,
    desc: str = "thresholds",
    show: bool | None = None,
    precision: str = "float64",
) -> ThresholdCounts:
    """Pairs and degrees at every threshold, and Σ K_ij² over pairs, in one pass.

    Counts are exact: pairs whose GEMM distance lies within ``_NEAR`` (relative) of a
    threshold are recomputed in float64 from the difference of their rows before they
    are counted. float64 GEMM (the default) costs little more here than float32: the
    binning, not the product, dominates a pass.

    ``taus`` must be sorted ascending; ``kernel`` maps a float32 distance block to
    similarities (e.g. the Gaussian kernel of a fixed bandwidth).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> c = threshold_pass(X, "euclidean", np.array([1.0, 2.0]), lambda d: 1.0 - d / 4)
    >>> c.pairs.tolist(), c.degrees.tolist(), c.sum_k2
    ([1, 2], [[1, 1], [1, 2], [0, 1]], 0.875)
    """
    n = X.shape[0]
    taus = np.empty(0) if taus is None else np.asarray(taus, dtype=np.float64)
    if np.any(np.diff(taus) < 0):
        raise ValueError("threshold_pass needs the thresholds sorted ascending.")
    m = taus.size
    # bins[i, k]: neighbours of i whose smallest threshold at or above the distance is taus[k]
    # (k = m: above every threshold); the cumulative sum over k gives the degrees.
    bins = np.zeros((n, m + 1), dtype=np.int64) if m else None
    dtype = np.float32 if precision == "float32" else np.float64
    count = _BlockCounter(X, distance, taus, dtype, kernel, bins)
    sums = _per_row(_walk(X, distance, block, desc, show, dtype), float, count)
    sum_k2 = tree_reduce(sums, _add)  # consumes the walk: the bins fill on the way
    return finish_counts(taus, bins, n, sum_k2 if kernel is not None else None)


def _add(*parts: float) -> float:
    return sum(parts[1:], parts[0])


class _BlockCounter:
    """Adds one block pair's threshold bins into ``bins`` and Σ K² to a running sum.

    Row r of the set is ``bins[r - offset]`` (a dask task holds the rows from its row block
    on). Integer counts: any order of adding them gives the same bins.
    """

    def __init__(self, X, distance, taus, dtype, kernel, bins, offset: int = 0):
        self.X, self.distance, self.taus, self.kernel = X, distance, taus, kernel
        self.bins, self.offset = bins, offset
        self.tausD = taus.astype(dtype)

    def __call__(self, sum_k2: float, i: int, j: int, D: np.ndarray, keep) -> float:
        if self.kernel is not None:
            K = self.kernel(D)
            K *= K
            sum_k2 += float((K if keep is None else K[keep]).sum(dtype=np.float64))
        if self.bins is None:
            return sum_k2
        m, bins, taus, tausD = self.taus.size, self.bins, self.taus, self.tausD
        i0, j0 = i - self.offset, j - self.offset
        k = np.searchsorted(tausD, D, side="left").astype(np.int64)
        _settle_near_thresholds(k, D, self.X, i, j, self.distance, taus, tausD, keep)
        rows, cols = D.shape
        if keep is not None:
            k[~keep] = m  # lower triangle and diagonal: counted via the transpose below
            k = np.where(keep, k, k.T)  # symmetric block: row counts cover both directions
            np.fill_diagonal(k, m + 1)  # the point itself: a bin past the end, dropped
            flat = (np.arange(rows)[:, None] * (m + 2) + k).ravel()
            bins[i0 : i0 + rows] += np.bincount(flat, minlength=rows * (m + 2)).reshape(
                rows, m + 2
            )[:, : m + 1]
        else:
            flat = (np.arange(rows)[:, None] * (m + 1) + k).ravel()
            bins[i0 : i0 + rows] += np.bincount(flat, minlength=rows * (m + 1)).reshape(rows, m + 1)
            flat = (np.arange(cols)[None, :] * (m + 1) + k).ravel()
            bins[j0 : j0 + cols] += np.bincount(flat, minlength=cols * (m + 1)).reshape(cols, m + 1)
        return sum_k2


def row_counts(
    blocks: _Blocks,
    i: int,
    taus: np.ndarray,
    kernel: Callable[[np.ndarray], np.ndarray] | None,
    bins: np.ndarray | None,
) -> float:
    """Row block ``i``'s share of :func:`threshold_pass`: its bins added into ``bins`` (rows
    i, i + 1, ...), and its Σ K² returned."""
    count = _BlockCounter(blocks.X, blocks.distance, taus, blocks.X32.dtype, kernel, bins, i)
    return next(_per_row(_row_pairs(blocks, i), float, count))


def finish_counts(
    taus: np.ndarray, bins: np.ndarray | None, n: int, sum_k2: float | None
) -> ThresholdCounts:
    """Degrees and pair counts from the summed bins."""
    m = taus.size
    degrees = np.zeros((n, 0), dtype=np.int64) if bins is None else np.cumsum(bins[:, :m], axis=1)
    pairs = degrees.sum(axis=0) // 2
    return ThresholdCounts(taus, pairs, degrees, float("nan") if sum_k2 is None else sum_k2)


#: Rows per block of :func:`gram`: 4096, as ``families.dual_kernel_spectrum`` blocks them, so
#: that the two sum the same products in the same order (equal bit for bit on float64 rows).
GRAM_ROWS = 4096


def gram(X: np.ndarray, scale: float = 1.0, *, rows: int = GRAM_ROWS) -> np.ndarray:
    """``Σ_i (scale · x_i)(scale · x_i)ᵀ`` (d × d) in float64, one row block at a time.

    Examples
    --------
    >>> gram(np.array([[1.0, 0.0], [1.0, 2.0]]), rows=1).tolist()
    [[2.0, 2.0], [2.0, 4.0]]
    """
    X = np.asarray(X)
    C = np.zeros((X.shape[1], X.shape[1]))
    for s in range(0, X.shape[0], rows):
        B = np.asarray(X[s : s + rows], dtype=np.float64) * scale
        C += B.T @ B
    return C


def dual_spectrum(X: np.ndarray) -> np.ndarray:
    """Eigenvalues of ``XᵀX / n`` (cosine Vendi's dual form; rows already unit), ascending.

    They are the nonzero eigenvalues of the n × n kernel ``X Xᵀ / n`` (padded with zeros
    when d > n); the d × d form is the cheap one while d < n.

    Examples
    --------
    >>> dual_spectrum(np.array([[1.0, 0.0], [0.0, 1.0]])).tolist()
    [0.5, 0.5]
    """
    n = np.asarray(X).shape[0]
    return dual_eigenvalues(gram(X, float(np.sqrt(1.0 / n))))
