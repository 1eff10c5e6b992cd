"""The registry of diversity families known to :func:`profiles`.

Each entry is the single source of truth for a family: which parameter it sweeps
and how that is written (symbol, axis title), the parameter's bounds and scale,
how its default domain follows the data, whether it is resampled, extendable,
integer-valued, which band it carries (bootstrap, or certified bounds), and how
to evaluate it on a grid from a prepared set. Every other module (profiles,
resampling, the explorer and its JavaScript, plots, summaries, reports) reads
these facts instead of branching on family names. The numerics live in the
family modules; this file only adapts. Adding a family is one entry here plus its
own module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ..large import column_bytes_per_point
from . import _large as large
from ._condition import Condition, PreparedSet
from ._plan import Plan

#: Variables a family returns: name -> (values, extra attributes).
Result = dict[str, tuple[np.ndarray, dict]]
#: Each sample's influence on a variable: name -> n × grid ({} where it cannot be had),
#: given the set's own values of the family on the grid (var -> grid; {} where not known).
Influence = Callable[
    [Condition, Plan, PreparedSet, np.ndarray, Mapping[str, np.ndarray]], dict[str, np.ndarray]
]

#: Grid points where an influence that costs an n × n pass per point is computed; the
#: others are interpolated along the family's axis (the curves are smooth there).
INFLUENCE_POINTS = 24


@dataclass(frozen=True)
class Shown:
    """How a family is written and drawn (sent to the browser, so js/ names no family)."""

    long_name: str
    symbol: str = ""  # how the parameter is written in text ("q", "τ")
    axis_title: str = ""  # the parameter axis of a chart ("order q")
    integer: bool = False  # integer-valued (counts), shown without decimals
    #: Landmark parameter values shown by the text demo; quartiles of the grid if empty.
    landmarks: tuple[float, ...] = ()


@dataclass(frozen=True)
class VerdictPolicy:
    """How two curves of the family are compared (the rule: :mod:`..comparison`)."""

    step: bool = False  # an integer step function of its parameter (no interpolation)
    #: Practical-significance margin (verdict rule, step 5): a fraction of the smaller
    #: set's size for counts ("n"), of the larger value otherwise.
    margin_unit: str = "relative"
    margin: float = 0.01


@dataclass(frozen=True)
class Cost:
    """What the planner (:mod:`._planning`) knows of the family's time and memory."""

    #: The largest n that method="auto" keeps exact, measured at d = 768 on 2 shared cores
    #: (benchmarks/large_n.py); None: the family has no large-n method and always runs exact.
    auto_exact_max_n: int | None = None
    #: n × n float64 matrices the exact method holds at its peak besides the distance
    #: matrix (kernel, eigen workspace, ...); None: it needs no n × n matrix at all.
    exact_copies: float | None = 1.0
    #: With cosine similarity of embeddings it works on the d × d dual form (no matrix).
    dual_kernel: bool = False
    #: The exact method streams the pairs unless a distance matrix is formed anyway.
    streams_exact: bool = False
    #: Bytes per pair its large-n solver holds when that fits in memory (else it
    #: recomputes); 0: only block buffers and per-point arrays. A tuple lists its memory
    #: modes, largest first: it holds the first that fits.
    large_solver_bytes: float | tuple[float, ...] = 0.0
    #: When that does not fit: True, it keeps what fits (up to its memory limit); False,
    #: it recomputes tiles and holds no n × n data at all.
    large_solver_fills_limit: bool = False
    #: Bytes per point its large-n solver works with beside what it holds per pair (column
    #: blocks: Krylov bases, preconditioners, CG vectors), at its largest stage. A tuple
    #: gives one figure per memory mode of ``large_solver_bytes``, then one for none held.
    large_solver_bytes_per_point: float | tuple[float, ...] = 3 * 256 * 8
    #: Distances on which it is a closed form (either method) with no pass over the pairs.
    closed_form_distances: tuple[str, ...] = ()
    #: Its exact method (values and influence) works on the distinct rows and their counts
    #: (``PreparedSet.collapsed``), so the planner sizes it by the distinct rows.
    collapses_duplicates: bool = False


@dataclass(frozen=True)
class LargeInfluence:
    """A family's whole-set influences on its large-n method, by their exact formula."""

    max_n: int  # up to this many samples per set
    points: int  # on this many grid points, interpolated between them
    #: (n, points): above n samples, on this (smaller) number of grid points instead
    fewer_above: tuple[int, int] | None = None
    exponent: float = 3.0  # the work per point grows as n to this power (a factorisation)
    method: str = "the exact jackknife"  # how they are computed, as the plan names it

    def points_at(self, n: int) -> int:
        """Grid points the influences of a set of ``n`` samples are computed on."""
        if self.fewer_above is not None and n > self.fewer_above[0]:
            return self.fewer_above[1]
        return self.points


