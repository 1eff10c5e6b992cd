"""Diversity profiles as labelled xarray trees: one node per condition.

``tree["minilm/cosine"]`` holds one variable per family on its own parameter
dimension (``vendi(set, q)``, ``magnitude(set, t)``, ``circles(set, tau)`` with
``circles_upper``, ``energy(set, s)``) plus the scale-free ``average_distance(set)``
and ``richness(set)``. Every set of a condition shares each grid. Attributes are
strings and numbers only, so the tree round-trips through netCDF and zarr.
"""

from __future__ import annotations

import datetime as _dt
import json
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from .._version import __version__
from ..core import (
    check_int,
    check_parameter,
    check_real,
    one_of,
)
from ..engines import median_bandwidth
from ..large import SOLVERS
from . import _adaptive as adaptive
from ._beside import evaluate_beside, families_beside
from ._between import with_interpolation_bounds
from ._condition import Condition
from ._large import engine
from ._passes import check_pass_time, check_solver_time
from ._plan import Plan
from ._registry import FAMILIES, Family
from ._resampling import HALF_SAMPLE_METHOD, LARGE_SUBSAMPLE_METHOD, MULTIPLIER_METHOD

if TYPE_CHECKING:
    import xarray as xr

FUNC = "profiles"

#: Most points of one family's grid (``n_points``, an explicit grid, an extension): 100
#: times the default and more than a curve has pixels across on any display. Each point
#: costs a solve or a pass per set and a column in every replicate array; 10**8 points
#: asked numpy for 135 GiB before anything said why.
MAX_N_POINTS = 10_000


def resolve_families(families) -> list[Family]:
    if families is None:
        return [f for f in FAMILIES.values() if f.default]
    if isinstance(families, str):
        families = [families]
    listing = ", ".join(repr(f) for f in FAMILIES)
    if not isinstance(families, (list, tuple)) or not families:
        raise ValueError(
            f"The 'families' argument of {FUNC} must be None (all families), one family name or "
            f"a non-empty list of them ({listing}). Got {families!r}."
        )
    names = [one_of(f, "families", FUNC, tuple(FAMILIES)) for f in families]
    return [FAMILIES[name] for name in dict.fromkeys(names)]  # repeats once, in given order


def _user_domain(family: Family, value, n_points: int) -> tuple[np.ndarray, str]:
    """A user's domain: an explicit grid, or a (low, high) range filled with n_points.

    A range of zero width, ``(3.0, 3.0)``, is the one point 3.0, as the grid ``[3.0]``
    is: n_points copies of one value would be one point computed n_points times.
    """
    where = f"domains[{family.name!r}]"
    grid, _ = check_parameter(
        value, where, FUNC, low=0.0, low_open=family.low_open, allow_inf=family.allow_inf
    )
    if grid.size > MAX_N_POINTS:
        raise ValueError(
            f"The {where} grid of {FUNC} has {grid.size} points; at most {MAX_N_POINTS} are "
            f"allowed per family. Pass a (low, high) range with n_points <= {MAX_N_POINTS}, "
            f"or a shorter grid."
        )
    if isinstance(value, tuple) and len(value) == 2:
        lo, hi = sorted(grid)
        if lo == hi:
            return np.array([lo]), f"user point {lo:g} (a range of zero width)"
        # np.unique: a range narrower than n_points floats holds repeats (one point each)
        if family.axis == "log" and lo > 0 and np.isfinite(hi):
            grid = np.unique(np.geomspace(lo, hi, n_points))
            return grid, f"user range [{lo:g}, {hi:g}], log-spaced"
        if np.isfinite(hi):
            grid = np.unique(np.linspace(lo, hi, n_points))
            return grid, f"user range [{lo:g}, {hi:g}], evenly spaced"
    return np.unique(grid), "user grid"


@dataclass
class Uncertainty:
    """What :func:`profiles` adds about finite samples (all optional)."""

    n_boot: int | str = "auto"
    ci: float = 0.95
    common_n: int | None = None
    n_subsamples: int = 10
    seed: int = 0
    max_seconds: float | None = 600.0


