"""Large-n evaluation of the families: streamed passes, certified bounds, dispatch.

The exact families of one streamed pass (energy with certified bounds, average
distance, Vendi of order 2) are done here in full. Magnitude, Vendi of non-linear
kernels and Circles call the large-n modules when they are installed, through one
small interface (``<family>_large.<family>_large(X, grid, **options)``, see
:func:`_call_large`); without them they fall back on
certified bounds from the same passes:

- magnitude: ``n² / 1ᵀZ_t1 ≤ Mag(t) ≤ #distinct points`` (Leinster's variational
  form with w = 1; Z_t is positive definite for the Euclidean, cosine and Tanimoto
  distances, so Mag is at most the number of distinct points);
- Vendi: ``V_q ≥ V_2`` for q ≤ 2 (nonincreasing in q) and ``√V_2 ≤ V_∞ ≤ V_q ≤ V_2``
  for q ≥ 2 (Rényi entropies: ``H_∞ ≥ H_2 / 2``); V_2 itself is exact;
- Circles: Caro–Wei ``α ≥ Σ 1/(deg_i + 1)`` below, ``α ≤ n − m/Δ`` above.

Every variable says how it was obtained (attribute ``method``: ``"exact"``,
``"certified bounds"`` or ``"estimate ± error"``), and bounds are stored as
``<family>_lower`` / ``<family>_upper`` (Circles keeps ``circles`` as its lower bound
and ``circles_upper``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from ..engines._histogram import LogDistanceHistogram
from ..engines._streaming import ThresholdCounts
from ..engines._torch_engine import namespace

if TYPE_CHECKING:
    from ._condition import Condition, PreparedSet
    from ._plan import Plan

EXACT, BOUNDS, ESTIMATE = "exact", "certified bounds", "estimate ± error"
#: vendi_large's error bar, measured against eigvalsh (benchmarks/large_n_methods.py).
COVERAGE_NOTE = (
    "measured at n = 2000 over 20 datasets: the error bar covered the exact value in 80 of "
    "80 cases at q = 0.25-1.5, errors at most 0.14% for q <= 1 and 4.3e-8 for q >= 2"
)
#: How a family's value was obtained, weakest last: merging sets keeps the weakest.
STRENGTH = {EXACT: 0, BOUNDS: 1, ESTIMATE: 2}


@dataclass
class Bracket:
    """What a large-n module returns for one set on one grid.

    ``value`` is the reported curve; ``lower``/``upper`` bracket the true value with
    certainty when ``method`` is :data:`BOUNDS` (or bound an estimate's error band when
    :data:`ESTIMATE`, with ``error`` its stated size); ``note`` says how, briefly.
    """

    value: np.ndarray
    method: str
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    error: np.ndarray | None = None
    note: str = ""
    extra: dict = field(default_factory=dict)
    #: How ``lower`` and ``upper`` were obtained when it differs from ``method`` (e.g. an
    #: estimated value inside a certified bracket); None: as ``method``.
    bound_methods: tuple[str, str] | None = None
    #: The large-n module's ``kind`` per grid point (``"skipped"``: time budget spent).
    kind: list[str] | None = None


def large_module(family: str) -> ModuleType | None:
    """The large-n module of a family (``magnitude_large`` ...), or None when absent."""
    try:
        return importlib.import_module(f"..large._{family}_large", __package__)
    except ImportError:
        return None


def _result(family: str, b: Bracket, lower_name: str | None = None) -> dict:
    attrs = {"method": b.method}
    if b.note:
        attrs["method_note"] = b.note
    out = {family: (np.asarray(b.value, dtype=np.float64), {**attrs, **b.extra})}
    if b.lower is not None and b.upper is not None:
        lo_how, hi_how = b.bound_methods or (b.method, b.method)
        out[lower_name or f"{family}_lower"] = (
            np.asarray(b.lower), {**attrs, "method": lo_how, "role": "lower"})  # fmt: skip
        out[f"{family}_upper"] = (np.asarray(b.upper), {**attrs, "method": hi_how, "role": "upper"})
    if b.error is not None:
        out[f"{family}_error"] = (np.asarray(b.error), {**attrs, "role": "error"})
    return out


# --- the streamed passes, cached per set ---------------------------------------------------


def shipped(item: PreparedSet) -> object:
    """The set's embeddings as the pass functions take them: on the dask workers (sent once
    per set and kept for every pass) when the set came as a dask collection, on the torch
    device (copied once per set) when the set runs on one."""
    if not item.distributed and item.device is None:
        return item.embeddings

    def send() -> object:
        if item.device is not None:
            from ..engines._torch_engine import DeviceSet

            assert item.embeddings is not None  # only embedding sets get a device
            return DeviceSet(item.embeddings, item.distance, item.device)
        from ..engines._dask_engine import ship

        return ship(item.embeddings)

    return item.derived(("shipped",), send)


def _engine(item: PreparedSet):
    """The module running the streamed passes: :mod:`.torch_engine` (a torch device),
    :mod:`.dask_engine` (dask input) or :mod:`.streaming`."""
    if item.device is not None:
        from ..engines import _torch_engine as torch_engine

        return torch_engine
    if item.distributed:
        from ..engines import _dask_engine as dask_engine

        return dask_engine
    from ..engines import _streaming as streaming

    return streaming


def histogram(item: PreparedSet) -> LogDistanceHistogram:
    """The set's log-distance histogram from the blocked streamed pass (float64 GEMM)."""
    return item.derived(
        ("streamed histogram",),
        lambda: _engine(item).distance_pass(
            shipped(item), item.distance, desc=f"set {item.label!r}: distances"
        ),
    )


