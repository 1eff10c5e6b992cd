"""The dominance rule: how two curves on one grid are compared. Specified once.

This module is the single definition of a verdict; the browser widget
re-implements exactly these steps and is tested against fixtures generated here.

For curves ``a`` and ``b`` sampled on grid points ``theta_1 < ... < theta_m``:

1. **Ties.** Point k is a tie when ``|a_k - b_k| <= atol + rtol * max(|a_k|, |b_k|)``
   (both infinite with the same sign is a tie too). Otherwise its sign is
   ``s_k = sign(a_k - b_k)``; ties have ``s_k = 0``.
2. **Verdict.** All ties: ``"tied"``. No negative sign: ``"dominates"`` (A ≥ B
   everywhere and ahead somewhere). No positive sign: ``"dominated"``. Both:
   ``"crosses"``.
3. **Crossings.** Walk the nonzero signs in order; each change of sign between
   points i < j (only ties in between) is one crossing, located in the family's
   axis coordinate u (log theta for log axes, theta otherwise):
   ties in between → the middle of the tied run (``(u_{i+1} + u_{j-1}) / 2``);
   step functions → the middle ``(u_i + u_j) / 2``; otherwise the root of the
   straight line through ``(u_i, a_i - b_i)`` and ``(u_j, a_j - b_j)``. An end at
   theta = 0 on a log axis is interpolated in theta; an end at theta = inf
   puts the crossing at the last finite point.
5. **With confidence** (when bootstrap replicates exist). The band of A − B at
   level ci is the basic bootstrap interval ``[2 d - Q_hi, 2 d - Q_lo]`` of the
   replicate differences (replicate r of A minus replicate r of B; the sets
   are resampled independently). A point is confidently ahead when the band is
   above the tie tolerance, behind when below it, tied when it lies within it,
   and undecided otherwise. Confident verdict: ahead and behind points both →
   ``"crosses"``; otherwise any undecided point → ``"uncertain"``; otherwise as
   in step 2.
4. **Share ahead.** The share of the domain's length along u on which A is
   ahead. Step functions hold their left value on ``[theta_k, theta_{k+1})``;
   continuous curves take the share of each interval where the straight line
   between the (tie-zeroed) differences is positive. Intervals whose ends are
   not finite in u (q = 0 or q = inf on a log axis) have no length. With no
   length at all (one point, scale-free families) the share is 1 if A is
   ahead at the points and 0 otherwise (the fraction of points ahead).
"""

from __future__ import annotations

import numpy as np

VERDICTS = ("dominates", "dominated", "tied", "crosses")
#: Verdicts that must hold with confidence add "uncertain".
CONFIDENT_VERDICTS = (*VERDICTS, "uncertain")
#: Default tolerances of a tie: relative and absolute.
RTOL = 1e-6
ATOL = 1e-12