def condition_grids(
    cond: Condition,
    plan: Plan,
    fams: list[Family],
    domains: Mapping,
    n_points: int | str,
    sessions: Mapping | None = None,
) -> dict:
    """family -> (grid, how it was chosen); every set of the condition shares it.

    With ``n_points="auto"`` a grid to be refined is its coarse pass
    (:data:`._adaptive.COARSE_POINTS`); a family on its large-n method without a solver
    session (``sessions``, see :func:`large_sessions`) gets the fixed
    :data:`._adaptive.LARGE_POINTS`.
    """
    sessions = sessions or {}
    out = {}
    for fam in fams:
        fixed = n_points == "auto" and plan.large(fam.name) and fam.name not in sessions
        size = n_points if isinstance(n_points, int) else (
            adaptive.LARGE_POINTS if fixed else adaptive.COARSE_POINTS
        )  # fmt: skip
        if fam.parameter is None:
            out[fam.name] = (np.empty(0), "")
        elif fam.name in domains:
            out[fam.name] = _user_domain(fam, domains[fam.name], size)
        else:
            assert fam.domain is not None  # every family with a parameter has a domain
            grid, how = fam.domain(cond, plan, size)
            if fixed:
                why = (
                    "a time budget is set (each round would need one)"
                    if plan.time_budget is not None and fam.large_evaluator is not None
                    else "each round would rerun its solver"
                )
                how += f"; fixed {size} points: the large-n method is not refined ({why})"
            out[fam.name] = (grid, how)
    return out


def large_sessions(
    cond: Condition, plan: Plan, fams: list[Family], domains: Mapping, n_points: int | str
) -> dict:
    """family -> one evaluator per set, for the families on their large-n method whose
    grid is refined: those with a ``large_evaluator`` that applies to every set, when no
    time budget is set (a budget bounds one solver call, and each round would be one).
    Opening a session does no solver work; its first evaluation does."""
    if n_points != "auto" or plan.time_budget is not None:
        return {}
    out = {}
    for f in fams:
        if not (plan.large(f.name) and f.large_evaluator is not None and f.parameter is not None):
            continue
        if f.name in domains and not _is_range(domains[f.name]):
            continue
        evals = [f.large_evaluator(cond, plan, item) for item in cond.sets]
        if all(ev is not None for ev in evals):
            out[f.name] = evals
    return out


def adaptive_families(
    plan: Plan,
    fams: list[Family],
    domains: Mapping,
    n_points: int | str,
    sessions: Mapping | None = None,
) -> list[Family]:
    """The families whose grid is refined: with ``n_points="auto"``, those with a parameter
    on their exact method, and those on their large-n method with a solver session
    (``sessions``), unless the user gave their grid point by point."""
    if n_points != "auto":
        return []
    return [
        f
        for f in fams
        if f.parameter is not None
        and (not plan.large(f.name) or f.name in (sessions or {}))
        and not (f.name in domains and not _is_range(domains[f.name]))
    ]


def _is_range(value) -> bool:
    return isinstance(value, tuple) and len(value) == 2


def _estimates(cond: Condition, plan: Plan, fams: list[Family], evaluated: Mapping) -> dict:
    """var -> (values(set, ...), attrs, family) on the full sets; ``evaluated`` holds the
    per-set results of families already evaluated on their grid (the adaptive ones)."""
    out = {}
    for fam in fams:
        per_set = evaluated.get(fam.name) or [
            fam.evaluate(cond, plan, item, plan.grids[fam.name]) for item in cond.sets
        ]
        for var in per_set[0]:
            attrs = {"family": fam.name, "long_name": fam.long_name, "axis_scale": fam.axis}
            attrs.update(adaptive.merge_attrs([attrs] + [r[var][1] for r in per_set]))
            out[var] = (np.stack([np.asarray(r[var][0]) for r in per_set]), attrs, fam)
    return out


def _store_half_samples(
    cond, plan: Plan, fams, estimates, unc: Uncertainty, data_vars, repeats, show
):
    """Half-sample replicates of ``fams``: their bands, replicates and sizes m."""
    from . import _resampling as resampling

    reps = resampling.half_samples(cond, plan, fams, repeats, unc.seed, unc.common_n, show=show)
    full = np.array([unc.common_n or item.n for item in cond.sets])
    half = np.array([resampling.half_size(int(n)) for n in full])
    scales = np.array(
        [resampling.subsample_scale(int(n), int(m)) for n, m in zip(full, half, strict=True)]
    )
    data_vars["subsample_size"] = (
        ("set",),
        half,
        {"role": "replicate size m", "scale": "sqrt(m / (n - m)), n = n_samples or common_n"},
    )
    for var, values in reps.items():
        est, _, fam = estimates[var]
        with warnings.catch_warnings():  # replicates without a pair: NaN bands, no noise
            warnings.filterwarnings("ignore", "All-NaN slice", RuntimeWarning)
            lower, upper = resampling.bands(est, values, unc.ci, scales, full / half)
        _store_replicates(data_vars, var, fam, unc.ci, values, lower, upper, "half-sample")


