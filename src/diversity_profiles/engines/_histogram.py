"""A fine histogram of log pairwise distances, filled block by block.

One pass over the pairs yields, for every bin, the count and the first two
moments of ``log d`` inside the bin. From it come, without revisiting the pairs:
the energy for any number of exponents (``mean d^-s`` is a Laplace transform of
the log-distance distribution), distance quantiles (within one bin: the Circles
grid of the large-n path, see ``families._tau_domain``; the exact path takes exact
quantiles of the distance matrices) and the exact mean distance (summed separately).
"""

from __future__ import annotations

import numpy as np

#: Bins per factor of two in distance; the bin width in log d is ln(2) / 1024 ≈ 6.8e-4.
#: High-dimensional distances concentrate, so the energy domain reaches s ≈ 100 there; at
#: 256 bins per octave the error reached 2e-6 at such s, at 1024 it is below 1e-8.
BINS_PER_OCTAVE = 1024
#: Covered distances: 2**-64 .. 2**64 relative to the anchor, a power of two near the largest
#: distance of the first block added (so 1e-170 and 1e170 are covered like 1). Distances
#: outside are clipped to the end bins and counted; the energy refuses such a histogram.
OCTAVES = 64
#: Pairs per piece of :meth:`LogDistanceHistogram.add` (8 MiB of float64 distances): a
#: 2048² block took 85 ms whole and 58 ms in such pieces on the benchmark machine, 66 ms in
#: pieces of 2^18 or 2^19 (the per-piece merge of occupied bins costs more there).
ADD_PIECE = 2**20


