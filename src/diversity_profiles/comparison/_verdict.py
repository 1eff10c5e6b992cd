"""The dominance rule: how two curves on one grid are compared. Specified once.

This module is the single definition of a verdict; the browser widget
re-implements exactly these steps and is tested against fixtures generated here.

For curves ``a`` and ``b`` sampled on grid points ``theta_1 < ... < theta_m``:

1. **Ties.** Point k is a tie when ``|a_k - b_k| <= atol + rtol * max(|a_k|, |b_k|)``
   (both infinite with the same sign is a tie too; ``atol`` defaults to float64's
   smallest normal number, so ties are relative to the values' own scale and a
   verdict does not change when a family's values are multiplied by a positive
   constant). Otherwise its sign is
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
4. **Share ahead.** The share of the domain's length along u on which A is
   ahead. Step functions hold their left value on ``[theta_k, theta_{k+1})``;
   continuous curves take the share of each interval where the straight line
   between the (tie-zeroed) differences is positive. Intervals whose ends are
   not finite in u (q = 0 or q = inf on a log axis) have no length. With no
   length at all (one point, scale-free families) the share is 1 if A is
   ahead at the points and 0 otherwise (the fraction of points ahead).
5. **Margin** (practical significance). A lead is negligible at point k when
   ``|a_k - b_k| <= m_k``, with the family's margin ``m_k``: for count families
   (Circles, richness) ``margin * n`` samples, n the smaller set's size (default
   ``margin = 0.01``: a lead of 1 in 150 circles is one near-duplicate pair, not a
   finding); for continuous families ``margin * max(|a_k|, |b_k|)`` (default 0.01:
   a 1% relative difference, a quarter or less of the 90% bands' median half-width
   that ``benchmarks/coverage.py`` measures at n = 100 — 3.8% for energy, 4.5% for
   Vendi, 6.2% for magnitude — so the margin hides no difference that a sample of that
   size could confirm; it removes only differences no such sample can tell apart). The
   material signs keep ``s_k`` only where the
   lead exceeds ``max(m_k, tie tolerance)``. A side (A ahead, or B ahead) *holds* when
   it has a material point and its share of the domain (step 4 on the material signs)
   is at least ``min_share`` (default 0.05: one grid interval of the default
   100-point grid is 1%, so a lead must span about five of them). Verdict with the
   margin: both sides hold → ``"crosses"``; only A's → ``"dominates"``; only B's →
   ``"dominated"``; neither → ``"tied"``. The dismissed side of a dominance is
   reported with its largest lead (in samples, or relative) and its share (step 4 on
   the plain signs): the digits demo reads "3 classes ≻ 1 class" in Circles, with "1 class
   ahead by ≤ 1 sample on 12% of the domain" named, not called a crossing. Crossings
   (step 3) are located only for ``"crosses"``, on the plain signs.
6. **With confidence** (when replicates exist). Replicates are subsamples of
   ``m`` of the ``n`` samples drawn without replacement (see
   :mod:`diversity_profiles.pipeline._resampling`); replicate r of A minus replicate r of B
   (sets subsampled independently), each set's replicates first centred on their
   mean and scaled by ``sqrt(m / (n - m))`` (the delete-d jackknife's rate
   correction) and by the growth factor ``g_k = clip(estimate_k / mean_k, 1, n / m)``
   (1 where not finite: a count that grows with n spreads n/m times more at n than in
   a subsample of m), gives the difference errors ``c_rk``. With
   ``d_k = a_k - b_k`` (0 where a_k = b_k, equal infinities included):
   *pointwise* band ``[d_k - Q_hi(c_k), d_k - Q_lo(c_k)]`` (quantiles at
   ``(1 ± ci) / 2``, numpy's linear rule); *simultaneous* (sup-t) band
   ``d_k - mean(c_k) ± z sd_k`` with ``sd_k`` the standard deviation (ddof 1) of
   ``c_k`` and ``z`` the ci-quantile over replicates of
   ``max_k |c_rk - mean(c_k)| / sd_k`` (points with
   ``sd_k = 0`` are exact, points without a finite ``sd_k`` unbounded) — computed
   over the points of the domain compared, so a narrowed domain has its own ``z``.
   Confidently ahead: lower > margin; behind: upper < -margin; possibly ahead: not
   upper <= margin; possibly behind: not lower >= -margin. Each of the four holds
   when its share of the domain (step 4 on its indicator) is >= min_share.
   Confident verdict: ahead and behind → ``"crosses"``; ahead and not possibly
   behind → ``"dominates"``; behind and not possibly ahead → ``"dominated"``;
   neither possibly → ``"tied"`` (equal within the margin); otherwise
   ``"uncertain"``.
7. **With bounds** (large-n values: certified bounds, or estimates ± error). Each
   curve comes with ``[lo_k, hi_k]`` holding its true value. A is *surely ahead* at k
   when ``lo_a - hi_b`` exceeds the margin, *possibly ahead* when ``hi_a - lo_b`` does;
   B likewise with the sides swapped. The four sides hold by step 5's test (a material
   sign, and a share of at least ``min_share`` by step 4 on the signs of ``lo_a - hi_b``,
   resp. ``hi_a - lo_b``, with those differences). Surely ahead and surely behind →
   ``"crosses"``; surely ahead and not possibly behind → ``"dominates"``; surely behind
   and not possibly ahead → ``"dominated"``; neither possibly → ``"tied"``; otherwise
   ``"bounds overlap"``: the bounds cannot order the sets on this domain. Points bands
   reduce this to step 5 exactly (``lo = hi`` makes "possibly" equal "surely"). The
   plain verdict is the same with the tie tolerance as margin and no minimum share;
   ``share_ahead`` and the crossings (step 3, for ``"crosses"``) use the separation
   signs: +1 where ``lo_a > hi_b`` beyond the tie tolerance, -1 where ``hi_a < lo_b``,
   0 where the bands overlap, with the separating gap as the difference. The
   dismissed side of a dominance reports its largest *possible* lead (``hi - lo``,
   relative to the largest value or bound involved).
8. **Findings** (what the summary, the explorer and the report present). A finding
   is step 6's confident verdict read from a *family-wise* band: with each set's
   centred replicate errors ``c`` (step 6; Gaussian multiplier draws have scale 1),
   Gaussian recombinations ``T = w c / sqrt(R - 1)`` (w standard normal, R the
   replicates; independent per set) have the replicates' covariance; ``z`` is the
   ``1 - (1 - ci) / F`` quantile, over recombinations, of the largest
   ``|T_a - T_b| / sd_ab`` over every pair of sets and every point of the domain
   compared, F the number of families whose replicates vary (Bonferroni over families, the
   maximum over pairs and points). The band ``d ± z sd`` then holds for every pair,
   point and family at once with confidence ``ci``; step 6's reading of it gives
   "dominates", "dominated", "crosses" or "tied", and its "uncertain" is written
   "not distinguishable" (at this sample size). Values with large-n bounds (step 7) widen
   the band to ``d ± (z sd + r)``, r the larger of how far the brackets let the difference
   reach below and above (:func:`bracket_reach`), so a finding holds for the bounds' worst
   case too. A family without replicates (n_boot
   = 0, large-n bounds, a budget that ran out) has the finding "no uncertainty".
   For a pair not distinguishable, ``n_needed`` is about how many samples per set
   would make the lead confident if it is real: the noise falls as ``1/sqrt(n)``, so
   each point where one side leads beyond the margin needs ``n (z sd / (|d| - m))^2``;
   a dominance needs ``min_share`` of the points, so the estimate is that many points'
   largest need (the ``ceil(min_share * points)``-th smallest).
9. **Findings on part of the domain.** Where a pair is not distinguishable over the whole
   domain, step 8's band can still order it on part of it: Vendi curves of any two sets
   meet at q → 0 (every Gaussian-kernel Vendi score tends to n), so a lead that is
   unmistakable for q >= 0.1 is "not distinguishable" over [0.01, 100]. The band
   ``d ± (z sd + reach)`` holds at every point at once, so reading it on a part costs no
   further correction: when one side is confidently ahead (lower > margin, resp. upper <
   -margin) on at least ``min_share`` of the domain and the other side nowhere on that
   much, the finding holds on the runs of consecutive grid points where that side is
   confidently ahead, reported from the first to the last point of each run (grid points
   only: nothing is claimed between a run's end and the next point).
"""

