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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..core import BOUNDS, ESTIMATE, EXACT
from ..engines import (
    DEFAULT_MEMORY,
    Engine,
    LogDistanceHistogram,
    ThresholdCounts,
    engine_for,
    held_bytes,
    namespace,
)
from ..large import SOLVERS, open_solver, run_solver

if TYPE_CHECKING:
    from ._condition import Condition, PreparedSet
    from ._plan import Plan


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


def engine(item: PreparedSet) -> Engine:
    """The engine that runs the set's passes and solver products (chosen in one place,
    :func:`..engines.engine_for`): a torch device, dask workers, or numpy in memory."""
    return engine_for(distributed=item.distributed, device=item.device)


def prepared_input(item: PreparedSet) -> object:
    """The set's embeddings as its engine takes them, made ready once per set: on the dask
    workers (sent once and kept for every pass), on the torch device (copied once), or the
    embeddings themselves in memory."""
    eng, X = engine(item), item.embeddings
    assert X is not None  # only embedding sets run the streamed passes and the solvers
    return item.derived(("engine input", eng), lambda: eng.prepare(X, item.distance))


def histogram(item: PreparedSet) -> LogDistanceHistogram:
    """The set's log-distance histogram from the blocked streamed pass (float64 GEMM); a
    set of exact duplicates takes it from its distinct rows (``PreparedSet.collapsed``)."""
    if item.collapsed is not None:
        return item.histogram
    return item.derived(
        ("streamed histogram",),
        lambda: engine(item).distance_pass(
            prepared_input(item), item.distance, desc=f"set {item.label!r}: distances"
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
        lambda: engine(item).threshold_pass(
            prepared_input(item), item.distance, taus, fn, desc=f"set {item.label!r}: thresholds"
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
    from ..families import energy_from_histogram

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


def _solver_arguments(
    cond: Condition, plan: Plan, family: str, item: PreparedSet, **kw
) -> dict | None:
    """The options of the family's large-n solver (the table :data:`..large.SOLVERS`) for
    one set, or None when the solver does not apply (no embeddings, another distance or
    kernel): the caller then uses the certified bounds of the streamed passes. The call's
    settings go to the solver where it declares them; ``kw`` (e.g. ``bandwidth``) is
    passed as it is, so an option the solver does not declare is an error, not a silent
    default."""
    spec = SOLVERS[family]
    if item.embeddings is None or not spec.applies(item.distance, cond.kernel):
        return None
    memory_limit = plan.memory_limit
    if plan.probe_of_n is not None and plan.probe_of_n > item.n:
        # A timing probe holds in memory what the set it stands for would: the solvers'
        # n × n data (K, Z_t, the pairs within a threshold) grow as n².
        full = DEFAULT_MEMORY if memory_limit is None else memory_limit
        memory_limit = full * (item.n / plan.probe_of_n) ** 2
    settings = {
        "distance": item.distance,
        "rtol": plan.accuracy,
        "time_budget": plan.time_budget,
        "memory_limit": memory_limit,
        "seed": cond.seed,
        "stop": plan.stop,
        "precision_n": plan.probe_of_n,
    }
    return {
        **{k: v for k, v in settings.items() if k in spec.options},
        **spec.engine_options(engine(item), prepared_input(item)),
        **kw,
    }


def _call_large(
    cond: Condition, plan: Plan, family: str, item: PreparedSet, grid: np.ndarray,
    solve: Callable | None = None, **kw,
) -> Bracket | None:  # fmt: skip
    """Run the family's large-n solver on one set (see :func:`_solver_arguments`), or the
    ``solve`` of a session opened for it (:func:`open_session`); None where none applies."""
    spec = SOLVERS[family]
    if solve is not None:
        res = solve(grid)
    else:
        options = _solver_arguments(cond, plan, family, item, **kw)
        if options is None:
            return None
        res = run_solver(family, item.embeddings, grid, **options)
    # Circles' bounds carry no separate value: the reported curve is the witnessed lower one.
    value = getattr(res, "value", res.lower)
    kinds = list(getattr(res, "kind", ["certified"] * len(np.atleast_1d(grid))))
    # "skipped" (time budget spent): the caller fills in certified bounds of its own.
    # "bounds": vendi_large's bracket alone (time budget spent), certified like "certified".
    n_estimated = sum(k not in ("certified", "exact", "skipped", "bounds") for k in kinds)
    method, note, bound_methods = spec.provenance(BOUNDS if n_estimated == 0 else ESTIMATE, kinds)
    if getattr(res, "engine", "numpy") == "dask":
        note += "; its products K V ran as dask tasks (upper-triangle row blocks on the workers)"
    return Bracket(
        value, method, res.lower, res.upper, error=getattr(res, "error", None), note=note,
        bound_methods=bound_methods, kind=kinds,
    )  # fmt: skip


def open_session(
    cond: Condition, plan: Plan, family: str, item: PreparedSet, **kw
) -> Callable[[np.ndarray], object] | None:
    """The ``solve`` of the family's solver session on one set (its shared work done once,
    for the rounds of an adaptive grid), or None where the solver does not apply."""
    options = _solver_arguments(cond, plan, family, item, **kw)
    if options is None:
        return None
    return open_solver(family, item.embeddings, **options).solve


def vendi(
    cond: Condition, plan: Plan, item: PreparedSet, qs: np.ndarray, solve: Callable | None = None
) -> dict:
    """Vendi on the large-n method at orders ``qs`` (``solve``: a session's, see
    :func:`vendi_evaluator`)."""
    if cond.kernel == "gaussian" and item.distance == "euclidean":  # vendi_large's kernel
        b = _call_large(cond, plan, "vendi", item, qs, solve, bandwidth=plan.bandwidth)
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


def vendi_evaluator(
    cond: Condition, plan: Plan, item: PreparedSet
) -> Callable[[np.ndarray], dict] | None:
    """Vendi at any orders from one vendi_large session (its spectral work done once), or
    None where vendi_large does not apply to the set."""
    if not (cond.kernel == "gaussian" and item.distance == "euclidean"):
        return None
    solve = open_session(cond, plan, "vendi", item, bandwidth=plan.bandwidth)
    if solve is None:
        return None
    return lambda qs: vendi(cond, plan, item, qs, solve)


def magnitude_evaluator(
    cond: Condition, plan: Plan, item: PreparedSet
) -> Callable[[np.ndarray], dict] | None:
    """Magnitude at any scales from one magnitude_large session (warm starts from every
    scale solved so far, its preconditioner, and its float64 distances where every set's
    fit in memory together), or None where magnitude_large does not apply to the set."""
    biggest = max(s.n for s in cond.sets)
    limit = DEFAULT_MEMORY if plan.memory_limit is None else plan.memory_limit
    keep = len(cond.sets) * held_bytes(biggest) <= limit
    solve = open_session(cond, plan, "magnitude", item, keep=keep)
    if solve is None:
        return None
    return lambda ts: magnitude(cond, plan, item, ts, solve)


def _skipped(b: Bracket) -> np.ndarray:
    """Grid points a large-n module did not reach within its time budget (kind "skipped"):
    the caller fills them with the certified bounds of the streamed passes."""
    return np.array([k == "skipped" for k in (b.kind or [])], dtype=bool)


def magnitude(
    cond: Condition, plan: Plan, item: PreparedSet, ts: np.ndarray, solve: Callable | None = None
) -> dict:
    """Magnitude on the large-n method at scales ``ts`` (``solve``: a session's, see
    :func:`magnitude_evaluator`)."""
    lower = magnitude_lower_bound(histogram(item), item.n, ts)
    upper = np.full(ts.shape, float(item.richness))
    lower = np.minimum(lower, upper)
    b = _call_large(cond, plan, "magnitude", item, ts, solve)  # None where no solver applies
    if b is not None:
        skipped = _skipped(b)
        if skipped.any():  # time budget spent: the streamed-pass bounds at those scales
            assert b.lower is not None and b.upper is not None
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
    from ..engines import BINS_PER_OCTAVE, OCTAVES

    occ, counts = h.bins, h.counts_of_bins()
    edge = np.exp((occ - OCTAVES * BINS_PER_OCTAVE) / h._scale() + (h.anchor or 0.0))
    edge[occ == 0] = 0.0
    total = counts @ np.exp(-np.outer(edge, ts)) + h.n_zero
    return n * n / (n + 2.0 * total)


def circles(cond: Condition, plan: Plan, item: PreparedSet, taus: np.ndarray) -> dict:
    # circles_large decides edges from float32 GEMM distances with a Euclidean error bound:
    # other distances (Tanimoto) take the bounds from the threshold pass below.
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