class LogDistanceHistogram:
    """Running summary of the positive pairwise distances of one set.

    Each unordered pair is added once, optionally with a weight (a bootstrap
    resample counts pair (i, j) ``m_i * m_j`` times). Zero distances
    (duplicates) are counted apart because their log is -inf.

    Examples
    --------
    >>> h = LogDistanceHistogram()
    >>> h.add(np.array([1.0, 2.0, 4.0, 0.0]))
    >>> h.n_pairs, h.n_zero, h.mean_distance()
    (4.0, 1.0, 1.75)
    >>> float(np.round(h.mean_power(1.0)[0], 6))   # mean of 1/d over positive pairs
    0.583333
    """

    def __init__(self) -> None:
        # Sparse: only the occupied bins (sorted indices into the 2 * OCTAVES * BINS_PER_OCTAVE
        # bins) and their sums are kept, so a set of n samples holds at most n(n-1)/2 bins:
        # a dense histogram took 3 MB per set whatever its size (3 GB for 1,000 pairs).
        self.bins = np.empty(0, dtype=np.intp)
        self._counts = np.empty(0)
        # Moments of the offset u = log d - (bin's lower edge), kept small so the
        # variance does not cancel.
        self._sum_u = np.empty(0)
        self._sum_u2 = np.empty(0)
        self.n_pairs = 0.0
        self.n_zero = 0.0
        self.sum_d = 0.0
        #: log of the anchor (a power of two), fixed by the first positive distance added.
        self.anchor: float | None = None
        #: Positive pairs outside the covered range (clipped to the end bins).
        self.n_clipped = 0.0

    def __setstate__(self, state: dict) -> None:
        # Histograms pickled before they were sparse held the three dense arrays.
        state = dict(state)
        dense = [state.pop(key, None) for key in ("counts", "sum_u", "sum_u2")]
        self.__dict__.update(state)
        if dense[0] is not None:
            self.set_dense(*dense)

    #: Bins of the whole covered range (what a dense histogram holds).
    SIZE = 2 * OCTAVES * BINS_PER_OCTAVE

    def _dense(self, values: np.ndarray) -> np.ndarray:
        out = np.zeros(self.SIZE)
        out[self.bins] = values
        return out

    @property
    def counts(self) -> np.ndarray:
        """Pair counts (weights) of every bin, dense (``SIZE`` floats; formed on request)."""
        return self._dense(self._counts)

    @property
    def sum_u(self) -> np.ndarray:
        """Per bin, the sum of the offsets of log d from the bin's lower edge (dense)."""
        return self._dense(self._sum_u)

    @property
    def sum_u2(self) -> np.ndarray:
        """Per bin, the sum of the squared offsets (dense)."""
        return self._dense(self._sum_u2)

    def counts_of_bins(self) -> np.ndarray:
        """The pair counts of the occupied bins :attr:`bins` (aligned with them)."""
        return self._counts

    def set_dense(self, counts, sum_u, sum_u2) -> None:
        """Replace the bins with dense arrays of ``SIZE`` (e.g. filled on a device)."""
        counts = np.asarray(counts, dtype=np.float64)
        self.bins = np.flatnonzero(counts)
        self._counts = counts[self.bins]
        self._sum_u = np.asarray(sum_u, dtype=np.float64)[self.bins]
        self._sum_u2 = np.asarray(sum_u2, dtype=np.float64)[self.bins]

    @property
    def nbytes(self) -> int:
        """Bytes held by the bins (four numbers per occupied bin)."""
        return int(self.bins.nbytes + 3 * self._counts.nbytes)

    def _accumulate(self, index: np.ndarray, parts: list[np.ndarray]) -> None:
        """Add ``parts`` (counts, sum_u, sum_u2 for the sorted, distinct bins ``index``)."""
        if not self.bins.size:
            self.bins, (self._counts, self._sum_u, self._sum_u2) = index, parts
            return
        if np.array_equal(index, self.bins):  # the same bins again: no reallocation
            for mine, theirs in zip((self._counts, self._sum_u, self._sum_u2), parts, strict=True):
                mine += theirs
            return
        union = np.union1d(self.bins, index)
        mine_at, theirs_at = np.searchsorted(union, self.bins), np.searchsorted(union, index)
        merged = []
        for mine, theirs in zip((self._counts, self._sum_u, self._sum_u2), parts, strict=True):
            out = np.zeros(union.size)
            out[mine_at] = mine
            out[theirs_at] += theirs  # the same order of additions as dense bins
            merged.append(out)
        self.bins, (self._counts, self._sum_u, self._sum_u2) = union, merged

    @staticmethod
    def _scale() -> float:
        return BINS_PER_OCTAVE / np.log(2.0)

    def add(self, d: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Add a block of distances (each unordered pair once), optionally weighted.

        In pieces of ADD_PIECE pairs, so that the dozen elementwise passes over a piece read
        it from cache rather than memory (the streamed distance pass is mostly this)."""
        d = np.asarray(d).ravel()
        if d.size == 0:
            return
        w = None if weights is None else np.asarray(weights, np.float64).ravel()
        if self.anchor is None:  # from the whole block's positive distances, as at once
            top = float(np.max(d, initial=0.0, where=d > 0))
            if top > 0:
                self.anchor = float(np.frexp(top)[1]) * np.log(2.0)
        for start in range(0, d.size, ADD_PIECE):
            piece = d[start : start + ADD_PIECE].astype(np.float64, copy=False)
            self._add_piece(piece, None if w is None else w[start : start + ADD_PIECE])

    def _add_piece(self, d: np.ndarray, w: np.ndarray | None) -> None:
        if w is None:  # the common, streaming case: no weight arrays at all
            self.n_pairs += d.size
            self.sum_d += float(d.sum())
            positive = d if d.min() > 0 else d[d > 0]
            self.n_zero += d.size - positive.size
        else:
            total = float(w.sum())
            self.n_pairs += total
            self.sum_d += float(np.dot(d, w))
            keep = d > 0
            positive, w = d[keep], w[keep]
            self.n_zero += total - float(w.sum())
        if positive.size == 0:
            return
        size = self.SIZE
        assert self.anchor is not None  # set by add from a positive distance
        # position = log(d) * bins-per-unit + offset, computed in place: this runs on every pair.
        position = np.log(positive)
        position -= self.anchor
        position *= self._scale()
        position += OCTAVES * BINS_PER_OCTAVE
        outside = (position < 0.0) | (position > size - 1e-9)
        if outside.any():
            self.n_clipped += float(outside.sum() if w is None else w[outside].sum())
        np.clip(position, 0.0, size - 1e-9, out=position)
        index = position.astype(np.intp)
        u = position
        u -= index
        u /= self._scale()
        # Bin over the piece's own range of bins only (a dense bincount over all SIZE bins
        # per piece would cost 3 MB per set), then keep the occupied ones.
        low = int(index.min())
        index -= low
        span = int(index.max()) + 1
        counts = np.bincount(index, weights=w, minlength=span).astype(np.float64, copy=False)
        wu = u if w is None else w * u
        sum_u = np.bincount(index, weights=wu, minlength=span)
        wu *= u
        sum_u2 = np.bincount(index, weights=wu, minlength=span)
        occupied = np.flatnonzero(counts)
        self._accumulate(occupied + low, [counts[occupied], sum_u[occupied], sum_u2[occupied]])

    def _occupied(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Occupied bins: counts, mean log d and variance of log d inside each."""
        occ, c = self.bins, self._counts
        mean_u = self._sum_u / c
        var_u = np.maximum(self._sum_u2 / c - mean_u**2, 0.0)
        lower_edge = (occ - OCTAVES * BINS_PER_OCTAVE) / self._scale() + (self.anchor or 0.0)
        return c, lower_edge + mean_u, var_u

    def mean_power(self, s: np.ndarray | float) -> np.ndarray:
        """Mean of ``d**-s`` over the positive pairs, for every ``s`` at once.

        Within a bin, ``E[exp(-s x)] = exp(-s m) (1 + s^2 v / 2 + O(s^3 w^3))`` for
        a bin of width w; w = 6.8e-4 keeps the neglected term below 1e-6 relative
        for s up to about 150 (measured: 2e-9 at s = 105 on 768-d Gaussian data).
        """
        s = np.atleast_1d(np.asarray(s, dtype=np.float64))
        if self.n_clipped:
            raise ValueError(
                f"{self.n_clipped:g} pairwise distance(s) of this set lie more than a factor "
                f"2**{OCTAVES} away from the largest, beyond what the energy profile resolves. "
                f"Such pairs are near-duplicates at round-off level: drop the duplicate "
                f"rows, or leave 'energy' out of families."
            )
        c, m, v = self._occupied()
        total = c.sum()
        # Factor out the largest term so that large s neither overflows nor underflows.
        log_terms = np.log(c)[None, :] - s[:, None] * m[None, :]
        top = log_terms.max(axis=1, keepdims=True)
        corr = 1.0 + 0.5 * (s[:, None] ** 2) * v[None, :]
        out = np.exp(top[:, 0]) * np.sum(np.exp(log_terms - top) * corr, axis=1) / total
        return out

    def mean_power_bounds(self, s: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """Certified (lower, upper) bounds on the mean of ``d**-s`` over the positive pairs.

        Inside a bin ``log d`` lies in ``[a, a + w]`` and ``exp(-s x)`` is convex in x: Jensen
        bounds the bin's mean of ``d**-s`` below by its value at the bin's mean log distance,
        and the chord through the bin's edges bounds it above. Both hold for every ``s`` at
        once; they bound the mean of the distances *as added* (float32 distances, for the
        streamed pass, carry their own ~1e-7 relative round-off). A pair clipped into the
        end bin (a factor 2**64 from the largest distance) leaves the bracket [0, inf].

        Examples
        --------
        >>> h = LogDistanceHistogram()
        >>> h.add(np.array([1.0, 2.0, 4.0]))
        >>> lo, hi = h.mean_power_bounds([1.0, 2.0])
        >>> bool(np.all(lo <= [7 / 12, 21 / 48])), bool(np.all(hi >= [7 / 12, 21 / 48]))
        (True, True)
        """
        s = np.atleast_1d(np.asarray(s, dtype=np.float64))
        occ, c = self.bins, self._counts
        width = 1.0 / self._scale()
        frac = np.clip(self._sum_u / c / width, 0.0, 1.0)  # where the mean sits in the bin
        edge = (occ - OCTAVES * BINS_PER_OCTAVE) * width + (self.anchor or 0.0)
        total = c.sum()

        def mean_of(log_terms: np.ndarray) -> np.ndarray:
            top = log_terms.max(axis=1, keepdims=True)
            return np.exp(top[:, 0]) * np.exp(log_terms - top).sum(axis=1) / total

        sc = s[:, None]
        lower = mean_of(np.log(c)[None, :] - sc * (edge + frac * width)[None, :])
        with np.errstate(divide="ignore"):
            chord = np.log((1.0 - frac)[None, :] + frac[None, :] * np.exp(-sc * width))
        upper = mean_of(np.log(c)[None, :] - sc * edge[None, :] + chord)
        if self.n_clipped:  # pairs outside the covered range: no certified bracket
            lower[:], upper[:] = 0.0, np.inf
        return lower, upper

    def log_moments(self) -> tuple[float, float]:
        """Mean and standard deviation of log d over positive pairs."""
        c, m, v = self._occupied()
        total = c.sum()
        mean = float(np.dot(c, m) / total)
        second = float(np.dot(c, v + (m - mean) ** 2) / total)
        return mean, float(np.sqrt(second))

    def quantile(self, probs: np.ndarray) -> np.ndarray:
        """Distance quantiles over all pairs (zeros included), interpolated in log d."""
        probs = np.asarray(probs, dtype=np.float64)
        c, m, _ = self._occupied()
        cum = np.concatenate([[self.n_zero], self.n_zero + np.cumsum(c)]) / self.n_pairs
        # Interpolate the empirical CDF between bin centres (in log space).
        log_points = np.concatenate([[m[0]], m])
        out = np.exp(np.interp(probs, cum, log_points))
        out[probs * self.n_pairs < self.n_zero] = 0.0
        return out

    def mean_distance(self) -> float:
        """Exact mean over all added pairs (NaN without pairs: a resample of one sample)."""
        return self.sum_d / self.n_pairs if self.n_pairs else float("nan")

    def merged(self, others: list[LogDistanceHistogram]) -> LogDistanceHistogram:
        """The histogram of this set's pairs and those of ``others`` together (pooling)."""
        out = LogDistanceHistogram()
        anchors = [h.anchor for h in [self, *others] if h.anchor is not None]
        out.anchor = max(anchors, default=None)
        for h in [self, *others]:
            # Anchors are powers of two: re-anchoring shifts whole octaves of bins; what would
            # fall off the low end joins the first bin (and is counted as clipped).
            shift = 0
            if h.anchor is not None and out.anchor is not None:  # out.anchor is set if any is
                shift = round((out.anchor - h.anchor) / np.log(2.0))
            shift *= BINS_PER_OCTAVE
            index = h.bins - shift
            parts = [h._counts, h._sum_u, h._sum_u2]
            first = int(np.searchsorted(index, 0))  # bins shifted below the first one
            if first:
                low = [p[:first].sum() for p in parts]
                out.n_clipped += low[0]
                keep_zero = first < index.size and index[first] == 0
                index = np.concatenate([[] if keep_zero else [0], index[first:]]).astype(np.intp)
                parts = [np.concatenate([[] if keep_zero else [0.0], p[first:]]) for p in parts]
                for p, extra in zip(parts, low, strict=True):
                    p[0] += extra
            if index.size:
                out._accumulate(index, [p.copy() for p in parts])
            out.n_clipped += h.n_clipped
            out.n_pairs += h.n_pairs
            out.n_zero += h.n_zero
            out.sum_d += h.sum_d
        return out