from __future__ import annotations

import warnings

import numpy as np

VERDICTS = ("dominates", "dominated", "tied", "crosses")
#: Verdicts that must hold with confidence add "uncertain".
CONFIDENT_VERDICTS = (*VERDICTS, "uncertain")
#: The verdict when the bounds of large-n values cannot order two sets (step 7).
OVERLAP = "bounds overlap"
#: Findings (step 8): a confident verdict, or why there is none.
NOT_DISTINGUISHABLE, NO_UNCERTAINTY = "not distinguishable", "no uncertainty"
FINDINGS = (*VERDICTS, NOT_DISTINGUISHABLE, NO_UNCERTAINTY)
#: Gaussian recombinations of the replicates behind the family-wise z (step 8).
RECOMBINATIONS = 4000
#: Verdicts of curves with bounds add "bounds overlap".
BOUNDED_VERDICTS = (*VERDICTS, OVERLAP)
#: Default tolerances of a tie: relative, and an absolute floor at float64's smallest
#: normal number (values are compared at their own scale: a family's verdicts do not
#: change when its values are multiplied by a positive constant).
RTOL = 1e-6
ATOL = 2.2250738585072014e-308
#: Default margin (step 5): a fraction of n for count families, relative otherwise.
MARGIN = 0.01
#: Default minimum share of the domain on which a lead must hold (step 5).
MIN_SHARE = 0.05
#: Units of a margin: a fraction of the smaller set's size, or of the larger value.
MARGIN_UNITS = ("n", "relative")


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