def pooled_histogram(cond: Condition) -> LogDistanceHistogram:
    hists = [histogram(item) for item in cond.sets]
    return hists[0].merged(hists[1:])


def counts(
    cond: Condition, plan: Plan, item: PreparedSet, taus: np.ndarray | None, kernel: bool
) -> ThresholdCounts:
    """Threshold counts and degrees at ``taus`` and Σ K_ij² (second pass, kept per set).

    Kept under a key of everything the pass depends on: the thresholds, whether Σ K² is
    summed, and the kernel with its bandwidth (a plan with another bandwidth recomputes).
    """
    fn = None
    kernel_key: tuple = ()
    if kernel:
        if cond.kernel == "gaussian":
            assert plan.bandwidth is not None  # the plan of a Gaussian-kernel call has one
            scale = -0.5 / plan.bandwidth**2
            kernel_key = ("gaussian", plan.bandwidth)

            def fn(D):  # numpy blocks, or tensors on a torch device
                K = D * D
                K *= scale
                return namespace(D).exp(K, out=K)
        else:  # Tanimoto similarity
            kernel_key = ("tanimoto",)

            def fn(D):
                return 1.0 - D

    key = ("counts", None if taus is None else np.asarray(taus).tobytes(), kernel_key)
    return item.derived(
        key,
        lambda: _engine(item).threshold_pass(
            shipped(item), item.distance, taus, fn, desc=f"set {item.label!r}: thresholds"
        ),
    )


def second_pass(
    cond: Condition, plan: Plan, item: PreparedSet, taus: np.ndarray | None
) -> ThresholdCounts:
    """The threshold pass serving both Circles (at ``taus``) and Vendi (Σ K²) in one go.

    When both families run their large-n method, Vendi (evaluated first) already uses the
    Circles grid the condition holds, so that the pairs are streamed once, not twice.
    """
    wants_k2 = plan.large("vendi") and cond.kernel in ("gaussian", "Tanimoto similarity")
    if taus is None and plan.large("circles") and "circles" in plan.grids:
        taus = plan.grids["circles"]
    taus = None if taus is None or not plan.large("circles") else np.sort(taus)
    return counts(cond, plan, item, taus, kernel=wants_k2)


def median_distance(cond: Condition) -> float:
    """Median of the pooled positive distances, from the histograms (within one bin)."""
    h = pooled_histogram(cond)
    if h.n_pairs == h.n_zero:
        return 1.0
    p = (h.n_zero + 0.5 * (h.n_pairs - h.n_zero)) / h.n_pairs
    return float(h.quantile(np.array([p]))[0])


# --- families done in full from the passes -------------------------------------------------


def energy(cond: Condition, plan: Plan, item: PreparedSet, ss: np.ndarray) -> dict:
    from ..families._energy import energy_from_histogram

    h = histogram(item)
    value = energy_from_histogram(h, ss, f"energy profile of set {item.label!r}")
    if h.n_zero:
        lower = upper = value
    else:
        lo, hi = h.mean_power_bounds(ss)
        lower, upper = -hi, -lo
    note = "log-distance histogram: Jensen and chord bounds per bin, value by bin moments"
    return _result("energy", Bracket(value, BOUNDS, lower, upper, note=note))


def average_distance(cond: Condition, plan: Plan, item: PreparedSet) -> dict:
    value = np.asarray(histogram(item).mean_distance())
    return {"average_distance": (value, {"method": EXACT})}


# --- families that dispatch to the large-n modules ------------------------------------------