def _store_large_subsamples(
    cond, plan: Plan, fams, estimates, unc: Uncertainty, data_vars, repeats, show
):
    """Replicates of large-n ``fams`` by their exact methods on subsets of m samples:
    bands scaled to each set's n, and the sizes m (``large_subsample_size``, which compare
    reads for the scale, :func:`~diversity_profiles.pipeline.replicate_sizes`)."""
    from . import _resampling as resampling

    reps = resampling.large_subsamples(cond, plan, fams, repeats, unc.seed, show=show)
    full = np.array([item.n for item in cond.sets])
    m = np.array([resampling.large_subsample_size(int(n)) for n in full])
    scales = np.array(
        [resampling.subsample_scale(int(n), int(k)) for n, k in zip(full, m, strict=True)]
    )
    data_vars["large_subsample_size"] = (
        ("set",),
        m,
        {
            "role": "replicate size m of the large-n subsamples",
            "scale": "sqrt(m / (n - m)), n = n_samples",
        },
    )
    for var, values in reps.items():
        if var not in estimates:
            continue
        est, _, fam = estimates[var]
        lower, upper = resampling.bands(est, values, unc.ci, scales, full / m)
        _store_replicates(data_vars, var, fam, unc.ci, values, lower, upper, "subsample")


#: Per kind of replicate: its dimension and how it was made (the variables' attributes).
REPLICATE_KINDS = {
    "half-sample": ("boot", HALF_SAMPLE_METHOD),
    "multiplier": ("draw", MULTIPLIER_METHOD),
    "subsample": ("subsample", LARGE_SUBSAMPLE_METHOD),
}


def _store_replicates(data_vars, var, fam, ci, values, lower, upper, kind: str) -> None:
    """``<var>_ci_lower``/``_ci_upper`` (pointwise bands) and ``<var>_boot`` (replicates)."""
    dim, method = REPLICATE_KINDS[kind]
    dims = ("set",) + (() if fam.parameter is None else (fam.parameter,))
    role = {"family": fam.name, "ci": ci, "method": method}
    shape = (values.shape[0], *values.shape[2:])
    data_vars[f"{var}_ci_lower"] = (dims, lower.reshape(shape), {**role, "role": "ci_lower"})
    data_vars[f"{var}_ci_upper"] = (dims, upper.reshape(shape), {**role, "role": "ci_upper"})
    data_vars[f"{var}_boot"] = (
        ("set", dim, *dims[1:]),
        values,
        {**role, "role": "replicates", "kind": kind},
    )


def _bytes_per_replicate(cond, plan: Plan) -> int:
    """float64 values per replicate and set (all grids), held a few times while stacking."""
    return 8 * 3 * len(cond.sets) * sum(max(g.size, 1) for g in plan.grids.values())


def _add_uncertainty(cond, plan: Plan, fams, estimates, unc: Uncertainty, data_vars) -> dict:
    """Subsample to a common size and/or bootstrap; returns attributes to record."""
    from ..core import plan_repeats
    from . import _resampling as resampling

    per_rep = _bytes_per_replicate(cond, plan)
    notes: dict = {}
    if unc.common_n is not None:
        common_n = unc.common_n  # narrowed to int, also inside the lambda
        show = plan_repeats(
            lambda: resampling.subsamples(cond, plan, fams, common_n, 1, unc.seed),
            unc.n_subsamples,
            arg="n_subsamples",
            func=FUNC,
            max_seconds=unc.max_seconds,
            result_bytes=per_rep * unc.n_subsamples,
        )
        reps = resampling.subsamples(
            cond, plan, fams, unc.common_n, unc.n_subsamples, unc.seed, show
        )
        for var, values in reps.items():
            _, attrs, fam = estimates[var]
            how = f"mean over {unc.n_subsamples} subsamples of {unc.common_n}"
            estimates[var] = (values.mean(axis=1), {**attrs, "estimate": how}, fam)
            dims = ("set",) + (() if fam.parameter is None else (fam.parameter,))
            with np.errstate(invalid="ignore"):  # -inf energies (duplicates): the sd is NaN
                spread = values.std(axis=1, ddof=1) if unc.n_subsamples > 1 else values[:, 0] * 0
            data_vars[f"{var}_sd"] = (dims, spread, {"family": fam.name, "role": "spread"})
        notes.update(common_n=unc.common_n, n_subsamples=unc.n_subsamples)
    if isinstance(unc.n_boot, str):  # "auto", checked when the call was read
        notes.update(_auto_uncertainty(cond, plan, fams, estimates, unc, data_vars, per_rep))
    elif unc.n_boot > 0:
        show = plan_repeats(
            lambda: resampling.half_samples(cond, plan, fams, 1, unc.seed, unc.common_n),
            unc.n_boot,
            arg="n_boot",
            func=FUNC,
            max_seconds=unc.max_seconds,
            result_bytes=per_rep * unc.n_boot,
        )
        _store_half_samples(cond, plan, fams, estimates, unc, data_vars, unc.n_boot, show)
        notes.update(n_boot=unc.n_boot, ci=unc.ci, ci_method=HALF_SAMPLE_METHOD)
        notes["bootstrap_seed"] = unc.seed
        notes.update(
            {f"uncertainty_{f.name}": f"half-sample replicates ({unc.n_boot})" for f in fams}
        )
    else:
        notes.update({f"uncertainty_{f.name}": "none: n_boot=0" for f in fams})
    return notes