def tie_tolerance(
    a: np.ndarray, b: np.ndarray, rtol: float = RTOL, atol: float = ATOL
) -> np.ndarray:
    """The tie tolerance of step 1 at every point (0 where a value is infinite)."""
    scale = np.maximum(np.abs(np.asarray(a, float)), np.abs(np.asarray(b, float)))
    return atol + rtol * np.where(np.isfinite(scale), scale, 0.0)


def margins(
    a: np.ndarray,
    b: np.ndarray,
    unit: str,
    margin: float,
    n: float,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> np.ndarray:
    """Step 5: the margin at every point, never below the tie tolerance.

    >>> margins(np.array([150.0, 5.0]), np.array([149.0, 4.0]), "n", 0.01, 150).tolist()
    [1.5, 1.5]
    >>> m = margins(np.array([2.0, -np.inf]), np.array([1.0, 1.0]), "relative", 0.01, 150)
    >>> m.round(6).tolist()  # an infinite value has only the tie tolerance
    [0.02, 0.0]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    tol = tie_tolerance(a, b, rtol, atol)
    if unit == "n":
        m = np.full(a.shape, margin * n)
    else:
        scale = np.maximum(np.abs(a), np.abs(b))
        m = margin * np.where(np.isfinite(scale), scale, 0.0)
    return np.maximum(m, tol)


def material_signs(a: np.ndarray, b: np.ndarray, s: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Step 5: the signs where the lead exceeds the margin, 0 elsewhere."""
    with np.errstate(invalid="ignore"):
        big = np.abs(np.asarray(a, float) - np.asarray(b, float)) > m
    return np.where(big, s, 0).astype(np.int8)


def _holds(theta, mask: np.ndarray, axis: str, step: bool, min_share: float) -> bool:
    """A side holds: somewhere, and on at least ``min_share`` of the domain (step 4)."""
    if not mask.any():
        return False
    ind = mask.astype(np.int8)
    return share_ahead(theta, ind.astype(float), np.zeros(ind.size), ind, axis, step) >= min_share


def margin_verdict(
    theta: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    s: np.ndarray,
    m: np.ndarray,
    axis: str,
    step: bool,
    min_share: float = MIN_SHARE,
    unit: str = "relative",
) -> tuple[str, float, float]:
    """Step 5: the verdict with the margin, and the dismissed side's lead and share.

    The lead is in samples (unit ``"n"``) or relative to the larger value; lead and
    share are NaN unless the verdict is a dominance with a dismissed side.

    >>> tau = np.linspace(0, 1, 101)
    >>> a = np.full(101, 150.0); b = a.copy(); b[1] = 149; b[2:] = 160
    >>> s, m = signs(a, b), margins(a, b, "n", 0.01, 150)
    >>> v, lead, share = margin_verdict(tau, a, b, s, m, "linear", True, unit="n")
    >>> verdict_of(s), v, lead, round(share, 3)
    ('crosses', 'dominated', 1.0, 0.01)
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    sm = material_signs(a, b, s, m)
    ahead = _share_holds(theta, a, b, sm, axis, step, min_share)
    behind = _share_holds(theta, b, a, -sm, axis, step, min_share)
    verdict = verdict_of(np.array([int(ahead), -int(behind)], dtype=np.int8))
    side = {"dominates": -1, "dominated": 1}.get(verdict)
    if side is None or not (s == side).any():
        return verdict, float("nan"), float("nan")
    with np.errstate(invalid="ignore"):
        gap = side * (a - b)
        if unit != "n":
            gap = gap / np.maximum(np.abs(a), np.abs(b))
    lead = float(np.max(gap[s == side]))
    share = (
        share_ahead(theta, a, b, s, axis, step)
        if side > 0
        else share_ahead(theta, b, a, -s, axis, step)
    )
    return verdict, lead, share


def _share_holds(theta, a, b, sm, axis, step, min_share) -> bool:
    if not (sm > 0).any():
        return False
    return share_ahead(theta, a, b, sm, axis, step) >= min_share


def band_of_difference(
    a: np.ndarray,
    b: np.ndarray,
    centred_a: np.ndarray,
    centred_b: np.ndarray,
    ci: float,
    simultaneous: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Step 6: the band of a - b from each set's centred replicates (repeat on axis 0).

    >>> c = np.array([[-1.0, -2.0], [0.0, 0.0], [1.0, 2.0]])
    >>> lo, hi = band_of_difference(np.array([5.0, 5.0]), np.zeros(2), c, 0 * c, 0.5)
    >>> lo.tolist(), hi.tolist()
    ([4.0, 3.0], [6.0, 7.0])
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        d = np.where(a == b, 0.0, a - b)
        c = np.asarray(centred_a, float) - np.asarray(centred_b, float)
    alpha = (1.0 - ci) / 2.0
    if not simultaneous:
        with warnings.catch_warnings():  # an all-NaN point gives a NaN (undecided) band
            warnings.simplefilter("ignore", RuntimeWarning)
            q_lo, q_hi = np.nanquantile(c, [alpha, 1.0 - alpha], axis=0)
        lower, upper = d - q_hi, d - q_lo
    else:
        finite = np.isfinite(c).all(axis=0)
        # Mean and sd in units of each point's largest error: squares of tiny or huge
        # errors would underflow (no band: wrongly confident) or overflow.
        unit = _point_scale(c)
        u = c / unit
        bias = np.zeros(d.shape)
        sd = np.zeros(d.shape)
        bias[finite] = np.mean(u[:, finite], axis=0)
        if c.shape[0] > 1:
            sd[finite] = np.std(u[:, finite], axis=0, ddof=1)
        spread = finite & (sd > 0)
        z = 0.0
        if spread.any():
            dev = np.abs(u[:, spread] - bias[spread]) / sd[spread]
            z = float(np.quantile(np.max(dev, axis=1), ci))
        bias, sd = bias * unit, sd * unit
        half = np.where(finite, z * sd, np.inf)
        with np.errstate(invalid="ignore"):  # an infinite d with an unbounded band: NaN
            lower, upper = d - bias - half, d - bias + half
    return lower, upper


def confident_verdict(
    theta: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    m: np.ndarray,
    axis: str,
    step: bool,
    min_share: float = MIN_SHARE,
) -> str:
    """Step 6: the verdict that holds with confidence, from the band of a - b.

    >>> x = np.array([1.0, 2.0, 3.0]); m = np.full(3, 0.05)
    >>> confident_verdict(x, np.array([.5, .2, .1]), np.ones(3), m, "linear", False)
    'dominates'
    >>> confident_verdict(x, np.array([.5, -.2, .1]), np.ones(3), m, "linear", False)
    'uncertain'
    >>> confident_verdict(x, np.full(3, -.01), np.full(3, .01), m, "linear", False)
    'tied'
    """
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        ahead, behind = lower > m, upper < -m
        maybe_ahead, maybe_behind = ~(upper <= m), ~(lower >= -m)
    ahead_, behind_, maybe_ahead_, maybe_behind_ = (
        _holds(theta, x, axis, step, min_share) for x in (ahead, behind, maybe_ahead, maybe_behind)
    )
    if ahead_ and behind_:
        return "crosses"
    if ahead_ and not maybe_behind_:
        return "dominates"
    if behind_ and not maybe_ahead_:
        return "dominated"
    if not maybe_ahead_ and not maybe_behind_:
        return "tied"
    return "uncertain"


def separation_signs(
    lo_a: np.ndarray,
    hi_a: np.ndarray,
    lo_b: np.ndarray,
    hi_b: np.ndarray,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> tuple[np.ndarray, np.ndarray]:
    """Step 7: +1 where A's band lies above B's, -1 below, 0 where they overlap; and the
    gap between them there (``lo_a - hi_b``, ``hi_a - lo_b``; 0 where they overlap).

    With point bands these are step 1's signs and ``a - b``.

    >>> s, gap = separation_signs(*np.array([[3., 1.], [4., 3.], [1., 0.], [2., 2.]]))
    >>> s.tolist(), gap.tolist()
    ([1, 0], [1.0, 0.0])
    """
    above = signs(lo_a, hi_b, rtol, atol) > 0
    below = signs(hi_a, lo_b, rtol, atol) < 0
    s = np.where(above, 1, np.where(below, -1, 0)).astype(np.int8)
    with np.errstate(invalid="ignore"):
        gap = np.where(
            above,
            np.asarray(lo_a, float) - np.asarray(hi_b, float),
            np.where(below, np.asarray(hi_a, float) - np.asarray(lo_b, float), 0.0),
        )
    return s, gap


def bounds_verdict(
    theta: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    bounds_a: tuple[np.ndarray, np.ndarray],
    bounds_b: tuple[np.ndarray, np.ndarray],
    m: np.ndarray,
    axis: str,
    step: bool,
    min_share: float = MIN_SHARE,
    unit: str = "relative",
    rtol: float = RTOL,
    atol: float = ATOL,
) -> tuple[str, float, float]:
    """Step 7: the verdict of curves with bounds, and the dismissed side's possible lead
    and share (NaN unless the verdict is a dominance with a dismissed side).

    ``a``/``b`` are the reported values (they set the relative margin and scale the
    lead); ``bounds_a = (lo_a, hi_a)``. With ``lo = hi = value`` this is
    :func:`margin_verdict`.

    >>> x = np.linspace(0, 1, 11); a, b = 2 + x, 1 + x; m = margins(a, b, "relative", 0, 1)
    >>> bounds_verdict(x, a, b, (a - .3, a + .3), (b - .3, b + .3), m, "linear", False)[0]
    'dominates'
    >>> bounds_verdict(x, a, b, (a - .6, a + .6), (b - .6, b + .6), m, "linear", False)[0]
    'bounds overlap'
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    lo_a, hi_a = (np.asarray(x, dtype=np.float64) for x in bounds_a)
    lo_b, hi_b = (np.asarray(x, dtype=np.float64) for x in bounds_b)
    s_low = signs(lo_a, hi_b, rtol, atol)  # +1: A surely ahead; -1: B possibly ahead
    s_high = signs(hi_a, lo_b, rtol, atol)  # +1: A possibly ahead; -1: B surely ahead
    m_low = material_signs(lo_a, hi_b, s_low, m)
    m_high = material_signs(hi_a, lo_b, s_high, m)
    ahead = _share_holds(theta, lo_a, hi_b, m_low, axis, step, min_share)
    behind = _share_holds(theta, lo_b, hi_a, -m_high, axis, step, min_share)
    maybe_ahead = _share_holds(theta, hi_a, lo_b, m_high, axis, step, min_share)
    maybe_behind = _share_holds(theta, hi_b, lo_a, -m_low, axis, step, min_share)
    if ahead and behind:
        verdict = "crosses"
    elif ahead and not maybe_behind:
        verdict = "dominates"
    elif behind and not maybe_ahead:
        verdict = "dominated"
    elif not maybe_ahead and not maybe_behind:
        verdict = "tied"
    else:
        verdict = OVERLAP
    side = {"dominates": -1, "dominated": 1}.get(verdict)
    plain = s_high if side == 1 else s_low
    if side is None or not (plain == side).any():
        return verdict, float("nan"), float("nan")
    ahead_end, behind_end = (hi_a, lo_b) if side > 0 else (hi_b, lo_a)
    with np.errstate(invalid="ignore"):
        gap = ahead_end - behind_end
        if unit != "n":  # relative to the largest value or bound involved
            scale = np.maximum(np.maximum(np.abs(a), np.abs(b)), np.abs(ahead_end))
            gap = gap / np.maximum(scale, np.abs(behind_end))
    lead = float(np.max(gap[plain == side]))
    share = (
        share_ahead(theta, hi_a, lo_b, s_high, axis, step)
        if side > 0
        else share_ahead(theta, hi_b, lo_a, -s_low, axis, step)
    )
    return verdict, lead, share


def _point_scale(c: np.ndarray) -> np.ndarray:
    """Each point's largest finite |value| over axis 0 (1 where there is none): the unit
    that values are squared in, so that squares neither underflow nor overflow."""
    with np.errstate(invalid="ignore"):
        top = np.max(np.where(np.isfinite(c), np.abs(c), 0.0), axis=0, initial=0.0)
    return np.where(top > 0, top, 1.0)


def replicate_sd(centred: np.ndarray) -> np.ndarray:
    """Step 8: each point's standard deviation from centred replicate errors (repeat on
    axis 0); NaN where a replicate is not finite. Squared in units of each point's
    largest error, so a spread of 1e-170 or 1e200 is not lost to underflow or overflow.

    >>> replicate_sd(np.array([[-3e-170, 1e200], [3e-170, -1e200]])).tolist()
    [4.242640687119285e-170, 1.414213562373095e+200]
    """
    c = np.asarray(centred, dtype=np.float64)
    finite = np.isfinite(c).all(axis=0)
    sd = np.full(c.shape[1:], np.nan)
    if c.shape[0] > 1:
        unit = _point_scale(c[:, finite])
        scaled = c[:, finite] / unit
        sd[finite] = unit * np.sqrt(np.sum(scaled**2, axis=0) / (c.shape[0] - 1))
    return sd


def combined_sd(sd_a: np.ndarray, sd_b: np.ndarray) -> np.ndarray:
    """Step 8: the sd of a difference of independent sets, ``sqrt(sd_a^2 + sd_b^2)``,
    squared in units of the larger (NaN where either is NaN).

    >>> combined_sd(np.array([3e-200, 3.0]), np.array([4e-200, np.nan])).tolist()
    [5e-200, nan]
    """
    x = np.abs(np.asarray(sd_a, dtype=np.float64))
    y = np.abs(np.asarray(sd_b, dtype=np.float64))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        top = np.maximum(x, y)
        unit = np.where(np.isfinite(top) & (top > 0), top, 1.0)
        out = unit * np.sqrt((x / unit) ** 2 + (y / unit) ** 2)
    return np.where(np.isinf(top) & ~np.isnan(x + y), np.inf, out)


def bracket_reach(
    a: np.ndarray,
    b: np.ndarray,
    bounds_a: tuple[np.ndarray, np.ndarray],
    bounds_b: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Step 8 with bounds: how far below and above ``a - b`` the brackets let the true
    difference reach, ``(a - lo_a) + (hi_b - b)`` and ``(hi_a - a) + (b - lo_b)`` (a value
    outside its bracket adds 0; a NaN bound is unbounded, inf).

    >>> a, b = (np.array([4.5]), np.array([5.25])), (np.array([2.75]), np.array([3.5]))
    >>> lo, hi = bracket_reach(np.array([5.0]), np.array([3.0]), a, b)
    >>> lo.tolist(), hi.tolist()
    ([1.0], [0.5])
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    lo_a, hi_a = (np.asarray(x, dtype=np.float64) for x in bounds_a)
    lo_b, hi_b = (np.asarray(x, dtype=np.float64) for x in bounds_b)
    with np.errstate(invalid="ignore", over="ignore"):
        below = np.maximum(a - lo_a, 0) + np.maximum(hi_b - b, 0)
        above = np.maximum(hi_a - a, 0) + np.maximum(b - lo_b, 0)
    return np.where(np.isnan(below), np.inf, below), np.where(np.isnan(above), np.inf, above)


def widened_sd(sd: np.ndarray, reach: np.ndarray, z: float) -> np.ndarray:
    """Step 8 with bounds, for :func:`samples_needed`: the sd whose ``z sd`` is
    ``z sd + reach``, the noise of :func:`finding`'s widened band (NaN sd stays NaN; with
    ``z = 0`` there is no noise to widen, and the sd is returned as it is).

    >>> widened_sd(np.array([1.0, np.nan]), np.array([0.5, 0.5]), 2.0).tolist()
    [1.25, nan]
    """
    sd = np.asarray(sd, dtype=np.float64)
    if not np.isfinite(z) or z <= 0:
        return sd
    with np.errstate(invalid="ignore", over="ignore"):
        return sd + np.asarray(reach, dtype=np.float64) / z


def familywise_z(centred: list[np.ndarray], level: float, seed: int = 0) -> float:
    """Step 8: the z that makes ``d ± z sd`` hold for every pair of sets and point at once
    with confidence ``level``, from each set's centred replicate errors (repeat × point).

    >>> rng = np.random.default_rng(1)
    >>> c = [rng.standard_normal((400, 1)), rng.standard_normal((400, 1))]
    >>> round(familywise_z(c, 0.95), 1)  # one point, one pair: the normal 1.96
    2.0
    """
    rng = np.random.default_rng(seed)
    draws, variances = [], []
    # Each point in units of its largest error over every set: the statistic is a ratio,
    # and squares of tiny or huge values must not underflow or overflow.
    arrays = [np.asarray(c, dtype=np.float64) for c in centred]
    unit = _point_scale(np.concatenate(arrays, axis=0)) if arrays else 1.0
    for c in arrays:
        ok = np.isfinite(c).all(axis=0)
        clean = np.where(ok, c, 0.0) / unit
        w = rng.standard_normal((RECOMBINATIONS, c.shape[0]))
        draws.append(w @ clean / np.sqrt(max(c.shape[0] - 1, 1)))
        var = np.sum(clean**2, axis=0) / max(c.shape[0] - 1, 1)
        variances.append(np.where(ok, var, np.nan))
    stat = np.zeros(RECOMBINATIONS)
    # One buffer for every pair (the S² pairs dominate a comparison of many sets): a point
    # without a band gets sd = inf, so it adds |d| / inf = 0 (stat >= 0 already).
    buf = np.empty_like(draws[0]) if draws else np.empty(0)
    for i in range(len(centred)):
        for j in range(i + 1, len(centred)):
            sd = np.sqrt(variances[i] + variances[j])
            use = np.isfinite(sd) & (sd > 0)
            if use.any():
                np.subtract(draws[i], draws[j], out=buf)
                np.abs(buf, out=buf)
                np.divide(buf, np.where(use, sd, np.inf), out=buf)
                np.maximum(stat, buf.max(axis=1), out=stat)
    return float(np.quantile(stat, level))


def finding(
    theta: np.ndarray,
    d: np.ndarray,
    sd: np.ndarray,
    z: float,
    m: np.ndarray,
    axis: str,
    step: bool,
    min_share: float = MIN_SHARE,
    reach: np.ndarray | float = 0.0,
) -> str:
    """Step 8: the finding from the difference ``d`` and its standard deviation ``sd``
    (NaN: no band at that point) under the family-wise ``z``; ``reach`` widens the band
    ``d ± (z sd + reach)`` by how far large-n brackets let the difference go
    (:func:`bracket_reach`).

    >>> x = np.linspace(0.0, 1.0, 5); m = np.full(5, 0.01)
    >>> finding(x, np.full(5, 0.5), np.full(5, 0.1), 3.0, m, "linear", False)
    'dominates'
    >>> finding(x, np.full(5, 0.2), np.full(5, 0.1), 3.0, m, "linear", False)
    'not distinguishable'
    """
    lower, upper = _finding_band(d, sd, z, reach)
    got = confident_verdict(theta, lower, upper, m, axis, step, min_share)
    return NOT_DISTINGUISHABLE if got == "uncertain" else got


def _finding_band(d, sd, z: float, reach) -> tuple[np.ndarray, np.ndarray]:
    """Step 8's band ``d ± (z sd + reach)``; unbounded where sd is NaN."""
    d = np.asarray(d, dtype=np.float64)
    half = np.where(np.isfinite(sd), z * np.asarray(sd, dtype=np.float64), np.inf) + reach
    with np.errstate(invalid="ignore"):
        return d - half, d + half


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """The (first, last) indices of each run of consecutive True values.

    >>> runs(np.array([False, True, True, False, True]))
    [(1, 2), (4, 4)]
    """
    mask = np.asarray(mask, dtype=bool)
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def finding_parts(
    theta: np.ndarray,
    d: np.ndarray,
    sd: np.ndarray,
    z: float,
    m: np.ndarray,
    axis: str,
    step: bool,
    min_share: float = MIN_SHARE,
    reach: np.ndarray | float = 0.0,
) -> tuple[float, list[tuple[float, float]]]:
    """Step 9: the side that step 8's band orders on part of the domain (+1: the first set,
    -1: the second; NaN when neither, or both) and the parameter ranges where it does.

    Meant for a pair whose finding over the whole domain is "not distinguishable"; on any
    other it returns the side of a dominance over its confident points.

    >>> q = np.geomspace(0.01, 100, 9); d = np.where(q < 0.1, 0.0, 0.3)
    >>> finding_parts(q, d, np.full(9, 0.05), 3.0, np.full(9, 0.01), "log", False)
    (1.0, [(0.1, 100.0)])
    """
    theta = np.asarray(theta, dtype=np.float64)
    lower, upper = _finding_band(d, sd, z, reach)
    with np.errstate(invalid="ignore"):
        ahead, behind = lower > m, upper < -m
    a_holds = _holds(theta, ahead, axis, step, min_share)
    b_holds = _holds(theta, behind, axis, step, min_share)
    if a_holds == b_holds:
        return float("nan"), []
    mask = ahead if a_holds else behind
    parts = [(float(theta[i]), float(theta[j])) for i, j in runs(mask)]
    return (1.0 if a_holds else -1.0), parts


def samples_needed(
    d: np.ndarray, sd: np.ndarray, z: float, m: np.ndarray, n: float, min_share: float
) -> tuple[float, int, float]:
    """Step 8: about how many samples per set would make the leading side's dominance
    confident, the point its lead is read at, and that side (+1: the first set, -1: the
    second); NaN, -1 and NaN when no point leads beyond the margin, or the other side leads
    beyond it on ``min_share`` of the points: no dominance to resolve.

    The point read is the binding one, which need not be where the leader is ahead: the
    side says who leads, the difference there need not.

    The noise falls as ``1/sqrt(n)``. The leader (the side ahead beyond the margin on more
    points) must be confidently ahead on ``min_share`` of the points, each needing
    ``n (z sd / (lead - m))^2``, and not possibly behind on the rest, each needing
    ``n (z sd / (lead + m))^2``; the estimate is the larger of the two needs, read at the
    point that sets it.

    >>> samples_needed(np.array([0.02]), np.array([0.01]), 3.0, np.array([0.0]), 200, 0.05)
    (450.0, 0, 1.0)
    """
    d = np.asarray(d, dtype=np.float64)
    sd = np.asarray(sd, dtype=np.float64)
    m = np.broadcast_to(np.asarray(m, dtype=np.float64), d.shape)
    ok = np.isfinite(d) & np.isfinite(sd) & (sd > 0)
    # Each point in units of its largest of |d|, sd and m: the needs are ratios, and
    # tiny values must not lose their digits in subnormal floats.
    with np.errstate(invalid="ignore"):
        unit = np.maximum(np.maximum(np.abs(d), np.abs(sd)), np.abs(m))
    unit = np.where(ok & (unit > 0), unit, 1.0)
    d, sd, m = d / unit, sd / unit, m / unit
    usable = int(np.sum(ok))
    if usable == 0:
        return float("nan"), -1, float("nan")
    gap = np.where(ok, d, 0.0)
    side = 1.0 if np.sum(gap > m) >= np.sum(-gap > m) else -1.0
    lead = side * gap
    k = max(1, int(np.ceil(min_share * usable)))
    if np.sum(ok & (lead < -m)) >= k or not np.any(ok & (lead > m)):
        return float("nan"), -1, float("nan")
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # inf: no need
        ahead = np.where(ok & (lead > m), (z * sd / (lead - m)) ** 2, np.inf)
        behind = np.where(ok, (z * sd / np.maximum(lead + m, 0.0)) ** 2, 0.0)
    order = np.argsort(ahead, kind="stable")
    pick = int(order[k - 1])
    if not np.isfinite(ahead[pick]):
        return float("nan"), -1, float("nan")
    # All but fewer than k points must not be possibly behind; the need and the point read
    # are the binding one of the two (0 / 0, no noise and no room, counts as unbounded).
    behind = np.where(np.isnan(behind), np.inf, behind)
    idx = np.flatnonzero(ok)
    by_need = idx[np.argsort(-behind[idx], kind="stable")]
    need, at = float(ahead[pick]), pick
    if by_need.size >= k and behind[by_need[k - 1]] > need:
        need, at = float(behind[by_need[k - 1]]), int(by_need[k - 1])
    if not np.isfinite(need) or need <= 1.0:  # <= n: the share, not the noise, is short
        return float("nan"), -1, float("nan")
    return float(np.ceil(n * need)), at, side
