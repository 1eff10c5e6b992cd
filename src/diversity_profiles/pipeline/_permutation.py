"""Two-sample permutation tests of profiles: what the samples support, with a p-value.

:func:`permutation_test` asks, for every unordered pair of sets (A, B) and every family of
a condition, whether the two sets could be samples of one population. Under that null
hypothesis the pooled samples are exchangeable: any relabelling into halves of the
original sizes is as likely as the observed one. Each relabelling is a new pair of index
vectors into one pooled :class:`~diversity_profiles.pipeline.PreparedSet` whose distance
matrix is formed once; the halves are ``pooled.subset(indices)``, so no distance is ever
recomputed.

Why it is exact. The observed labelling and ``R`` relabellings drawn uniformly at random
(with replacement) are exchangeable under the null (Hemerik & Goeman 2018, Theorem 2), so
the rank of the observed statistic among the ``R + 1`` is uniform whatever the statistic,
provided every labelling's statistic is computed the same way, as a fixed function of
that labelling and of the multiset of all labellings. Hence:

- the observed curves are recomputed from the pooled set like the relabelled ones (the
  tree's values are not used, only its grids and plan);
- Circles uses its greedy lower bound in *every* evaluation, observed included: the
  statistic need not be the tree's certified optimum to give an exact test;
- the studentising moments are taken over all ``R + 1`` labellings, a symmetric function
  of them; a grid point is left out for every labelling at once (the difference is not
  finite for some labelling, or it does not vary beyond round-off);
- halves keep the random order of the permutation, so even statistics that depend on the
  order of the samples (greedy tie-breaks) stay exact.

The grids and the plan (bandwidth) are the tree's, chosen from the observed sets (e.g.
Circles' thresholds are quantiles of within-set distances): the test is exact given them,
and exact outright for grids fixed in advance (``profiles(domains=...)``).
``benchmarks/calibration.py`` measures its size and power.

References
----------
Hemerik, J. & Goeman, J. (2018). Exact testing with random permutations. TEST 27, 811–825.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J.
Statist. 6, 65–70.
Westfall, P. H. & Young, S. S. (1993). Resampling-Based Multiple Testing (max-T).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..core import (
    available_memory_bytes,
    human_bytes,
    plan_repeats,
    progress,
)
from ._condition import PreparedSet
from ._layout import PERMUTATION_NODE
from ._plan import Plan
from ._registry import FAMILIES

if TYPE_CHECKING:
    import xarray as xr

    from ._condition import Condition
    from ._registry import Family


#: A difference that varies over the relabellings by less than this, relative to the
#: curves' size, is round-off (e.g. richness of distinct samples: always n_A - n_B);
#: studentising it would turn noise into the statistic.
ROUND_OFF = 1e-10

STATISTIC = "T = max_k |d_k - mu_k| / sigma_k"
P_VALUE = "(1 + #{r : T_r >= T_obs}) / (R + 1)"


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment of a flat array of p-values (Holm 1979).

    ``p_(i)`` adjusted is ``max_{j <= i} min(1, (m - j + 1) p_(j))`` for the sorted
    p-values; rejecting where it is ``<= alpha`` controls the family-wise error at alpha.

    >>> holm(np.array([0.01, 0.04, 0.03, 0.5])).tolist()
    [0.04, 0.09, 0.09, 0.5]
    """
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    steps = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(steps, 1.0)
    return out


def rank_p_value(stats: np.ndarray) -> float:
    """``(1 + #{r >= 1 : T_r >= T_0}) / (R + 1)`` for ``stats = [T_0, T_1, ..., T_R]``.

    Ties count against the observed (conservative), within a relative 1e-9: two
    labellings that hold the same samples in another order give the same curves up to
    round-off.

    >>> rank_p_value(np.array([3.0, 1.0, 2.0, 0.5])), rank_p_value(np.array([0.0, 1.0, 2.0]))
    (0.25, 1.0)
    """
    stats = np.asarray(stats, dtype=np.float64)
    t_obs = stats[0]
    beaten = np.count_nonzero(stats[1:] >= t_obs - 1e-9 * max(abs(t_obs), 1.0))
    return float((1 + beaten) / stats.size)