def _call_large(
    cond: Condition, plan: Plan, family: str, item: PreparedSet, grid: np.ndarray, **kw
):
    """Run ``<family>_large.<family>_large(X, grid, ...)`` when that module is installed.

    The interface (met by ``magnitude_large``): the function takes the embeddings, the grid
    and keyword options, and returns an object with ``value``, ``lower``, ``upper`` arrays
    in grid order and ``kind`` per point (``"certified"`` bounds or an ``"estimate"``), and
    may say where its products ran (``engine``). A dask set is passed on the workers
    (``shipped``) to the functions that take it.
    Options the function does not take are not passed. Returns None without the module.
    """
    import inspect

    mod = large_module(family)
    fn = getattr(mod, f"{family}_large", None)
    if fn is None or item.embeddings is None:  # the iterative modules work from embeddings
        return None
    options = {
        "distance": item.distance,
        "rtol": plan.accuracy,
        "accuracy": plan.accuracy,
        "time_budget": plan.time_budget,
        "memory_limit": plan.memory_limit,
        "seed": cond.seed,
        "device": item.device,
        # A dask set: the solvers' products run as tasks on the workers holding the set.
        "shipped": shipped(item) if item.distributed and item.device is None else None,
        **kw,
    }
    accepted = inspect.signature(fn).parameters
    options = {k: v for k, v in options.items() if k in accepted and v is not None}
    res = fn(item.embeddings, grid, **options)
    # Circles' bounds carry no separate value: the reported curve is the witnessed lower one.
    value = getattr(res, "value", res.lower)
    kinds = list(getattr(res, "kind", ["certified"] * len(np.atleast_1d(grid))))
    # "skipped" (time budget spent): the caller fills in certified bounds of its own.
    # "bounds": vendi_large's bracket alone (time budget spent), certified like "certified".
    n_estimated = sum(k not in ("certified", "exact", "skipped", "bounds") for k in kinds)
    method = BOUNDS if n_estimated == 0 else ESTIMATE
    error = getattr(res, "error", None)
    if family == "vendi":
        # vendi_large's bracket is certified at every order; its estimate's error bar (3
        # probe standard errors plus the Gauss/Gauss-Radau gaps) is claimed because it was
        # measured to hold: COVERAGE_NOTE (benchmarks/large_n_methods.py, vendi_coverage;
        # the 4 misses are one dataset's probe draw, 3.2 standard errors off at every
        # order; the earlier, pinching-biased estimator covered 52.5%).
        bound_methods = (BOUNDS, BOUNDS)
        if method == ESTIMATE:
            note = (
                "vendi_large: deflated stochastic Lanczos quadrature, value ± vendi_error "
                f"(an estimate; {COVERAGE_NOTE}); vendi_lower/vendi_upper: certified bracket "
                "(Ritz values, interlacing and Weyl)"
            )
        else:
            note = (
                "vendi_large: certified bracket (vendi_lower/vendi_upper: Ritz values, "
                "interlacing and Weyl); "
                + ("the time budget was spent before the Lanczos estimate: the value is the "
                   "bracket's midpoint, vendi_error its half-width"
                   if "bounds" in kinds else "exact or certified to 1e-6 at every order")
            )  # fmt: skip
    elif family == "magnitude":
        # The lower bound 2·1ᵀw − wᵀZw is certified at every scale; the upper bound only
        # where Gershgorin proves a smallest eigenvalue, else it is estimated.
        bound_methods = (BOUNDS, method)
        note = (
            "magnitude_large: preconditioned CG; magnitude_lower certified (variational form) at "
            "every scale, magnitude_upper certified where Gershgorin bounds the smallest "
            "eigenvalue and an estimate elsewhere"
            + ("" if n_estimated == 0 else " (method: 'estimate ± error')")
        )
    else:
        bound_methods = None
        note = f"{family}_large" + (
            "" if method == BOUNDS else " (upper bound estimated where it could not be certified)"
        )
    if getattr(res, "engine", "numpy") == "dask":
        note += "; its products K V ran as dask tasks (upper-triangle row blocks on the workers)"
    return Bracket(
        value, method, res.lower, res.upper, error=error, note=note,
        bound_methods=bound_methods, kind=kinds,
    )  # fmt: skip


def vendi(cond: Condition, plan: Plan, item: PreparedSet, qs: np.ndarray) -> dict:
    if cond.kernel == "gaussian" and item.distance == "euclidean":  # vendi_large's kernel
        b = _call_large(cond, plan, "vendi", item, qs, bandwidth=plan.bandwidth)
        if b is not None:
            return _result("vendi", b)
    # Fallback: exact V_2 from Σ K², and what it certifies about every other order.
    n = item.n
    v2 = n * n / (n + 2.0 * second_pass(cond, plan, item, None).sum_k2)
    lower = np.where(qs <= 2, v2, np.sqrt(v2))
    upper = np.where(qs < 2, float(n), v2)
    lower[qs == 2] = upper[qs == 2] = v2
    note = "exact at q = 2 from sum of K_ij^2 (one streamed pass); elsewhere bounds from V_2"
    return _result("vendi", Bracket(lower.copy(), BOUNDS, lower, upper, note=note))