#: The default uncertainty's half-sample replicates (families without an influence: Circles,
#: richness): AUTO_REPEATS of them for sets of at most AUTO_HALF_SAMPLE_MAX_N samples, none
#: above. A rule on n, not on a timing, so the same call gives the same tree on any machine.
#: The bound is where method="auto" moves Circles to its large-n method on the distances
#: where that is tight (whose bounds are about these samples only); on the others (Tanimoto)
#: Circles stays on its greedy bounds up to 2.5 times that, without bands. A replicate is
#: Circles' greedy lower bound on n/2 samples, O(n^2) per threshold (0.07 s at n/2 = 1,000
#: and 85 thresholds): the default profile of two sets of 2,000 (384-d, cosine) took 17.8 s,
#: the plain one 6.7 s; of two of 4,000, 50.0 s and 28.3 s (benchmarks/uncertainty_cost.py).
AUTO_REPEATS = 40
AUTO_HALF_SAMPLE_MAX_N = FAMILIES["circles"].cost.auto_exact_max_n or 4000
#: ...and none for a set so small that its half-samples hold one or two points.
AUTO_HALF_SAMPLE_MIN_N = 6


def _auto_uncertainty(cond, plan: Plan, fams, estimates, unc: Uncertainty, data_vars, per_rep):
    """``n_boot="auto"``: multiplier draws of each sample's influence where a family has
    one (cheap: one pass over the matrices already formed), half-sample replicates for the
    others when the sets are small enough (AUTO_HALF_SAMPLE_MAX_N); what
    each family got is its variables' ``uncertainty`` attribute and the node's
    ``uncertainty_<family>``."""
    from . import _resampling as resampling

    notes: dict = {"n_boot": "auto", "ci": unc.ci, "bootstrap_seed": unc.seed}
    per_fam: dict[str, str] = {}
    covered: set[str] = set()
    if unc.common_n is None:
        whole = {var: values for var, (values, _, _) in estimates.items()}
        infl, estimated_on = resampling.influences(cond, plan, fams, whole)
        values = {var: estimates[var][0] for var in infl}
        draws = resampling.multiplier_replicates(
            values, infl, resampling.MULTIPLIER_DRAWS, unc.seed
        )
        ones = np.ones(len(cond.sets))
        for var, reps in draws.items():
            est, _, fam = estimates[var]
            flat = est.reshape(reps.shape[0], -1)
            lower, upper = resampling.bands(flat, reps, unc.ci, ones, ones)
            reps = reps.reshape(reps.shape[0], reps.shape[1], *est.shape[1:])
            _store_replicates(data_vars, var, fam, unc.ci, reps, lower, upper, "multiplier")
            covered.add(fam.name)
            per_fam[fam.name] = f"multiplier draws ({resampling.MULTIPLIER_DRAWS})" + (
                f" of {estimated_on[fam.name]}" if fam.name in estimated_on else ""
            )
    rest = _half_sample_candidates(plan, fams, unc, covered)
    if rest:
        sizes = [unc.common_n or item.n for item in cond.sets]
        why = {f.name: reason for f in rest
               if (reason := _no_half_samples(f, plan, sizes, per_rep)) is not None}  # fmt: skip
        halved = [f for f in rest if f.name not in why]
        if halved:
            show = max(sizes) * AUTO_REPEATS > 4000  # about the size where it takes seconds
            _store_half_samples(cond, plan, halved, estimates, unc, data_vars, AUTO_REPEATS, show)
            methods = [MULTIPLIER_METHOD] * bool(covered) + [HALF_SAMPLE_METHOD]
            notes.update(half_samples=AUTO_REPEATS, ci_method="; ".join(methods))
        for f in rest:
            # No family name inside: the summary names the family (by its display name)
            # and says one reason once for all the families it holds for.
            if f.name not in why:
                per_fam[f.name] = f"half-sample replicates ({AUTO_REPEATS})" + (
                    " of its exact method" if plan.large(f.name) else ""
                )
            elif plan.large(f.name):  # n_boot alone is refused on a large-n method
                per_fam[f.name] = (
                    f"none: large-n method, and {why[f.name]}; its bounds are about this "
                    f"sample only; pass method='exact' with n_boot={AUTO_REPEATS} (half-samples "
                    "of every family) or with permutations=199 (an exact test of whether the "
                    "sets differ)"
                )
            else:
                per_fam[f.name] = (
                    f"none: no per-sample influence, and {why[f.name]}; pass "
                    f"n_boot={AUTO_REPEATS} for half-samples of every family, or "
                    "permutations=199 for an exact test of whether the sets differ"
                )
    sub = _large_subsampled(cond, plan, fams, unc, covered)
    if sub:
        R = resampling.LARGE_SUBSAMPLE_REPEATS
        show = max(item.n for item in cond.sets) >= 4000
        _store_large_subsamples(cond, plan, sub, estimates, unc, data_vars, R, show)
        m = sorted({resampling.large_subsample_size(item.n) for item in cond.sets})
        for f in sub:
            per_fam[f.name] = (
                f"subsample replicates ({R}, exact method on {'/'.join(map(str, m))} samples)"
            )
        methods = notes.get("ci_method", "")
        notes["ci_method"] = "; ".join(
            x for x in (methods or (MULTIPLIER_METHOD if covered else ""),
                        resampling.LARGE_SUBSAMPLE_METHOD) if x
        )  # fmt: skip
    for f in fams:
        if f.name not in per_fam and f.bootstrapped:
            per_fam[f.name] = _no_large_uncertainty(f, max(item.n for item in cond.sets))
    if covered and "ci_method" not in notes:
        notes["ci_method"] = resampling.MULTIPLIER_METHOD
    notes.update({f"uncertainty_{name}": how for name, how in per_fam.items()})
    return notes