def studentised_sup(diffs: np.ndarray, scale: np.ndarray, mirrored: bool) -> tuple[np.ndarray, int]:
    """``T_r = max_k |d_rk - mu_k| / sigma_k`` for every labelling r, and the points used.

    ``diffs`` is (labelling, point), row 0 the observed. ``mu``, ``sigma`` are the mean
    and standard deviation over all rows. ``mirrored`` (equal sizes): swapping the two
    halves is itself a relabelling with difference ``-d``, so the moments are taken
    over ``±d`` (``mu = 0`` exactly; ``T`` is then 0 for two identical sets). Points
    where some row is not finite, or ``sigma <= ROUND_OFF * scale``, are left out for
    every row; with none left, every ``T`` is 0 (and the p-value 1).

    >>> T, used = studentised_sup(np.array([[2.0], [-1.0], [1.0]]), np.ones(1), True)
    >>> T.round(4).tolist(), used
    ([[1.4142], [0.7071], [0.7071]], 1)
    """
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(diffs).all(axis=0)
        d = np.where(finite, diffs, 0.0)
        mu = np.zeros(d.shape[1]) if mirrored else d.mean(axis=0)
        sigma = np.sqrt(np.mean((d - mu) ** 2, axis=0))
    use = finite & (sigma > ROUND_OFF * np.where(np.isfinite(scale), scale, 0.0))
    if not use.any():
        return np.zeros((d.shape[0], 1)), 0
    z = np.abs(d[:, use] - mu[use]) / sigma[use]
    return z.max(axis=1, keepdims=True), int(use.sum())


def _values(fam: Family, cond: Condition, plan: Plan, item: PreparedSet) -> np.ndarray:
    """The family's own curve on one half, on the plan's grid (scale-free: one point)."""
    result = fam.evaluate(cond, plan, item, plan.grids[fam.name])
    return np.atleast_1d(np.asarray(result[fam.name][0], dtype=np.float64)).ravel()


class _Pair:
    """One unordered pair of sets: its pooled set and every labelling's differences."""

    def __init__(self, i: int, j: int, a: PreparedSet, b: PreparedSet, seed: int) -> None:
        assert a.embeddings is not None and b.embeddings is not None  # checked by the caller
        self.i, self.j, self.n_a, self.n_b = i, j, a.n, b.n
        self.pooled = PreparedSet(
            label=f"{a.label}+{b.label}",
            distance=a.distance,
            embeddings=np.concatenate([a.embeddings, b.embeddings]),
            richness_tol=a.richness_tol,
            device=a.device,
        )
        # Its own stream per pair, keyed by the sets' positions (not by the order of the
        # loop): (a, b) and (b, a) are one test, and a set added after them changes nothing.
        self.rng = np.random.default_rng([seed, i, j])
        self.rows: dict[str, list[np.ndarray]] = {}
        self.scale: dict[str, np.ndarray] = {}

    def relabel(self, cond: Condition, plan: Plan, fams: list[Family], order: np.ndarray):
        """Per family: (d = A' - B', max(|A'|, |B'|)) for the halves ``order`` makes.

        The halves keep the permutation's order, so a statistic that depends on the order
        of the samples stays exact (module docstring).
        """
        halves = self.pooled.subset(order[: self.n_a]), self.pooled.subset(order[self.n_a :])
        out = {}
        for fam in fams:
            a, b = (_values(fam, cond, plan, half) for half in halves)
            with np.errstate(invalid="ignore"):
                out[fam.name] = (a - b, np.maximum(np.abs(a), np.abs(b)))
        return out

    def keep(self, curves: dict) -> None:
        for name, (diff, size) in curves.items():
            self.rows.setdefault(name, []).append(diff)
            old = self.scale.get(name, np.zeros_like(size))
            self.scale[name] = np.fmax(old, size)


def check_poolable(cond: Condition, func: str, drop: str) -> None:
    """Refuse sets that a relabelling cannot pool (within-set matrices only); ``drop`` is
    how the caller of ``func`` leaves the test out."""
    first = cond.sets[0]
    if first.embeddings is None or first.given_similarity is not None:
        given = "distances" if first.embeddings is None else "similarities"
        raise ValueError(
            f"The permutation test of {func} pools the samples of two sets, which needs the "
            f"distances (and similarities) between them; the sets are given within-set "
            f"{given} only. Profile the embeddings instead, or {drop}."
        )


def _check_condition(cond: Condition, ds, fams: list[Family], func: str, drop: str) -> Plan:
    """The tree's plan on its grids, after refusing what a relabelling cannot pool."""
    check_poolable(cond, func, drop)
    grids = {f.name: ds[f.parameter].values if f.parameter else np.empty(0) for f in fams}
    plan = Plan.from_attrs(ds.attrs, grids=grids)
    large = [f.name for f in fams if plan.large(f.name)]
    if large:
        raise ValueError(
            f"The permutation test of {func} recomputes each family hundreds of times and "
            f"needs the exact methods, but {', '.join(map(repr, large))} ran the large-n "
            f"method (recorded route 'large'). Profile with method='exact' (or subsample to a "
            f"smaller common size first), or {drop}."
        )
    return plan


