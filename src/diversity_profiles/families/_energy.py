"""The energy family: minus the mean Riesz s-energy of the pairwise distances."""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike

from ..core import check_distance_matrix, check_parameter
from ..engines import LogDistanceHistogram


class CoincidentPointsWarning(UserWarning):
    """Two samples sit at distance zero, so their energy term is infinite."""


def _warn_coincident(n_zero_pairs: float, func: str) -> None:
    warnings.warn(
        f"{func}: {n_zero_pairs:g} pair(s) of samples are at distance 0, so D^(-s) is infinite "
        f"and the energy is -inf for every s > 0. De-duplicate the set (see richness) if the "
        f"duplicates are not meaningful.",
        CoincidentPointsWarning,
        stacklevel=3,
    )


def _check_representable(out: np.ndarray, ss: np.ndarray, where: str) -> np.ndarray:
    """Refuse energies that over- or underflow float64 instead of returning -inf or -0.

    ``E(c D, s) = c^-s E(D, s)``: distances near 1e-170 give energies beyond 1e308 once
    s > 1.8; the true value exists but float64 cannot hold it.
    """
    bad = ~np.isfinite(out) | (np.abs(out) < np.finfo(np.float64).tiny)
    if bad.any():
        s = float(ss[bad][0])
        what = "overflows" if not np.isfinite(out[bad][0]) else "underflows"
        raise ValueError(
            f"{where}: the energy at s = {s:g} {what} float64 (|E| = mean d^-s is outside "
            f"[1e-308, 1e308] for these distances). Rescale the distances to order 1 (the energy "
            f"scales as E(c·D, s) = c^-s E(D, s)), or use smaller exponents s."
        )
    return out


def _energy_exact(D: np.ndarray, ss: np.ndarray) -> np.ndarray:
    """Exact energies from a validated distance matrix (one pass per exponent)."""
    n = D.shape[0]
    iu = np.triu_indices(n, k=1)
    log_d = np.log(D[iu])
    out = np.empty(ss.size)
    with np.errstate(over="ignore", under="ignore"):
        for k, s in enumerate(ss):
            top = -s * log_d.min()  # factor out the largest term: large s must not overflow
            out[k] = -np.exp(top) * np.mean(np.exp(-s * log_d - top))
    return _check_representable(out, ss, "energy")


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
    >>> energy(D, 1.0)        # -(1 + 1 + 1/2) / 3
    -0.8333333333333334
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


def energy_from_histogram(
    hist: LogDistanceHistogram, ss: np.ndarray, where: str = "energy profile"
) -> np.ndarray:
    """Energies for every exponent from a log-distance histogram (no pass over pairs).

    NaN when there is no pair (a bootstrap resample that drew one sample only).
    """
    if hist.n_pairs == 0:
        return np.full(ss.size, np.nan)
    if hist.n_zero:
        _warn_coincident(hist.n_zero, where)
        return np.full(ss.size, -np.inf)
    with np.errstate(over="ignore", under="ignore"):
        out = -hist.mean_power(ss)
    return _check_representable(out, ss, where)


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
    for k, s in enumerate(ss):
        terms = np.where(off, -s * log_d, -np.inf)
        log_rows = logsumexp(terms, axis=1) - np.log(n - 1)  # log M_i
        log_all = logsumexp(log_rows) - np.log(n)  # log M
        out[:, k] = 2.0 * energies[k] * np.expm1(log_rows - log_all)
    return out