def signs(a: np.ndarray, b: np.ndarray, rtol: float = RTOL, atol: float = ATOL) -> np.ndarray:
    """Step 1: +1 where A is ahead, -1 where B is, 0 at ties.

    >>> signs(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])).tolist()
    [0, -1, 1]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        diff = a - b
        scale = np.maximum(np.abs(a), np.abs(b))
        tie = (np.abs(diff) <= atol + rtol * scale) & np.isfinite(scale)
    tie |= a == b  # equal infinities
    both_inf = np.isinf(a) & np.isinf(b) & (a != b)
    out = np.where(tie, 0, np.sign(np.where(both_inf, a, diff)))
    return out.astype(np.int8)


def verdict_of(s: np.ndarray) -> str:
    """Step 2: the verdict from the signs."""
    ahead, behind = bool((s > 0).any()), bool((s < 0).any())
    if ahead and behind:
        return "crosses"
    if ahead:
        return "dominates"
    if behind:
        return "dominated"
    return "tied"


def axis_coordinate(theta: np.ndarray, axis: str) -> np.ndarray:
    """u = log(theta) on log axes (-inf at 0, inf at inf), theta otherwise."""
    theta = np.asarray(theta, dtype=np.float64)
    if axis != "log":
        return theta.copy()
    with np.errstate(divide="ignore"):
        return np.log(theta)


def _from_u(u: np.ndarray, axis: str) -> np.ndarray:
    return np.exp(u) if axis == "log" else u


def _midpoints(theta: np.ndarray, u: np.ndarray, lo: np.ndarray, hi: np.ndarray, axis: str):
    """Middle of [theta_lo, theta_hi] along u; an infinite end gives the finite one."""
    tl, th = theta[lo], theta[hi]
    finite_u = np.isfinite(u[lo]) & np.isfinite(u[hi])
    middle = np.where(finite_u, _from_u((u[lo] + u[hi]) / 2, axis), (tl + th) / 2)
    return np.where(np.isinf(th), np.where(np.isfinite(tl), tl, th), middle)


def crossings(
    theta: np.ndarray, a: np.ndarray, b: np.ndarray, s: np.ndarray, axis: str, step: bool
) -> list[float]:
    """Step 3: parameter values where the leading curve changes."""
    theta = np.asarray(theta, dtype=np.float64)
    nonzero = np.flatnonzero(s)
    i, j = nonzero[:-1], nonzero[1:]
    change = s[i] != s[j]
    i, j = i[change], j[change]
    if i.size == 0:
        return []
    u = axis_coordinate(theta, axis)
    plateau = j > i + 1  # a tied run separates them: the crossing is that run
    lo, hi = np.where(plateau, i + 1, i), np.where(plateau, j - 1, j)
    middle = _midpoints(theta, u, lo, hi, axis)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        di = np.asarray(a, float)[i] - np.asarray(b, float)[i]
        dj = np.asarray(a, float)[j] - np.asarray(b, float)[j]
        r = np.where(np.isfinite(di - dj) & (di != dj), di / (di - dj), 0.5)
        line = np.where(
            np.isinf(theta[j]),
            theta[i],
            np.where(
                np.isfinite(u[i]),
                _from_u(u[i] + r * (u[j] - u[i]), axis),
                theta[i] + r * (theta[j] - theta[i]),  # theta = 0 on a log axis
            ),
        )
    return np.where(plateau | step, middle, line).tolist()


def share_ahead(
    theta: np.ndarray, a: np.ndarray, b: np.ndarray, s: np.ndarray, axis: str, step: bool
) -> float:
    """Step 4: share of the domain (along u) on which A is ahead."""
    u = axis_coordinate(theta, axis)
    if u.size < 2:
        return float((s > 0).mean()) if s.size else 0.0
    with np.errstate(invalid="ignore"):
        d = np.where(s == 0, 0.0, np.asarray(a, float) - np.asarray(b, float))
    d = np.where(np.isinf(d), np.sign(d), d)  # only the sign of an infinite gap matters
    length = np.diff(u)
    usable = np.isfinite(length)
    if not usable.any():
        return float((s > 0).mean())
    if step:
        frac = (s[:-1] > 0).astype(np.float64)
    else:
        d0, d1 = d[:-1], d[1:]
        with np.errstate(invalid="ignore", divide="ignore"):
            root = np.clip(d0 / (d0 - d1), 0.0, 1.0)
        frac = np.where(
            (d0 > 0) & (d1 > 0),
            1.0,
            np.where((d0 <= 0) & (d1 <= 0), 0.0, np.where(d0 > 0, root, 1.0 - root)),
        )
    return float(np.sum(frac[usable] * length[usable]) / np.sum(length[usable]))


def band_of_difference(
    a: np.ndarray, b: np.ndarray, boot_a: np.ndarray, boot_b: np.ndarray, ci: float
) -> tuple[np.ndarray, np.ndarray]:
    """Step 5: basic bootstrap band of a - b; replicates on axis 0."""
    alpha = (1.0 - ci) / 2.0
    with np.errstate(invalid="ignore"):
        reps = np.asarray(boot_a, float) - np.asarray(boot_b, float)
        q_lo, q_hi = np.nanquantile(reps, [alpha, 1.0 - alpha], axis=0)
        d = np.asarray(a, float) - np.asarray(b, float)
        return 2 * d - q_hi, 2 * d - q_lo


def confident_verdict(
    a: np.ndarray,
    b: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> str:
    """Step 5: the verdict that holds with confidence, from the band of a - b.

    >>> confident_verdict(np.ones(3), np.zeros(3), np.array([.5, .2, .1]), np.ones(3))
    'dominates'
    >>> confident_verdict(np.ones(3), np.zeros(3), np.array([.5, -.2, .1]), np.ones(3))
    'uncertain'
    """
    with np.errstate(invalid="ignore"):  # 0 · inf (rtol=0, -inf energies): NaN, uncertain
        tol = atol + rtol * np.maximum(np.abs(np.asarray(a, float)), np.abs(np.asarray(b, float)))
        ahead, behind = lower > tol, upper < -tol
        tied = (lower >= -tol) & (upper <= tol)
    if ahead.any() and behind.any():
        return "crosses"
    if not (ahead | behind | tied).all():
        return "uncertain"
    return verdict_of(ahead.astype(np.int8) - behind.astype(np.int8))