def permutation_dataset(
    cond: Condition,
    ds: xr.Dataset,
    fams: list[Family],
    n_permutations: int,
    seed: int,
    max_seconds: float | None,
    show_progress: bool | None,
    *,
    func: str,
    arg: str,
    drop: str,
) -> xr.Dataset:
    """The permutation tests of every pair of ``cond``'s sets and of ``fams`` on the grids
    and plan of the condition node ``ds`` (its values are not used): the Dataset that
    :func:`~diversity_profiles.permutation_test` returns at the condition's path, and that
    ``profiles(permutations=R)`` stores as the node's ``permutation`` child.

    ``func`` names the caller in errors and progress, ``arg`` its argument that sets R,
    ``drop`` says how to leave the test out. Checked input assumed (``n_permutations >= 1``,
    a valid seed).
    """
    R = n_permutations
    plan = _check_condition(cond, ds, fams, func, drop)
    # The greedy lower bound of Circles in every evaluation (observed included): an exact
    # test needs the same statistic for every labelling, not the certified optimum
    # (module docstring), and the lower bound alone skips the clique cover's cost.
    relabelled = replace(cond, circles_method="lower")
    sets = cond.sets
    pairs = [
        _Pair(i, j, sets[i], sets[j], seed)
        for i in range(len(sets))
        for j in range(i + 1, len(sets))
    ]
    held = sum(8.0 * (p.n_a + p.n_b) ** 2 for p in pairs)
    if held > 0.5 * available_memory_bytes():
        raise MemoryError(
            f"The permutation test of {func} holds one pooled distance matrix per pair of "
            f"sets, about {human_bytes(held)} for {len(pairs)} pairs, more than half the "
            f"memory available. Test fewer sets at a time (a profiler of two sets), or {drop}."
        )
    observed: dict[int, dict] = {}

    def run_observed() -> None:
        for k, pair in enumerate(pairs):
            pair.pooled.D  # noqa: B018 - formed once per pair; every half slices it
            observed[k] = pair.relabel(relabelled, plan, fams, np.arange(pair.n_a + pair.n_b))

    size = sum(max(g.size, 1) for g in plan.grids.values())
    show = plan_repeats(
        run_observed,
        R,
        arg=arg,
        func=func,
        max_seconds=max_seconds,
        result_bytes=16.0 * (R + 1) * len(pairs) * size,
    )
    for k, pair in enumerate(pairs):
        pair.keep(observed[k])
    steps = progress(
        range(R),
        total=R,
        desc=f"{func}: permutation test, relabelling {len(pairs)} pair(s)",
        enabled=show if show_progress is None else show_progress,
        unit="permutation",
    )
    for _ in steps:
        for pair in pairs:
            order = pair.rng.permutation(pair.n_a + pair.n_b)
            pair.keep(pair.relabel(relabelled, plan, fams, order))
    return _result(ds, cond, fams, pairs, R, seed)


#: The chance envelope's level: what relabelling alone produces 95% of the time, per point.
ENVELOPE_LEVEL = 0.95


def _envelopes(ds, fams: list[Family], pairs: list[_Pair], S: int) -> dict:
    """``envelope_<family>(set_a, set_b, param)``: per grid point, the ENVELOPE_LEVEL
    quantile of |A - B| over the permuted labellings (the observed one left out) — the
    difference that chance alone reaches, drawn around 0 beside the observed difference."""
    out = {}
    for fam in fams:
        if fam.parameter is None:
            continue
        size = int(ds.sizes[fam.parameter])
        env = np.full((S, S, size), np.nan)
        for pair in pairs:
            rows = np.abs(np.stack(pair.rows[fam.name])[1:]).reshape(-1, size)
            if rows.shape[0]:
                with np.errstate(invalid="ignore"):
                    level = np.nanquantile(rows, ENVELOPE_LEVEL, axis=0)
                env[pair.i, pair.j] = env[pair.j, pair.i] = level
        out[f"envelope_{fam.name}"] = (
            ("set_a", "set_b", fam.parameter),
            env,
            {
                "note": f"the {ENVELOPE_LEVEL:g} quantile of |A - B| over the permuted "
                "labellings at each point: the difference relabelling alone produces",
                "family": fam.name,
            },
        )
    return out