def _half_sample_candidates(plan: Plan, fams, unc: Uncertainty, covered) -> list:
    """Families the default bands by half-samples where the sets' sizes allow: those
    without influences (``covered``) on their exact method, and those on their large-n
    method that take their exact method's replicates there (``half_samples_when_large``)."""
    return [
        f for f in fams
        if f.bootstrapped and f.name not in covered
        and (not plan.large(f.name) or (f.half_samples_when_large and unc.common_n is None))
    ]  # fmt: skip


def _no_half_samples(f, plan: Plan, sizes: list[int], per_rep: int) -> str | None:
    """Why a candidate of :func:`_half_sample_candidates` gets no half-samples (None: it
    gets them)."""
    from ..core import available_memory_bytes

    large = plan.large(f.name)
    cap = f.half_samples_when_large if large else AUTO_HALF_SAMPLE_MAX_N
    if min(sizes) < AUTO_HALF_SAMPLE_MIN_N:
        return f"half-samples of fewer than {AUTO_HALF_SAMPLE_MIN_N} samples say nothing"
    if max(sizes) > cap:
        of = " of its exact method" if large else ""
        return f"the default draws half-samples{of} only up to {cap:,} samples"
    if per_rep * AUTO_REPEATS > 0.5 * available_memory_bytes():
        return "its half-samples would not fit in memory"
    return None


def _large_subsampled(cond, plan: Plan, fams, unc: Uncertainty, covered) -> list:
    """Families on their large-n method that the default bands by subsamples of their exact
    method (``subsample_when_large``), where their own solver runs (Gaussian Vendi on
    Euclidean embeddings: measured there)."""
    return [
        f for f in fams
        if f.bootstrapped and f.name not in covered and plan.large(f.name)
        and f.subsample_when_large and unc.common_n is None
        and f.name in SOLVERS and SOLVERS[f.name].applies(cond.distance, cond.kernel)
    ]  # fmt: skip


def _default_replicates(cond, plan: Plan, fams, unc: Uncertainty) -> dict:
    """family -> (a call running r replicates on every set; repeats; how) for the replicates
    the default uncertainty runs on large-n methods, to time up front. Families banded by
    influences there (``large_influence``, ``influence_from_subset``) are timed apart."""
    from . import _resampling as resampling

    if unc.n_boot != "auto" or unc.common_n is not None:
        return {}
    covered = {f.name for f in fams if f.large_influence is not None or f.influence_from_subset}
    sizes, per_rep = [item.n for item in cond.sets], _bytes_per_replicate(cond, plan)
    out = {}
    for f in _half_sample_candidates(plan, fams, unc, covered):
        if plan.large(f.name) and _no_half_samples(f, plan, sizes, per_rep) is None:
            out[f.name] = (
                lambda r, f=f: resampling.half_samples(cond, plan, [f], r, unc.seed),
                AUTO_REPEATS,
                f"half-samples of its exact method, {AUTO_REPEATS}",
            )
    for f in _large_subsampled(cond, plan, fams, unc, covered):
        R = resampling.LARGE_SUBSAMPLE_REPEATS
        out[f.name] = (
            lambda r, f=f: resampling.large_subsamples(cond, plan, [f], r, unc.seed),
            R,
            f"subsamples of its exact method, {R}",
        )
    return out