@dataclass(frozen=True)
class Family:
    """One registry entry: the parameter, the grid rule and the evaluation, then how the
    family is shown, compared and costed (one group each)."""

    name: str
    parameter: str | None  # dimension name of the sweep; None for scale-free families
    axis: str  # "log", "linear" or "none": how the parameter is read and compared
    #: The default grid of a condition under a plan: (grid, how it was chosen).
    domain: Callable[[Condition, Plan, int], tuple[np.ndarray, str]] | None
    #: The family's variables for one set on a grid, under the call's plan.
    evaluate: Callable[[Condition, Plan, PreparedSet, np.ndarray], Result]
    shown: Shown
    rule: VerdictPolicy = VerdictPolicy()
    cost: Cost = Cost()
    #: Bounds of a user's parameter values: always >= 0; 0 excluded when low_open, ∞
    #: accepted when allow_inf.
    low_open: bool = False
    allow_inf: bool = False
    #: More grid points can be computed beyond either end (an open log axis; not when
    #: the grid ends at ∞).
    extendable: bool = False
    #: Variables holding certified (lower, upper) bounds, drawn as the band when no
    #: bootstrap band exists; None when the family's value is exact.
    bounds: tuple[str, str] | None = None
    bootstrapped: bool = True  # replicates (bands, common_n means) are computed for it
    #: Each sample's influence on the family's values (var -> n × grid), from which the
    #: default uncertainty draws its multiplier replicates (pipeline/_resampling.py); None:
    #: the family has none (its sampling band needs half-sample replicates).
    influence: Influence | None = None
    #: On its large-n method, its influences of the whole set by their exact formula (where
    #: and how); None: it has none there.
    large_influence: LargeInfluence | None = None
    #: On its large-n method, its influences are estimated on a random subset and scaled
    #: to n (pipeline/_resampling.py): only for means over pairs (energy, average
    #: distance), whose projection converges as the set grows; measured at n = 3,000 the
    #: subset's standard errors are 0.97-1.05 of the whole set's. Vendi's and magnitude's
    #: were 0.3-0.8 and 0.5-3 (their values grow with n): not from a subset (magnitude keeps
    #: its whole-set jackknife, ``large_influence``).
    influence_from_subset: bool = False
    #: On its large-n method (and without influences there), its sampling band comes from
    #: replicates of the exact method on random subsets of m samples, the spread scaled to n
    #: (pipeline/_resampling.py, :func:`large_subsamples`). Only where measured to hold:
    #: Vendi's standard errors came out 0.79-1.53 of the spread over 30 independent draws
    #: at n = 1,200, m = 300 and 0.73-1.53 at n = 2,400, m = 240 (lowest at q = 0.1);
    #: magnitude's were 0.25-0.5 at large scales (benchmarks/large_n_vendi_spread.py).
    subsample_when_large: bool = False
    #: On its large-n method (and without influences there), the default uncertainty draws
    #: half-sample replicates of its *exact* method's cheap bound (the replicates'
    #: ``circles_method="lower"``) for sets of at most this many samples; 0: never. The
    #: spread of that bound over halves of the set stands in for the spread of the
    #: large-n value; measured where it is set (``CIRCLES_LARGE_HALF_SAMPLE_MAX_N``).
    half_samples_when_large: int = 0
    uses_kernel: bool = False  # reads the condition's similarity: kernel/bandwidth recorded
    #: Its true value never increases along the parameter (a theorem, not a measurement):
    #: the error of the drawn curve between grid points has a certified bound, stored
    #: beside the values (pipeline/_between.py).
    nonincreasing: bool = False
    #: Replicates slice each set's distance matrix (formed once before resampling).
    slices_distances: bool = False
    default: bool = True  # computed when profiles() is called without families=
    #: One set's values at any grid, with the work shared by every grid done once (e.g.
    #: Vendi's eigenvalues), for the rounds of an adaptive grid (``._adaptive``); None:
    #: each round calls ``evaluate``. Used on the exact method only.
    evaluator: Callable[[Condition, Plan, PreparedSet], Callable[[np.ndarray], Result]] | None = (
        None
    )
    #: The same on the large-n method, from one solver session kept across the rounds
    #: (``..large.open_solver``); it returns None where the family's solver does not apply
    #: to the set. A family without one keeps a fixed grid on its large-n method: each
    #: round would redo all of its work.
    large_evaluator: (
        Callable[[Condition, Plan, PreparedSet], Callable[[np.ndarray], Result] | None] | None
    ) = None

    @property
    def long_name(self) -> str:
        return self.shown.long_name

    def display(self) -> dict:
        """The facts a view needs (sent to the browser so js/ holds no family names)."""
        return {
            "name": self.name,
            "parameter": self.parameter,
            "axis": self.axis,
            "step": self.rule.step,
            "integer": self.shown.integer,
            "long_name": self.shown.long_name,
            "symbol": self.shown.symbol or (self.parameter or ""),
            "axis_title": self.shown.axis_title or (self.parameter or ""),
            "extendable": self.extendable,
            "margin_unit": self.rule.margin_unit,
            "margin": self.rule.margin,
        }


# --- Vendi -----------------------------------------------------------------