def _result(ds, state: Condition, fams: list[Family], pairs: list[_Pair], R: int, seed: int):
    import xarray as xr

    S, F = len(state.sets), len(fams)
    p = np.full((S, S, F), np.nan)
    stat = np.full((S, S, F), np.nan)
    used = np.zeros((S, S, F), dtype=np.int64)
    p_any = np.full((S, S), np.nan)
    stat_any = np.full((S, S), np.nan)
    for pair in pairs:
        per_family = []
        for f, fam in enumerate(fams):
            rows = np.stack(pair.rows[fam.name])
            T, k = studentised_sup(rows, pair.scale[fam.name], pair.n_a == pair.n_b)
            per_family.append(T[:, 0])
            for a, b in ((pair.i, pair.j), (pair.j, pair.i)):
                p[a, b, f], stat[a, b, f], used[a, b, f] = rank_p_value(T[:, 0]), T[0, 0], k
        # max-T: each family studentised on its own, the max taken per labelling
        t_max = np.max(per_family, axis=0)
        for a, b in ((pair.i, pair.j), (pair.j, pair.i)):
            p_any[a, b], stat_any[a, b] = rank_p_value(t_max), t_max[0]
    envelopes = _envelopes(ds, fams, pairs, S)
    upper = np.triu(np.ones((S, S), dtype=bool), k=1)
    adjusted = np.full((S, S, F), np.nan)
    adjusted[upper] = holm(p[upper].ravel()).reshape(-1, F)
    adjusted = np.fmax(adjusted, np.swapaxes(adjusted, 0, 1))  # mirror the upper triangle
    dims = ("set_a", "set_b", "family")
    names = [f.name for f in fams]
    path = f"{state.representation}/{state.distance}"
    attrs = {
        "method": "two-sample permutation test per pair and family: the two sets' samples "
        "pooled once and relabelled at random keeping the sizes; each family recomputed "
        "on both halves on the tree's grids and plan (Circles: its greedy lower bound in "
        "every evaluation, observed included); exact under exchangeability",
        "n_permutations": R,
        "seed": seed,
        "statistic": f"{STATISTIC}, d = A - B on the grid; mu, sigma over the observed and "
        "permuted labellings (over +-d when the sizes are equal); points with sigma = 0 "
        "(round-off) or non-finite values left out; T = 0 when none is left",
        "p_value": P_VALUE,
        "p_holm": f"Holm over all {len(pairs) * F} (pair, family) p-values",
        "p_any_family": "max-T over families, each studentised on its own, same relabellings",
        "condition": path,
        "families": ", ".join(names),
        "grids": "the tree's own coordinates (chosen from the observed sets)",
    }
    sizes = np.array([item.n for item in state.sets])
    out = xr.Dataset(
        {
            "n_samples": (("set_a",), sizes),
            "p_value": (dims, p, {"formula": P_VALUE}),
            "p_holm": (dims, adjusted, {"note": attrs["p_holm"]}),
            "statistic": (dims, stat, {"formula": STATISTIC}),
            "points_used": (dims, used, {"note": "grid points that entered the statistic"}),
            "p_any_family": (("set_a", "set_b"), p_any, {"note": attrs["p_any_family"]}),
            "statistic_any_family": (("set_a", "set_b"), stat_any, {"formula": "max_f T_f"}),
            **envelopes,
        },
        coords={
            "set_a": state.labels,
            "set_b": state.labels,
            "family": names,
            **{f.parameter: ds[f.parameter].values for f in fams if f.parameter is not None},
        },
        attrs=attrs,
    )
    return out


def with_permutation_test(
    tree: xr.DataTree, path: str, cond: Condition, R: int, max_seconds: float | None
) -> xr.DataTree:
    """``tree`` (one condition node at ``path``, just profiled from ``cond``) with the
    permutation test of its families stored as the node's ``PERMUTATION_NODE`` child.

    Families on their large-n method are left out (a relabelling reruns the exact
    method) and named in the child's ``not_tested`` attribute; with none left, or sets
    given as within-set matrices only, the call is refused with the fix.
    """
    import xarray as xr

    ds = tree[path].to_dataset()
    fams = [FAMILIES[name] for name in FAMILIES if name in ds.data_vars]
    plan = Plan.from_attrs(ds.attrs)
    large = [f.name for f in fams if plan.large(f.name)]
    tested = [f for f in fams if f.name not in large]
    drop = "pass permutations=0"
    if not tested:
        raise ValueError(
            f"The 'permutations' argument of profiles tests families on their exact methods, "
            f"but every family profiled ({', '.join(large)}) ran its large-n method. Pass "
            f"method='exact' (or common_n=... to subsample to a smaller size), or {drop}."
        )
    out = permutation_dataset(
        cond, ds, tested, R, cond.seed, max_seconds, None,
        func="profiles", arg="permutations", drop=drop,
    )  # fmt: skip
    if large:
        out.attrs["not_tested"] = ", ".join(large) + ": large-n method"
    grown = tree.copy(deep=False)
    grown[f"{path}/{PERMUTATION_NODE}"] = xr.DataTree(
        out.drop_vars([c for c in out.coords if c in ds.coords])
    )
    return grown