def _no_large_uncertainty(fam, n: int) -> str:
    """Why a family on its large-n method got no sampling uncertainty (the node's
    ``uncertainty_<family>``), for the largest set's n."""
    if fam.large_influence is None:
        return "none: large-n method; its bounds are about this sample only"
    cap = fam.large_influence.max_n
    if n > cap:
        return (
            f"none: large-n method on more than {cap:,} samples per set, where the exact "
            f"jackknife, an n³ factorisation per scale, is not run; its bounds are about "
            f"this sample only"
        )
    return (
        "none: large-n method, and the exact jackknife could not run: the sets are held on "
        "a device or cluster, or it would not fit in memory; its bounds are about this "
        "sample only"
    )


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_uncertainty(
    prepared, n_boot, ci, common_n, n_subsamples, seed, max_seconds
) -> Uncertainty:
    if max_seconds is not None:
        max_seconds = check_real(max_seconds, "max_seconds", FUNC, low=0.0, low_open=True)
    if not (isinstance(n_boot, str) and n_boot == "auto") and (
        not _is_int(n_boot) or n_boot < 0 or n_boot == 1
    ):
        raise ValueError(
            f"The 'n_boot' argument of {FUNC} must be 'auto' (the default uncertainty), 0 "
            f"(none: no verdict will be supported) or an int >= 2 (half-sample replicates of "
            f"every family). Got {n_boot!r}."
        )
    ci = check_real(ci, "ci", FUNC, low=0.0, high=1.0, low_open=True, high_open=True)
    smallest = min(item.n for item in prepared)
    if isinstance(common_n, str) and common_n == "min":
        common_n = smallest
    if common_n is not None:
        if not _is_int(common_n) or not 2 <= common_n <= smallest:
            raise ValueError(
                f"The 'common_n' argument of {FUNC} must be 'min' or an int in [2, {smallest}] "
                f"(the smallest set's size). Got {common_n!r}."
            )
        if not _is_int(n_subsamples) or n_subsamples < 1:
            raise ValueError(
                f"The 'n_subsamples' argument of {FUNC} must be an int >= 1. Got {n_subsamples!r}."
            )
    return Uncertainty(
        n_boot if n_boot == "auto" else int(n_boot),
        float(ci),
        common_n,
        int(n_subsamples),
        int(seed),
        max_seconds,
    )


def _build_dataset(
    cond: Condition,
    plan: Plan,
    fams: list[Family],
    how: dict,
    unc: Uncertainty,
    evaluated: Mapping | None = None,
):
    """The condition node's dataset; ``how`` says, per family, how its grid was chosen, and
    ``evaluated`` holds the families already evaluated on their (adaptive) grid."""
    import xarray as xr

    estimates = _estimates(cond, plan, fams, evaluated or {})
    data_vars: dict = {"n_samples": (("set",), np.array([s.n for s in cond.sets]))}
    notes = _add_uncertainty(cond, plan, fams, estimates, unc, data_vars)
    for var, (values, attrs, fam) in estimates.items():
        dims = ("set",) if fam.parameter is None else ("set", fam.parameter)
        data_vars[var] = (dims, values, attrs)
    coords: dict = {"set": ("set", np.array(cond.labels, dtype=str))}
    for fam in fams:
        if fam.parameter is not None:
            coords[fam.parameter] = (
                fam.parameter,
                np.array(plan.grids[fam.name]),
                {"domain": how[fam.name], "family": fam.name, "axis_scale": fam.axis},
            )
    attrs = {
        "representation": cond.representation,
        "distance": cond.distance,
        "kernel": cond.kernel if any(f.uses_kernel for f in fams) else "none",
        "families": ", ".join(f.name for f in fams),
        "diversity_profiles_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        **notes,
    }
    if attrs["kernel"] == "gaussian":
        assert plan.bandwidth is not None  # build_plan chose it for this kernel
        attrs["bandwidth"] = float(plan.bandwidth)
        attrs["bandwidth_method"] = plan.bandwidth_method
    if any(plan.large(f.name) for f in fams):  # small n keeps today's layout exactly
        attrs["methods"] = "; ".join(f"{f}: {r}" for f, r in plan.routes.items())
    # The call's decisions, so that extending this node recomputes with them.
    attrs["plan"] = plan.to_json()
    return with_interpolation_bounds(xr.Dataset(data_vars, coords=coords, attrs=attrs))


