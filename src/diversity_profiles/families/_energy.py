"""The energy family: minus the mean Riesz s-energy of the pairwise distances."""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike

from ..core import check_distance_matrix, check_parameter
from ..engines import BINS_PER_OCTAVE, OCTAVES, LogDistanceHistogram


class CoincidentPointsWarning(UserWarning):
    """Two samples sit at distance zero, so their energy term is infinite.

    Examples
    --------
    >>> import warnings
    >>> import diversity_profiles as dp
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     value = dp.energy([[0., 0, 1], [0, 0, 1], [1, 1, 0]], 1.0)
    >>> any(issubclass(w.category, dp.CoincidentPointsWarning) for w in caught)
    True
    """


def _warn_coincident(n_zero_pairs: float, func: str) -> None:
    warnings.warn(
        f"{func}: {n_zero_pairs:g} pair(s) of samples are at distance 0, so D^(-s) is infinite "
        f"and the energy is -inf for every s > 0. De-duplicate the set (see richness) if the "
        f"duplicates are not meaningful.",
        CoincidentPointsWarning,
        stacklevel=3,
    )


#: Largest and smallest |E| = mean d^-s float64 holds, as logs (1.8e308 and 2.2e-308).
_LOG_MAX = float(np.log(np.finfo(np.float64).max))
_LOG_TINY = float(np.log(np.finfo(np.float64).tiny))
#: Default grids stop before |log E| can reach this on any subset of the pairs: e^±690 ≈
#: 1e±300 leaves a factor 6e7 for influences (E times a spread) to stay normal floats.
_LOG_GRID_LIMIT = 690.0

#: Taylor terms kept per bin by :class:`PairPowerSums`. Bins are 1 / (2 s_max) wide in
#: log d, so |s y| <= 1/4 around a bin's centre and the first term left out is below
#: (1/4)^14 / 14! * e^(1/2) = 7e-20 of the bin's sum, at every s of the grid at once:
#: the sums are as exact as float64 round-off (ten terms left 2e-13, visible in tests).
_TERMS = 14
#: Bins of one chunk of the evaluation: (grid points × bins) floats at a time.
_CHUNK = 1 << 14
#: Pairs binned at a time (a few float64 temporaries of this size).
_PAIRS = 1 << 20