def _skipped(b: Bracket) -> np.ndarray:
    """Grid points a large-n module did not reach within its time budget (kind "skipped"):
    the caller fills them with the certified bounds of the streamed passes."""
    return np.array([k == "skipped" for k in (b.kind or [])], dtype=bool)


def magnitude(cond: Condition, plan: Plan, item: PreparedSet, ts: np.ndarray) -> dict:
    lower = magnitude_lower_bound(histogram(item), item.n, ts)
    upper = np.full(ts.shape, float(item.richness))
    lower = np.minimum(lower, upper)
    if item.distance in ("euclidean", "cosine"):
        b = _call_large(cond, plan, "magnitude", item, ts)
        if b is not None:
            skipped = _skipped(b)
            if skipped.any():  # time budget spent: the streamed-pass bounds at those scales
                assert b.upper is not None
                for arr, fill in ((b.value, lower), (b.lower, lower), (b.upper, upper)):
                    arr[skipped] = fill[skipped]
                b.note += (
                    f"; time budget spent after {int((~skipped).sum())} of {len(ts)} scales: "
                    "the others carry the streamed-pass bounds (n^2 / 1'Z_t 1, distinct points)"
                )
            return _result("magnitude", b)
    note = "n^2 / 1'Z_t 1 (Leinster, w = 1) below, the number of distinct points above"
    return _result("magnitude", Bracket(lower.copy(), BOUNDS, lower, upper, note=note))


def magnitude_lower_bound(h, n: int, ts: np.ndarray) -> np.ndarray:
    """``n² / (n + 2 Σ_{i<j} exp(−t d_ij))`` with each bin's pairs at its lower edge."""
    from ..engines._histogram import OCTAVES, BINS_PER_OCTAVE

    occ = np.flatnonzero(h.counts)
    edge = np.exp((occ - OCTAVES * BINS_PER_OCTAVE) / h._scale() + (h.anchor or 0.0))
    edge[occ == 0] = 0.0
    total = h.counts[occ] @ np.exp(-np.outer(edge, ts)) + h.n_zero
    return n * n / (n + 2.0 * total)


def circles(cond: Condition, plan: Plan, item: PreparedSet, taus: np.ndarray) -> dict:
    # circles_large decides edges from float32 GEMM distances with a Euclidean error bound:
    # other distances (Tanimoto) take the bounds from the threshold pass below.
    b = None
    if item.distance in ("euclidean", "cosine"):
        b = _call_large(cond, plan, "circles", item, taus)
    if b is not None:
        assert b.lower is not None and b.upper is not None
        lower, upper = np.asarray(b.lower, dtype=np.int64), np.asarray(b.upper, dtype=np.int64)
        skipped = _skipped(b)
        if skipped.any():  # time budget spent: also the threshold-pass bounds there
            lo_s, hi_s = threshold_bounds(cond, plan, item, taus)
            lower[skipped] = np.maximum(lower, lo_s)[skipped]
            upper[skipped] = np.minimum(upper, hi_s)[skipped]
            b.note += (
                f"; time budget spent: {int(skipped.sum())} of {len(taus)} thresholds carry "
                "the better of the carried bounds and the threshold-pass bounds (Caro-Wei "
                "below, n - edges/max degree above)"
            )
        b.value = b.lower = lower
        b.upper = upper
        out = _result("circles", b, lower_name="circles")
        out["circles_upper"] = (upper, out["circles_upper"][1])
        out["circles"] = (lower, out["circles"][1])
        return out
    lower, upper = threshold_bounds(cond, plan, item, taus)
    note = "Caro-Wei bound sum 1/(deg+1) below, n - edges/max degree above (one streamed pass)"
    attrs = {"method": BOUNDS, "method_note": note, "exact": int(np.array_equal(lower, upper))}
    return {"circles": (lower, attrs), "circles_upper": (upper, attrs)}


def threshold_bounds(
    cond: Condition, plan: Plan, item: PreparedSet, taus: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Certified Circles bounds at ``taus`` (in their order) from the streamed threshold
    pass: Caro–Wei ``Σ 1/(deg_i + 1)`` below, ``n − edges/max degree`` above."""
    order = np.argsort(taus, kind="stable")
    c = second_pass(cond, plan, item, taus[order])
    n = item.n
    deg = c.degrees
    caro_wei = np.ceil((1.0 / (deg + 1.0)).sum(axis=0) - 1e-9).astype(np.int64)
    edges = c.pairs.astype(np.float64)
    top = deg.max(axis=0).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = np.where(top > 0, np.floor(n - edges / np.where(top > 0, top, 1) + 1e-9), n)
    lower = np.maximum.accumulate(caro_wei[::-1])[::-1]  # nonincreasing in tau
    upper = np.minimum.accumulate(upper.astype(np.int64))
    out_lo, out_hi = np.empty_like(lower), np.empty_like(upper)
    out_lo[order], out_hi[order] = lower, upper
    return out_lo, out_hi