def _q_domain(cond: Condition, plan: Plan, n_points: int) -> tuple[np.ndarray, str]:
    """[0, inf]: 0, 1, 2 and inf, plus a log grid dense on 0.1–10 (80% of the points)."""
    m = n_points - 2  # finite, positive orders
    inner = round(0.8 * m)
    outer = m - inner
    grid = np.concatenate(
        [
            np.logspace(-2, -1, outer // 2, endpoint=False),
            np.logspace(-1, 1, inner),
            np.logspace(1, 2, outer - outer // 2 + 1)[1:],
        ]
    )
    for exact in (1.0, 2.0):  # snap the nearest point so q = 1 and q = 2 are on the grid
        grid[np.argmin(np.abs(np.log(grid / exact)))] = exact
    return (
        np.concatenate([[0.0], grid, [np.inf]]),
        "0, inf and a log grid on [0.01, 100] with 80% of it on [0.1, 10], including 1 and 2",
    )


def _vendi(cond: Condition, plan: Plan, item: PreparedSet, qs: np.ndarray) -> Result:
    if plan.large("vendi") and cond.kernel != "cosine similarity":
        return large.vendi(cond, plan, item, qs)
    return _vendi_evaluator(cond, plan, item)(qs)


def _vendi_evaluator(
    cond: Condition, plan: Plan, item: PreparedSet
) -> Callable[[np.ndarray], Result]:
    """Vendi at any orders from one eigendecomposition of the set's kernel (exact method)."""
    from ..families import vendi_from_spectrum

    lam = _vendi_spectrum(cond, plan, item)
    return lambda qs: {"vendi": (vendi_from_spectrum(lam, qs), {})}


def _vendi_large_evaluator(
    cond: Condition, plan: Plan, item: PreparedSet
) -> Callable[[np.ndarray], Result] | None:
    """On the large-n route: the d × d dual form of cosine similarity is the exact method
    itself; the Gaussian kernel's from one vendi_large session."""
    if cond.kernel == "cosine similarity":
        return _vendi_evaluator(cond, plan, item)
    return large.vendi_evaluator(cond, plan, item)


def _vendi_spectrum(cond: Condition, plan: Plan, item: PreparedSet) -> np.ndarray:
    from ..families import (
        clean_spectrum,
        dual_kernel_spectrum,
        spectrum_of_kernel,
    )

    p = None if item.weights is None else item.weights / item.weights.sum()
    n, d = item.embeddings.shape if item.embeddings is not None else (item.n, item.n)
    if cond.kernel == "cosine similarity" and p is None and d < n:
        # the d × d covariance on the set's engine (in memory, a dask tree sum, a device)
        raw = large.engine(item).dual_spectrum(large.prepared_input(item))
        size = max(n, d)
    elif cond.kernel == "cosine similarity":  # embeddings are unit rows: the d × d dual form
        assert item.embeddings is not None  # this kernel is only chosen for embeddings
        raw = dual_kernel_spectrum(item.embeddings, p, normalize=False)
        size = max(item.embeddings.shape)
    else:
        raw = spectrum_of_kernel(cond.similarity(item, plan.bandwidth), p)
        size = item.n
    try:
        lam = clean_spectrum(raw, f"profiles (vendi, set {item.label!r})", size)
    except ValueError as exc:
        if cond.distance != "precomputed" or cond.kernel != "gaussian":
            raise
        raise ValueError(
            f"{exc} The Gaussian kernel of a precomputed distance is positive semidefinite only "
            f"when the distance is Euclidean; pass similarities={{label: K, ...}} (or a similarity "
            f"callable) with a PSD kernel for Vendi, or leave 'vendi' out of families."
        ) from None
    return lam


# --- Magnitude -------------------------------------------------------------


def _t_domain(cond: Condition, plan: Plan, n_points: int) -> tuple[np.ndarray, str]:
    from ..families import magnitude_scale_range

    if plan.large("magnitude"):
        return _t_domain_large(cond, plan, n_points)
    ranges = [magnitude_scale_range(item.D) for item in cond.sets]
    lo = min(r[0] for r in ranges)
    hi = max(r[1] for r in ranges)
    return _log_grid(
        lo,
        hi,
        n_points,
        "log grid from where every set's magnitude is within 1% of 1 (normalised) to where "
        "every set reaches 95% of its number of distinct points",
    )


def _log_grid(lo: float, hi: float, n_points: int, how: str) -> tuple[np.ndarray, str]:
    """``n_points`` log-spaced scales from ``lo`` to ``hi`` (two decades when they meet)."""
    if not hi > lo:
        hi = lo * 100.0
    return np.geomspace(lo, hi, n_points), how


def _t_domain_large(cond: Condition, plan: Plan, n_points: int) -> tuple[np.ndarray, str]:
    """Where the certified lower bound n²/1ᵀZ_t1 (normalised) reaches 1% and 95%."""
    lo, hi = np.inf, 0.0
    for item in cond.sets:
        h, n = large.histogram(item), item.n
        ts = np.geomspace(1e-6, 1e6, 481) / max(h.mean_distance(), 1e-300)
        norm = (large.magnitude_lower_bound(h, n, ts) - 1.0) / max(n - 1, 1)
        lo = min(lo, float(ts[min(int(np.searchsorted(norm, 0.01)), ts.size - 1)]))
        hi = max(hi, float(ts[min(int(np.searchsorted(norm, 0.95)), ts.size - 1)]))
    return _log_grid(
        lo,
        hi,
        n_points,
        "log grid from where every set's certified lower bound n^2 / 1'Z_t 1 on the "
        "magnitude is 1% of the way from 1 to n, to where it reaches 95%",
    )


def _magnitude(cond: Condition, plan: Plan, item: PreparedSet, ts: np.ndarray) -> Result:
    from ..families import magnitude_values

    if plan.large("magnitude"):
        return large.magnitude(cond, plan, item, ts)
    return {"magnitude": (magnitude_values(item.D, ts), {})}


# --- Circles ---------------------------------------------------------------

#: Circles on its large-n method gets the default's half-sample replicates of the exact
#: method's greedy bound up to this many samples per set (each replicate O(n²) per
#: threshold on n/2 samples). Their standard errors against the spread of the large-n value
#: over independent draws (benchmarks/large_n_circles_spread.py, 2026-12-06): at 6,000,
#: 0.85-1.51 (20 draws; 5-mode mixture, d = 16, Euclidean) and 0.71-1.26 (16 draws; d = 64,
#: cosine); at 8,000 (d = 64, cosine) 0.61-1.12, mostly below 1: too narrow to ship there.
CIRCLES_LARGE_HALF_SAMPLE_MAX_N = 6_000


def _tau_domain(cond: Condition, plan: Plan, n_points: int) -> tuple[np.ndarray, str]:
    if plan.large("circles"):
        taus = large.pooled_histogram(cond).quantile(np.linspace(0.0, 1.0, n_points - 1))
        return (
            np.unique(np.concatenate([[0.0], taus])),
            "0 and quantiles 0..1 of the pooled within-set pairwise distances (from the "
            "log-distance histogram, within a factor 1.0007)",
        )
    pairs = [item.pair_distances() for item in cond.sets]
    taus = pair_quantiles(pairs, np.linspace(0.0, 1.0, n_points - 1))
    return (
        np.unique(np.concatenate([[0.0], taus])),
        "0 and quantiles 0..1 of the pooled within-set pairwise distances",
    )


def pair_quantiles(pairs: list[tuple[np.ndarray, np.ndarray | None]], probs) -> np.ndarray:
    """``np.quantile`` (linear) of the pooled pairs, each distance counted its weight times
    (whole numbers: the products of duplicate counts, see ``PreparedSet.pair_distances``).

    >>> pair_quantiles([(np.array([0.0, 3.0]), np.array([3.0, 3.0]))], [0.5, 0.6])
    array([1.5, 3. ])
    """
    probs = np.asarray(probs, dtype=np.float64)
    if all(w is None for _, w in pairs):
        return np.quantile(np.concatenate([d for d, _ in pairs]), probs)
    d = np.concatenate([v for v, _ in pairs])
    w = np.concatenate([np.ones(v.size) if m is None else m for v, m in pairs])
    order = np.argsort(d, kind="stable")
    d, cum = d[order], np.cumsum(w[order])
    # the value at position r of the sorted multiset, as numpy's "linear" method reads it
    h = probs * (cum[-1] - 1)
    lo = np.floor(h)
    at = lambda r: d[np.minimum(np.searchsorted(cum, r, side="right"), d.size - 1)]  # noqa: E731
    a, b, t = at(lo), at(np.minimum(lo + 1, cum[-1] - 1)), h - lo
    return np.where(t >= 0.5, b - (b - a) * (1 - t), a + (b - a) * t)


def _circles(cond: Condition, plan: Plan, item: PreparedSet, taus: np.ndarray) -> Result:
    from ..core import BOUNDS, EXACT
    from ..families import circles_sweep

    if plan.large("circles"):
        return large.circles(cond, plan, item, taus)
    # Copies of a sample are at distance 0 <= τ: at most one of them is in a set of circles,
    # so the distinct rows give the same answer.
    lower, upper, exact = circles_sweep(
        item.distinct_D,
        taus,
        method=cond.circles_method,
        seed=cond.seed,
        remedy="The upper bounds are the tree's circles_upper; pass circles_method='exact' "
        "to profiles to search without a time limit.",
    )
    # Where a threshold's bounds still differ (greedy above 250 samples, or CP-SAT out of
    # time) the value is the lower bound: verdicts must respect the bracket (compare, step 7).
    note = {"exact": int(exact), "method": EXACT if exact else BOUNDS}
    return {"circles": (lower, note), "circles_upper": (upper, note)}


# --- Energy ----------------------------------------------------------------


def _s_domain(cond: Condition, plan: Plan, n_points: int) -> tuple[np.ndarray, str]:
    from ..families import energy_grid_limit, energy_scale_range

    hist = large.histogram if plan.large("energy") else (lambda item: item.histogram)
    hists = [hist(item) for item in cond.sets]
    lo, hi = energy_scale_range(hists)
    how = "log grid from 0.1 / sd(log d) to where d^-s weight sits on 1% of the pairs"
    # Unscaled data (raw pixels, distances ~1e4) reach mean d^-s < 1e-308 well before the
    # curves bend: the grid stops where float64 stops, and says how to see the rest.
    top = energy_grid_limit(hists)
    if top < hi:
        lo = min(lo, top / 10)
        how += (
            f", capped at s = {top:.4g} where d^-s of the closest or farthest pair reaches "
            f"e^±690 (float64 holds e^±708); rescale the distances to order 1 to reach "
            f"s = {hi:.4g}"
        )
        hi = top
    return np.geomspace(lo, hi, n_points), how


def _energy(cond: Condition, plan: Plan, item: PreparedSet, ss: np.ndarray) -> Result:
    from ..core import EXACT
    from ..engines import iter_distance_blocks
    from ..families import PairPowerSums, energy_from_pairs

    if plan.large("energy"):
        return large.energy(cond, plan, item, ss)
    # Exact: power sums over every pair (the histogram's bins are too coarse for the
    # large s of concentrated data, 1e-4 off at s ≈ 900), streamed if no matrix exists.
    sums = PairPowerSums(ss)
    if item.has_distance_matrix or item.embeddings is None or item.weights is not None:
        sums.add_matrix(item.D, item.weights)
    else:  # energy alone never needs the n × n matrix
        for block in iter_distance_blocks(item.embeddings, item.distance):
            sums.add(block)
    value = energy_from_pairs(sums, f"energy profile of set {item.label!r}")
    note = "log-space power sums over every pair, exact to float64 round-off"
    return {"energy": (value, {"method": EXACT, "method_note": note})}


# --- Leinster–Cobbold -----------------------------------------------------


def _similarity_diversity(cond: Condition, plan: Plan, item: PreparedSet, qs: np.ndarray) -> Result:
    """Z is the condition's similarity (the one Vendi uses; its kernel and bandwidth are
    recorded on the node because the entry says ``uses_kernel``), with negative cosine
    similarities counted as 0; p is uniform, or the replicate's multiplicities."""
    from ..families import Z_OF_KERNEL, similarity_diversity_values

    if cond.kernel == "cosine similarity":  # cos = 1 - cosine distance; exactly 1 for twins
        Z = 1.0 - item.D
    else:  # Tanimoto (1 - D), a Gaussian kernel of D, or the given similarity
        Z = cond.similarity(item, plan.bandwidth)
    p = None if item.weights is None else item.weights / item.weights.sum()
    values = similarity_diversity_values(Z, p, qs, f"similarities[{item.label!r}]")
    return {"similarity_diversity": (values, {"similarity": Z_OF_KERNEL[cond.kernel]})}


# --- Scale-free ------------------------------------------------------------


def _average_distance(cond: Condition, plan: Plan, item: PreparedSet, _: np.ndarray) -> Result:
    if item.distance == "cosine" and not item.has_distance_matrix:
        assert item.embeddings is not None  # "cosine" sets are embeddings ("precomputed" are not)
        # Exact in O(n d) for unit rows: sum_{i != j} m_i m_j cos_ij = |sum_i m_i x_i|^2 - sum m_i^2
        # (m_i = 1 without resampling; pairs of copies of one sample are not pairs).
        m = np.ones(item.n) if item.weights is None else item.weights
        total = m @ item.embeddings
        pairs = m.sum() ** 2 - np.sum(m**2)
        mean_cos = (float(total @ total) - np.sum(m**2)) / pairs
        return {"average_distance": (np.asarray(1.0 - mean_cos), {})}
    if plan.large("average_distance"):
        return large.average_distance(cond, plan, item)
    return {"average_distance": (np.asarray(item.histogram.mean_distance()), {})}


def _richness(cond: Condition, plan: Plan, item: PreparedSet, _: np.ndarray) -> Result:
    return {"richness": (np.asarray(item.richness), {"tolerance": item.richness_tol})}


# --- Sampling influence (the default uncertainty) ---------------------------


def _influence_allowed(plan: Plan, item: PreparedSet, family: str) -> bool:
    """Influences exist for exact values of a whole, unweighted set."""
    return not plan.large(family) and item.weights is None and item.n >= 3


def _on_subgrid(
    fn: Callable[[np.ndarray], np.ndarray],
    grid: np.ndarray,
    points: int = INFLUENCE_POINTS,
    shape: np.ndarray | None = None,
) -> np.ndarray:
    """``fn`` (grid -> n × grid) on at most ``points`` of a positive log grid, interpolated
    linearly in log θ to the others. The points are the nearest to even steps of log θ (an
    adaptive grid is dense where curves bend or cross, not everywhere).

    ``shape`` (one positive value per grid point, e.g. the variance's known shape along the
    grid): what is interpolated is the influences divided by it, multiplied back at every
    point. For magnitude, ``(Mag - 1)(n - Mag)/n`` took the standard errors of influences
    interpolated from 10 scales to within 0.98-1.01 of the jackknife at every scale (plain
    interpolation from 8 and 12 scales: 0.82-1.13 and 0.90-1.06; mixtures and cosine
    embeddings at n = 2,000).

    >>> f = lambda g: np.outer([1.0, -1.0], g**2)  # two samples, influences ±θ²
    >>> _on_subgrid(f, np.array([1.0, 2.0, 4.0]), points=2)[0].tolist()  # linear in log θ
    [1.0, 8.5, 16.0]
    >>> _on_subgrid(f, np.array([1.0, 2.0, 4.0]), 2, shape=np.array([1.0, 4.0, 16.0]))[0].tolist()
    [1.0, 4.0, 16.0]
    """
    grid = np.asarray(grid, dtype=np.float64)
    if grid.size <= points:
        return fn(grid)
    u = np.log(grid)
    steps = np.linspace(u[0], u[-1], points)
    picks = np.unique(np.abs(u[:, None] - steps[None, :]).argmin(axis=0))
    sub = fn(grid[picks])
    if shape is not None:
        shape = np.asarray(shape, dtype=np.float64)
        if not (np.all(np.isfinite(shape)) and np.all(shape > 0)):
            shape = None  # not a variance shape here (a point at Mag = 1 or n): plain
    if shape is None:
        return np.stack([np.interp(u, u[picks], row) for row in sub])
    scaled = sub / shape[picks]
    return np.stack([np.interp(u, u[picks], row) for row in scaled]) * shape


def _vendi_influence(
    cond: Condition, plan: Plan, item: PreparedSet, qs: np.ndarray, _values: Mapping
) -> dict:
    from ..families import (
        dual_eigen_shares,
        kernel_eigen_shares,
        vendi_from_spectrum,
        vendi_log_influence,
        vendi_without_groups,
    )

    where = f"profiles (vendi, set {item.label!r})"
    K = X = None
    if cond.kernel == "cosine similarity":  # exact at any n: the d × d dual form
        X = item.embeddings
        if not isinstance(X, np.ndarray) or item.weights is not None or item.n < 3:
            return {}  # a dask or device array: its engine gives eigenvalues only
        if X.shape[1] < X.shape[0]:
            lam, shares = dual_eigen_shares(X)
        else:
            K, X = X @ X.T, None
            lam, shares = kernel_eigen_shares(K, where)
    elif not _influence_allowed(plan, item, "vendi"):
        return {}
    else:
        K = cond.similarity(item, plan.bandwidth)
        lam, shares = kernel_eigen_shares(K, where)
    values = vendi_from_spectrum(lam / lam.sum(), qs)
    h = values * vendi_log_influence(lam, shares, qs)
    groups = np.array_split(
        np.random.default_rng([cond.seed, item.n]).permutation(item.n), _jackknife_groups(item.n)
    )
    without = vendi_without_groups(groups, qs, K=K, X=X)
    return {"vendi": inflated_to_jackknife(h, without)}


def _jackknife_groups(n: int) -> int:
    """Groups of Vendi's grouped jackknife: 20 (10 above n = 1000, where each costs an
    eigendecomposition of the kernel), never more than n."""
    return min(n, 20 if n <= 1000 else 10)


def inflated_to_jackknife(h: np.ndarray, without: np.ndarray) -> np.ndarray:
    """Influences ``h`` (n × grid) scaled up, point by point, to the grouped jackknife's
    variance of the values ``without`` (groups × grid) where that is larger: the delta
    method keeps its correlations across the grid, the jackknife corrects its level.

    >>> h = np.array([[1.0], [-1.0]])  # delta-method variance 2 / 4 = 0.5
    >>> inflated_to_jackknife(h, np.array([[0.0], [2.0]])).ravel().tolist()  # jackknife: 1
    [1.4142135623730951, -1.4142135623730951]
    """
    n, g = h.shape[0], without.shape[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        centred = h - h.mean(axis=0)  # NaN columns (q = 0) stay NaN, factor 1
        delta = np.sum(centred**2, axis=0) / n**2
        spread = without - without.mean(axis=0)
        jack = (g - 1) / g * np.sum(spread**2, axis=0)
        factor = np.sqrt(np.where(delta > 0, jack / delta, 1.0))
    factor = np.where(np.isfinite(factor), np.maximum(factor, 1.0), 1.0)
    return h * factor


#: Magnitude's exact jackknife on its large-n method: up to this many samples per set (an
#: n³/3-flop Cholesky factor and triangular inverse per scale, in float32 where accurate
#: enough: about 4 s a scale at 10,000 on two cores, 2.4 GB), at this many scales.
MAGNITUDE_JACKKNIFE_MAX_N = 10_000
MAGNITUDE_LARGE_INFLUENCE_POINTS = 10
#: Above this many samples, where each scale costs seconds, the jackknife runs on
#: ``MAGNITUDE_FEWER_INFLUENCE_POINTS`` scales. Interpolated in proportion to the variance
#: shape, the standard errors from 7 scales stayed within 0.985-1.019 of the jackknife at
#: every scale of the default grid (from 10: 0.992-1.010; from 6: 0.976-1.030, and 1.032
#: on tests/test_findings.py's set), on four kinds of data at n = 1,500 (clustered 768-d,
#: a 32-d mixture, cosine, Gaussian 16-d).
MAGNITUDE_FEWER_INFLUENCE_N = 5_000
MAGNITUDE_FEWER_INFLUENCE_POINTS = 7
_MAGNITUDE_JACKKNIFE = LargeInfluence(
    MAGNITUDE_JACKKNIFE_MAX_N,
    MAGNITUDE_LARGE_INFLUENCE_POINTS,
    fewer_above=(MAGNITUDE_FEWER_INFLUENCE_N, MAGNITUDE_FEWER_INFLUENCE_POINTS),
)


def _magnitude_influence(
    cond: Condition, plan: Plan, item: PreparedSet, ts: np.ndarray, values: Mapping
) -> dict:
    """The exact jackknife (``magnitude_jackknife``) on a subgrid, interpolated between its
    points in proportion to the variance shape ``(Mag - 1)(n - Mag)/n`` where the values
    are known (module :func:`_on_subgrid`): then on ``MAGNITUDE_LARGE_INFLUENCE_POINTS``
    scales, ``MAGNITUDE_FEWER_INFLUENCE_POINTS`` above ``MAGNITUDE_FEWER_INFLUENCE_N``
    samples (standard errors within 3% of the jackknife at every scale, and within 1e-3 of
    their spread in float32 where that is accurate enough, tests/test_findings.py), else on
    ``INFLUENCE_POINTS`` (the large-n method always knows its values).

    On the large-n method it runs up to ``MAGNITUDE_JACKKNIFE_MAX_N`` samples, on distances
    formed for it alone (the set's cache is left as it was).
    """
    from ..core import available_memory_bytes
    from ..engines import distance_matrix
    from ..families import magnitude_jackknife

    n = item.n
    if item.weights is not None or n < 3:
        return {}
    mag = values.get("magnitude")
    shape = None if mag is None else (np.asarray(mag, float) - 1.0) * (n - np.asarray(mag)) / n
    # At 2 x 2,000 (384-d cosine) 24 float64 scales took 6.7 s of the default's 23 s of
    # uncertainty; these 10, mostly float32, take a third of that.
    points = INFLUENCE_POINTS if shape is None else _MAGNITUDE_JACKKNIFE.points_at(n)
    precision, D = "auto", None
    if plan.large("magnitude"):
        if n > MAGNITUDE_JACKKNIFE_MAX_N or 24.0 * n * n > 0.5 * available_memory_bytes():
            return {}  # float64 D, its float32 copy and work matrix, a float64 Z_t at worst
        if item.has_distance_matrix:
            D = item.D
        elif isinstance(item.embeddings, np.ndarray):
            D = distance_matrix(item.embeddings, item.distance)
        else:
            return {}  # a dask or device array: its engine gives the large-n values only
        points = _MAGNITUDE_JACKKNIFE.points_at(n)
    D = item.D if D is None else D
    show = None if n > 4000 else False

    def jackknife(sub: np.ndarray) -> np.ndarray:
        return magnitude_jackknife(D, sub, precision=precision, show=show)

    return {"magnitude": _on_subgrid(jackknife, ts, points, shape)}


def _energy_influence(
    cond: Condition, plan: Plan, item: PreparedSet, ss: np.ndarray, _values: Mapping
) -> dict:
    from ..families import energy_influence

    if not _influence_allowed(plan, item, "energy"):
        return {}
    return {"energy": _on_subgrid(lambda sub: energy_influence(item.D, sub), ss)}


#: The largest n that method="auto" keeps exact for the average distance (one streamed pass;
#: the limit keeps its influences, n per set, and their multiplier draws small).
AVERAGE_DISTANCE_EXACT_MAX_N = 4000


def _average_distance_influence(
    cond: Condition, plan: Plan, item: PreparedSet, _grid: np.ndarray, _values: Mapping
) -> dict:
    from ..families import average_distance_influence

    n = item.n
    if item.weights is not None or n < 3:
        return {}
    if item.distance == "cosine" and not item.has_distance_matrix:  # O(n d) at any n
        if not isinstance(item.embeddings, np.ndarray):
            return {}  # a dask or device array
        X = item.embeddings  # unit rows: d_ij = 1 - x_i . x_j
        rows = 1.0 - (X @ X.sum(axis=0) - 1.0) / (n - 1)
    elif plan.large("average_distance"):
        return {}
    elif item.collapsed is not None and n > AVERAGE_DISTANCE_EXACT_MAX_N:
        # Exact only because its duplicates collapse: the multiplier draws would be
        # repeats × n normals (as for the large-n method, no influence).
        return {}
    elif item.collapsed is not None:  # row a's sum over the distinct rows b, m_b times each
        counts = item.collapsed[1].astype(np.float64)
        rows = (item.distinct_D @ counts / (n - 1))[item.distinct_of_rows()]
    else:
        rows = item.D.sum(axis=1) / (n - 1)
    return {"average_distance": average_distance_influence(rows)[:, None]}


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "vendi",
            "q",
            "log",
            _q_domain,
            _vendi,
            Shown("Vendi score", "q", "order q", landmarks=(0.0, 1.0, 2.0, np.inf)),
            cost=Cost(
                auto_exact_max_n=4000,  # eigenvalues of n × n: 2.4 s at 2000, 161 s at 10,000
                exact_copies=2,
                dual_kernel=True,
                # vendi_large holds K in float32 when it fits, and in float64 in its place
                # for the float64 rerun of its probes when that fits
                large_solver_bytes=(8.0, 4.0),
                # its column blocks: the float64 rerun of its probes beside a float64 K
                # or with none held; the float32 pilot beside a float32 K (a float64
                # rerun from tiles releases that K first)
                large_solver_bytes_per_point=(
                    column_bytes_per_point("rerun"),
                    column_bytes_per_point("pilot"),
                    column_bytes_per_point("rerun"),
                ),
            ),
            allow_inf=True,
            uses_kernel=True,
            influence=_vendi_influence,
            subsample_when_large=True,
            evaluator=_vendi_evaluator,
            large_evaluator=_vendi_large_evaluator,
            nonincreasing=True,  # 1 / a power mean of order q - 1 of the eigenvalues
        ),
        Family(  # Leinster–Cobbold: its module is families/_similarity_diversity.py
            "similarity_diversity",
            "order",  # its own dimension, so it keeps its own grid and domains= entry
            "log",
            _q_domain,  # the same orders as Vendi's
            _similarity_diversity,
            Shown(
                "similarity-sensitive diversity (Leinster–Cobbold)",
                "q",
                "order q",
                landmarks=(0.0, 1.0, 2.0, np.inf),
            ),
            cost=Cost(exact_copies=2),  # Z and Z clipped (no large-n method: exact at any n)
            allow_inf=True,
            uses_kernel=True,
            default=False,  # opt in with families=[..., "similarity_diversity"]
            nonincreasing=True,  # 1 / a power mean of order q - 1 of (Z p)_i
        ),
        Family(
            "magnitude",
            "t",
            "log",
            _t_domain,
            _magnitude,
            Shown("magnitude", "t", "scale t"),
            cost=Cost(
                auto_exact_max_n=2000,  # a Cholesky per scale: 9 s at n = 1000, grows as n³
                exact_copies=2.5,  # Z_t in float64 and float32
                # magnitude_large holds the float64 distances and Z_t in float32 when both
                # fit, else Z_t alone, else nothing (it recomputes tiles)
                large_solver_bytes=(12.0, 4.0),
                # the preconditioner's 200 + 256 columns and its factors, the CG blocks:
                # 0.7 GiB beside the held Z_t at n = 50,000 (resident memory, measured)
                large_solver_bytes_per_point=16_000,
            ),
            low_open=True,
            extendable=True,
            influence=_magnitude_influence,
            large_influence=_MAGNITUDE_JACKKNIFE,
            large_evaluator=large.magnitude_evaluator,
        ),
        Family(
            "circles",
            "tau",
            "linear",
            _tau_domain,
            _circles,
            Shown("number of circles", "τ", "threshold τ", integer=True),
            rule=VerdictPolicy(step=True, margin_unit="n"),
            cost=Cost(
                auto_exact_max_n=4000,  # O(n²) per threshold in Python loops
                exact_copies=2,  # adjacency, linkage and DSATUR
                large_solver_bytes=8.0,  # circles_large: 16 bytes per pair within the top τ
                large_solver_fills_limit=True,  # pairs up to the limit; looser above it
                collapses_duplicates=True,
            ),
            bounds=("circles", "circles_upper"),
            nonincreasing=True,  # circles pairwise > τ apart are so for every smaller τ
            half_samples_when_large=CIRCLES_LARGE_HALF_SAMPLE_MAX_N,
        ),
        Family(
            "energy",
            "s",
            "log",
            _s_domain,
            _energy,
            Shown("energy", "s", "exponent s"),
            cost=Cost(auto_exact_max_n=4000, streams_exact=True),  # above: certified bounds
            low_open=True,
            extendable=True,
            slices_distances=True,
            influence=_energy_influence,
            influence_from_subset=True,
        ),
        Family(
            "average_distance",
            None,
            "none",
            None,
            _average_distance,
            Shown("average pairwise distance"),
            cost=Cost(
                auto_exact_max_n=AVERAGE_DISTANCE_EXACT_MAX_N,
                streams_exact=True,
                closed_form_distances=("cosine",),  # |sum of unit rows|^2: O(n d)
                collapses_duplicates=True,
            ),
            influence=_average_distance_influence,
            influence_from_subset=True,
        ),
        Family(
            "richness",
            None,
            "none",
            None,
            _richness,
            Shown("richness (distinct items)", integer=True),
            rule=VerdictPolicy(margin_unit="n"),
            # O(n log n) on embeddings: always exact, no n × n matrix
            cost=Cost(auto_exact_max_n=10**12, exact_copies=None, collapses_duplicates=True),
        ),
    )
}