def plan_bandwidth(cond: Condition, routes: Mapping[str, str]) -> tuple[float, str]:
    """The Gaussian kernel's bandwidth for a call with these routes, and how it was chosen.

    The user's, else the median of the pooled pairwise distances: from the streamed
    histograms when Vendi runs its large-n method (no n × n matrix), else exactly.
    """
    if cond.bandwidth is not None:
        return float(cond.bandwidth), "given by the user"
    how = "median of the pooled pairwise distances"
    if routes.get("vendi") == "large":
        from ._large import median_distance

        return median_distance(
            cond
        ), how + " (from the log-distance histogram, within a factor 1.0007)"
    return float(median_bandwidth([s.D for s in cond.sets])), how


def node_bandwidth(cond: Condition, attrs: Mapping) -> float | None:
    """The Gaussian bandwidth a node was computed with (its ``bandwidth`` attribute), or,
    when no family of the node used the kernel, the one a profile of ``cond`` would use."""
    value = attrs.get("bandwidth")
    if value is not None:
        return float(value)
    return plan_bandwidth(cond, {})[0] if cond.kernel == "gaussian" else None


def _routes(
    cond: Condition, fams: list[Family], method, unc: Uncertainty, n_points: int | str
) -> tuple[dict, float, dict[str, float]]:
    """family -> "exact" or "large", checked against the memory available (see planning),
    and the bytes a large-n solver may hold."""
    from . import _planning as planning

    one_of(method, "method", FUNC, planning.METHODS)
    dask_input = method == "auto" and any(
        item.distributed or item.device is not None for item in cond.sets
    )
    if dask_input:
        method = "large"  # dask input or a device: the large-n methods there, at any n
    first = cond.sets[0]
    routes = planning.plan(
        [f.name for f in fams],
        [item.n for item in cond.sets],
        0 if first.embeddings is None else first.embeddings.shape[1],
        method=method,
        dual_vendi=cond.kernel == "cosine similarity",
        precomputed=first.embeddings is None or first.given_similarity is not None,
        n_grid=adaptive.MAX_POINTS if isinstance(n_points, str) else n_points,  # at most
        distance=cond.distance,
        distinct_sizes=(
            [item.pass_size for item in cond.sets]
            if any(f.cost.collapses_duplicates for f in fams)
            else None
        ),
    )
    large = sorted(f for f, r in routes.items() if r.method == "large")
    if large and unc.n_boot and unc.n_boot != "auto":
        raise ValueError(
            f"The bootstrap (n_boot={unc.n_boot}) of {FUNC} needs the exact methods, but "
            f"{', '.join(large)} run their large-n method at n = {max(s.n for s in cond.sets)}. "
            f"Use common_n (subsampling) for the spread, or leave n_boot at 'auto' or 0"
            + (
                " (dask input or a torch device runs the large-n methods; method='exact' "
                "computes in memory)."
                if dask_input
                else "."
            )
        )
    from ..core import available_memory_bytes

    memory_limit = planning.solver_memory(available_memory_bytes())
    peaks = {f: r.nbytes for f, r in routes.items()}
    return {f: r.method for f, r in routes.items()}, memory_limit, peaks


def check_n_points(value, name: str, func: str, *, low: int = 5, have: int = 0) -> int:
    """A number of grid points in [low, MAX_N_POINTS - have], checked before any work."""
    value = check_int(value, name, func, low=low)
    if value + have > MAX_N_POINTS:
        already = f" beyond the {have} the grid has" if have else ""
        raise ValueError(
            f"The {name!r} argument of {func} must be at most {MAX_N_POINTS - have}{already} "
            f"(a family's grid holds at most {MAX_N_POINTS} points). Got {value!r}. The default, "
            f"n_points='auto', adds points where the curves bend or cross; for detail on part "
            f"of a domain, pass that range in domains."
        )
    return value