class PairPowerSums:
    """``log mean d^-s`` on a fixed grid of exponents, exactly, from distances in blocks.

    Direct sums cost one exponential per pair and exponent. Instead every pair is
    binned by ``log d`` into bins of width ``h = 1 / (2 max s)`` and each bin keeps
    the weighted power sums of ``t = (log d - centre) / (h/2)`` in [-1, 1]; then
    ``sum d^-s = sum_bins e^(-s centre) sum_k (-s h/2)^k / k! * sum t^k``, a series
    whose ratio ``|s h/2| <= 1/4`` makes fourteen terms exact to 7e-20 (relative,
    every term positive, so also for the mean): float64 round-off is all that is left.
    Everything is in log space: the result neither overflows nor underflows, whatever
    the scale of the distances.

    Examples
    --------
    >>> sums = PairPowerSums(np.array([1.0, 2.0]))
    >>> sums.add(np.array([1.0, 2.0, 4.0]))
    >>> np.exp(sums.log_mean()).round(12).tolist()   # (1 + 1/2 + 1/4) / 3, (1 + 1/4 + 1/16) / 3
    [0.583333333333, 0.4375]
    """

    def __init__(self, ss: np.ndarray) -> None:
        self.ss = np.asarray(ss, dtype=np.float64).ravel()
        self.half = 0.25 / float(self.ss.max())  # half a bin: |s| * half <= 1/4
        self.origin: float | None = None  # log d of the first bin's lower edge
        self.reach = 0.0  # the largest |log d| seen
        self._keys: list[np.ndarray] = []
        self._sums: list[np.ndarray] = []
        self.total = 0.0  # weight of the positive pairs
        self.n_zero = 0.0
        self.n_pairs = 0.0

    def add(self, d: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Add a block of distances (each unordered pair once), optionally weighted."""
        d = np.asarray(d, dtype=np.float64).ravel()
        w = np.ones(d.size) if weights is None else np.asarray(weights, np.float64).ravel()
        for start in range(0, d.size, _PAIRS):  # bounded temporaries, whatever the block
            self._add(d[start : start + _PAIRS], w[start : start + _PAIRS])

    def _add(self, d: np.ndarray, w: np.ndarray) -> None:
        weight = float(w.sum())
        keep = d > 0
        d, w = d[keep], w[keep]
        self.n_pairs += weight
        self.total += float(w.sum())
        self.n_zero += weight - float(w.sum())
        if d.size == 0:
            return
        log_d = np.log(d)
        if self.origin is None:
            self.origin = float(log_d.min())
        self.reach = max(self.reach, float(np.abs(log_d).max()))
        x = (log_d - self.origin) / (2.0 * self.half)
        b = np.floor(x)
        t = 2.0 * (x - b) - 1.0  # the offset from the bin's centre, in half-bins
        if not np.all(np.abs(x) < 2.0**52):  # exponents ~1e15 over the spread of log d
            raise ValueError(
                f"energy: the exponents s up to {self.ss.max():g} are too large for the "
                f"spread of these log distances to be binned in float64. Use smaller s."
            )
        lo = b.min()
        if b.max() - lo < 4 * b.size:  # few bins (the usual case): no sort needed
            index = (b - lo).astype(np.intp)
            keys = np.arange(int(index.max()) + 1) + lo
        else:
            keys, index = np.unique(b, return_inverse=True)
        power = w.copy()
        sums = np.empty((_TERMS, keys.size))
        for k in range(_TERMS):
            sums[k] = np.bincount(index, weights=power, minlength=keys.size)
            power *= t
        occupied = sums[0] > 0
        self._keys.append(keys[occupied])
        self._sums.append(sums[:, occupied])

    def log_mean(self) -> np.ndarray:
        """``log mean d^-s`` over the positive pairs at every exponent (NaN without any)."""
        from math import factorial

        from scipy.special import logsumexp

        if self.total == 0:
            return np.full(self.ss.size, np.nan)
        keys, index = np.unique(np.concatenate(self._keys), return_inverse=True)
        sums = np.zeros((_TERMS, keys.size))
        for k in range(_TERMS):
            sums[k] = np.bincount(index, weights=np.concatenate([m[k] for m in self._sums]))
        self._keys, self._sums = [keys], [sums]  # merged once: later calls are cheap
        assert self.origin is not None  # set by the first positive distance
        centres = self.origin + (keys + 0.5) * (2.0 * self.half)
        ratio = -self.ss[:, None] * self.half
        coef = ratio ** np.arange(_TERMS) / np.array([factorial(k) for k in range(_TERMS)])
        parts = []
        for start in range(0, keys.size, _CHUNK):
            sl = slice(start, start + _CHUNK)
            series = coef @ sums[:, sl]  # sum over the bin of w e^(-s y): positive
            parts.append(logsumexp(np.log(series) - self.ss[:, None] * centres[sl], axis=1))
        return logsumexp(np.stack(parts, axis=1), axis=1) - np.log(self.total)

    def add_matrix(self, D: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Add the pairs i < j of a distance matrix (pair weight ``w_i w_j``), by row blocks."""
        n = D.shape[0]
        rows = max(1, 2 * _PAIRS // max(n, 1))  # about 2M pairs per block
        for r0 in range(0, n, rows):
            r1 = min(n, r0 + rows)
            iu = np.triu_indices(r1 - r0, k=1, m=n - r0)
            block = D[r0:r1, r0:][iu]
            pw = None if weights is None else (weights[r0:r1, None] * weights[None, r0:])[iu]
            self.add(block, pw)


def energy_from_log_mean(
    log_m: np.ndarray, ss: np.ndarray, where: str, argument: str = "s", reach: float = 0.0
) -> np.ndarray:
    """``-exp(log mean d^-s)``, refusing exponents whose energy float64 cannot hold.

    ``E(c D, s) = c^-s E(D, s)``: distances near 1e4 give energies below 1e-308 once
    s > 77; the true value exists but float64 cannot hold it. ``argument`` names what
    the caller passed the exponents as, and ``reach`` (the largest ``|log d|``) gives
    the exponents that are safe, for the error.
    """
    with np.errstate(invalid="ignore"):
        over, under = log_m > _LOG_MAX, log_m < _LOG_TINY
    bad = over | under
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        what = "overflows" if over[k] else "underflows"
        # Every mean of d^-s lies between d_max^-s and d_min^-s: safe while s·|log d| < 708.
        safe = -_LOG_TINY / reach if reach > 0 else float(ss[k])
        raise ValueError(
            f"{where}: the energy at s = {ss[k]:g} {what} float64 (|E| = mean d^-s = "
            f"e^{log_m[k]:.5g}, outside [1e-308, 1e308]). Pass {argument} with s up to "
            f"{safe:.4g} (float64 holds d^-s of every pair there), or rescale the distances "
            f"to order 1 (the energy scales as E(c·D, s) = c^-s E(D, s))."
        )
    return -np.exp(log_m)


def _energy_exact(D: np.ndarray, ss: np.ndarray, where: str = "energy") -> np.ndarray:
    """Exact energies from a validated distance matrix, in log space."""
    sums = PairPowerSums(ss)
    sums.add_matrix(D)
    return energy_from_log_mean(sums.log_mean(), ss, where, reach=sums.reach)


def energy(D: ArrayLike, s: ArrayLike) -> float | np.ndarray:
    r"""Energy diversity: minus the mean of ``D_ij ** -s`` over pairs ``i != j``.

    Parameters
    ----------
    D : array_like, shape (n, n)
        Pairwise distances, n >= 2.
    s : float or array_like of float
        Exponent(s) > 0.

    Returns
    -------
    float or numpy.ndarray
        ``-(1 / (n (n-1))) * sum_{i != j} D_ij^(-s)``: a Python float for scalar
        ``s``, an array otherwise. Higher (closer to 0) is more diverse. If two
        samples coincide the energy is ``-inf`` and a
        :class:`CoincidentPointsWarning` says how many pairs did.

    References
    ----------
    .. [1] Hu et al., "Evaluating the Diversity of AI-Generated Content with
       Diversity Profiles" (2026), the energy family.

    Examples
    --------
    >>> import numpy as np
    >>> D = np.array([[0., 1, 2], [1, 0, 1], [2, 1, 0]])
    >>> round(energy(D, 1.0), 15)        # -(1 + 1 + 1/2) / 3
    -0.833333333333333
    >>> energy(D, [1.0, 2.0])
    array([-0.83333333, -0.75      ])
    """
    func = "energy"
    ss, scalar = check_parameter(s, "s", func, low=0.0, low_open=True)
    D = check_distance_matrix(D, func, min_size=2)
    n_zero = int(np.count_nonzero(D[np.triu_indices(D.shape[0], k=1)] == 0))
    if n_zero:
        _warn_coincident(n_zero, func)
        out = np.full(ss.size, -np.inf)
    else:
        out = _energy_exact(D, ss)
    return float(out[0]) if scalar else out.reshape(np.shape(s))


def _log_mean_power(hist: LogDistanceHistogram, ss: np.ndarray) -> np.ndarray:
    """``log mean d^-s`` from the histogram's bin moments (as ``mean_power``, in log space)."""
    from scipy.special import logsumexp

    if hist.n_clipped:
        raise ValueError(
            f"{hist.n_clipped:g} pairwise distance(s) of this set lie more than a factor "
            f"2**{OCTAVES} away from the largest, beyond what the energy profile resolves. "
            f"Such pairs are near-duplicates at round-off level: drop the duplicate "
            f"rows, or leave 'energy' out of families."
        )
    c, m, v = hist._occupied()
    sc = np.asarray(ss, dtype=np.float64)[:, None]
    terms = np.log(c)[None, :] - sc * m[None, :] + np.log1p(0.5 * sc**2 * v[None, :])
    return logsumexp(terms, axis=1) - np.log(c.sum())


def energy_from_histogram(
    hist: LogDistanceHistogram,
    ss: np.ndarray,
    where: str = "energy profile",
    argument: str = "domains['energy']",
) -> np.ndarray:
    """Energies for every exponent from a log-distance histogram (no pass over pairs).

    An estimate from the bins' first two moments (the large-n path, beside its certified
    bounds): bins are 6.8e-4 wide in log d, so it is within 1e-6 only while s · 6.8e-4
    stays well below 1. NaN when there is no pair (a bootstrap resample that drew one
    sample only).
    """
    if hist.n_pairs == 0:
        return np.full(ss.size, np.nan)
    if hist.n_zero:
        _warn_coincident(hist.n_zero, where)
        return np.full(ss.size, -np.inf)
    log_m = _log_mean_power(hist, ss)
    return energy_from_log_mean(log_m, ss, where, argument, _reach(hist))


def energy_from_pairs(
    sums: PairPowerSums, where: str = "energy profile", argument: str = "domains['energy']"
) -> np.ndarray:
    """Exact energies from the power sums of every pair (see :class:`PairPowerSums`).

    NaN when there is no pair, -inf (with a warning) when two samples coincide.
    """
    if sums.n_pairs == 0:
        return np.full(sums.ss.size, np.nan)
    if sums.n_zero:
        _warn_coincident(sums.n_zero, where)
        return np.full(sums.ss.size, -np.inf)
    return energy_from_log_mean(sums.log_mean(), sums.ss, where, argument, sums.reach)


def energy_grid_limit(hists: list[LogDistanceHistogram]) -> float:
    """The largest s at which the energy of every subset of every set's pairs is a normal
    float64: ``e^-690 <= mean d^-s <= e^690`` (inf without a positive distance).

    A mean of ``d^-s`` over any pairs lies between ``d_max^-s`` and ``d_min^-s``, so
    ``s * max |log d| <= 690`` holds it for the sets and for whatever is evaluated on
    their subsets: replicates, categories, convergence subsamples. The histogram's
    occupied bins give ``log d`` to within a bin, taken on the safe side. The e^18 of
    headroom below float64's limits (e^±708) keeps influences and spreads normal too.
    """
    reach = max((_reach(h) for h in hists), default=0.0)
    return _LOG_GRID_LIMIT / reach if reach > 0 else np.inf


def _reach(hist: LogDistanceHistogram) -> float:
    """The largest ``|log d|`` of the histogram's pairs, a bin on the safe side (0: none)."""
    if hist.n_pairs == hist.n_zero:
        return 0.0
    _, m, _ = hist._occupied()
    return max(abs(float(m.min())), abs(float(m.max()))) + np.log(2.0) / BINS_PER_OCTAVE


def energy_scale_range(hists: list[LogDistanceHistogram]) -> tuple[float, float]:
    """Exponents over which the pooled energy curves change.

    ``log(-E(s))`` is the cumulant generating function of ``-log d``: it starts
    linear with slope ``-mean(log d)`` and bends once ``s`` reaches about one over
    the spread of ``log d``; it is linear again (only the closest pair matters)
    once the weights ``d^-s`` concentrate on a handful of pairs. The range starts
    where ``s * max(|mean log d|, sd log d) = 0.1`` (the energy is still within
    about 10% of -1, its value at s = 0) and ends where the effective number of
    pairs carrying the weight drops to 1% of the pairs (or 10 pairs).
    """
    moments = [h.log_moments() for h in hists if h.n_pairs > h.n_zero]
    scale = max([max(abs(mean), sd) for mean, sd in moments] + [1e-3])
    s_lo = 0.1 / scale
    s_hi = s_lo * 10
    for h in hists:
        if h.n_pairs == h.n_zero:
            continue
        c, m, _ = h._occupied()
        target = max(0.01 * c.sum(), min(10.0, c.sum()))
        s = s_lo
        while s < 1e3:
            logw = np.log(c) - s * m
            w = np.exp(logw - logw.max())
            # Effective number of pairs: (sum w)^2 / sum(w^2 / c) with per-bin weights.
            ess = w.sum() ** 2 / np.sum(w**2 / c)
            if ess <= target:
                break
            s *= 1.25
        s_hi = max(s_hi, s)
    return s_lo, s_hi


def energy_influence(D: np.ndarray, ss: np.ndarray) -> np.ndarray:
    """Influence of every sample on the energy at each exponent: an n × len(ss) matrix.

    The energy is a U-statistic of order 2 with kernel ``-d^-s``; its Hoeffding
    projection gives sample i the influence ``2 (r_i - E)``, ``r_i`` the mean kernel over
    i's pairs, so ``sum_i h_i^2 / n^2`` is its first-order variance ``4 var(r) / n``.
    Written as ``2 E (M_i / M - 1)`` with the row means ``M_i`` of ``d^-s`` and their
    mean ``M`` formed as log-sum-exps, so large s neither overflows nor underflows. A
    zero distance (a duplicate) makes E = -inf: NaN.

    >>> D = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], float)
    >>> energy_influence(D, np.array([1.0])).round(6).ravel().tolist()  # E = -5/6
    [0.166667, -0.333333, 0.166667]
    """
    from scipy.special import logsumexp

    n = D.shape[0]
    with np.errstate(divide="ignore"):
        log_d = np.log(np.asarray(D, dtype=np.float64))
    off = ~np.eye(n, dtype=bool)
    out = np.full((n, ss.size), np.nan)
    if not np.isfinite(log_d[off]).all():
        return out
    energies = _energy_exact(D, ss) if n > 1 else np.full(ss.size, np.nan)
    shifted = None
    for k, s in enumerate(ss):
        if s > 0 and n > 1:
            # Row-wise log-sum-exp of -s log d without a temporary per exponent: the row's
            # largest term is -s times its smallest log distance, so shift by that once
            # (the diagonal at +inf contributes exp(-inf) = 0). Three times faster.
            if shifted is None:
                shifted = np.where(off, log_d, np.inf)
                row_min = shifted.min(axis=1)
                shifted -= row_min[:, None]
            sums = np.exp(-s * shifted).sum(axis=1)
            log_rows = -s * row_min + np.log(sums) - np.log(n - 1)  # log M_i
        else:
            terms = np.where(off, -s * log_d, -np.inf)
            log_rows = logsumexp(terms, axis=1) - np.log(n - 1)  # log M_i
        log_all = logsumexp(log_rows) - np.log(n)  # log M
        out[:, k] = 2.0 * energies[k] * np.expm1(log_rows - log_all)
    return out