def _check_request(families, domains, n_points) -> tuple[list[Family], dict, int | str]:
    """What to compute: the families, their domains and the grid size ("auto": adaptive)."""
    if not (isinstance(n_points, str) and n_points == "auto"):
        if isinstance(n_points, str):
            raise ValueError(
                f"The 'n_points' argument of {FUNC} must be 'auto' (adaptive grids: a coarse "
                f"pass refined where curves bend or cross) or an int (a fixed grid of that many "
                f"points). Got {n_points!r}."
            )
        n_points = int(check_n_points(n_points, "n_points", FUNC))
    fams = resolve_families(families)
    if domains is not None and not isinstance(domains, Mapping):
        raise TypeError(
            f"The 'domains' argument of {FUNC} must be None or a dict keyed by family. "
            f"Got {type(domains).__name__}."
        )
    domains = dict(domains or {})
    for name in domains:
        one_of(name, "domains key", FUNC, tuple(f.name for f in fams if f.parameter))
    return fams, domains, n_points


def build_plan(
    cond: Condition,
    fams: list[Family],
    method: str,
    unc: Uncertainty,
    n_points: int | str,
    accuracy: float | None = None,
    time_budget: float | None = None,
) -> tuple[Plan, dict[str, float]]:
    """The decisions of one call, before its grids: routes, budgets and bandwidth; and
    the planned peak bytes of each family (for the plan a long run prints)."""
    routes, memory_limit, peaks = _routes(cond, fams, method, unc, n_points)
    # before any pass runs (the bandwidth's median and the grids take theirs from them)
    check_pass_time(cond, Plan(routes), fams, unc.max_seconds)
    if accuracy is not None:
        accuracy = check_real(accuracy, "accuracy", FUNC, low=0.0, high=1.0, low_open=True)
    if time_budget is not None:
        time_budget = check_real(time_budget, "time_budget", FUNC, low=0.0, low_open=True)
    bandwidth, how = None, ""
    if cond.kernel == "gaussian" and any(f.uses_kernel for f in fams):
        bandwidth, how = plan_bandwidth(cond, routes)
    return Plan(routes, {}, bandwidth, how, accuracy, time_budget, memory_limit), peaks


def profile_condition(
    cond: Condition,
    details: dict,
    fams: list[Family],
    domains: dict,
    n_points: int | str,
    unc: Uncertainty,
    method: str = "auto",
    accuracy: float | None = None,
    time_budget: float | None = None,
) -> xr.DataTree:
    """The one-node tree of ``cond``'s profiles under a plan built for this call alone."""
    import xarray as xr

    plan, peaks = build_plan(cond, fams, method, unc, n_points, accuracy, time_budget)
    sessions = large_sessions(cond, plan, fams, domains, n_points)
    grids = condition_grids(cond, plan, fams, domains, n_points, sessions)
    plan = plan.with_grids({name: grid for name, (grid, _) in grids.items()})
    # The solvers' time, estimated before any of them runs (printed when long, refused
    # beyond max_seconds, recorded in the node); a refined large-n grid at its cap.
    capped = [f for f in fams if f.name in sessions]
    at_cap = condition_grids(cond, plan, capped, domains, adaptive.LARGE_POINTS)
    capped_plan = plan.with_grids({**plan.grids, **{k: g for k, (g, _) in at_cap.items()}})
    refined = adaptive_families(plan, fams, domains, n_points, sessions)
    estimates = check_solver_time(
        cond, capped_plan, fams, unc.max_seconds, peaks,
        influences=unc.n_boot == "auto" and unc.common_n is None,
        replicates=_default_replicates(cond, capped_plan, fams, unc), refined=refined,
    )  # fmt: skip
    # Refined before any band is computed, so bands and replicates cover the final grid.
    evaluated = {}
    beside = families_beside(plan, fams, refined, estimates, peaks)
    stop = threading.Event()  # a failed or interrupted call ends the thread's solvers too
    running = evaluate_beside(cond, replace(plan, stop=stop), beside) if beside else None
    try:
        for fam in refined:
            coarse, how_chosen = grids[fam.name]
            grid, per_set, text = adaptive.refine(
                fam, cond, plan, coarse, how_chosen, evaluators=sessions.get(fam.name)
            )
            grids[fam.name], evaluated[fam.name] = (grid, text), per_set
    except BaseException:
        stop.set()
        raise
    sessions.clear()  # the solvers' held matrices go with them
    if running is not None:
        evaluated.update(running.result())
    plan = plan.with_grids({name: grid for name, (grid, _) in grids.items()})
    how = {name: text for name, (_, text) in grids.items()}
    ds = _build_dataset(cond, plan, fams, how, unc, evaluated)
    ds.attrs.update(details)
    if estimates:
        ds.attrs["solver_seconds_estimated"] = json.dumps(
            {name: round(secs, 1) for name, secs in estimates.items()}
        )
    for eng in dict.fromkeys(engine(item) for item in cond.sets):  # where the passes ran
        ds.attrs.update(eng.provenance())
    return xr.DataTree.from_dict({f"{cond.representation}/{cond.distance}": ds})
