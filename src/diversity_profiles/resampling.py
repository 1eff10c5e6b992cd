"""Finite-sample honesty: bootstrap bands and subsampling to a common size.

Resamples reuse each set's prepared matrices (distances, kernels, embeddings)
by index; no feature or distance is recomputed. A bootstrap resample keeps its
distinct samples with their multiplicities, which the families use where they
have a meaning (the probability-weighted Vendi score; pair weights ``m_i m_j`` for
energy and average distance, with pairs of copies of one sample left out).

Only those three families are bootstrapped. Magnitude, Circles and richness
count distinct points, and a resample drawn with replacement holds about 37%
fewer of them, so its spread says nothing about the sample's uncertainty; for
them, ``common_n`` subsampling (without replacement) reports the spread.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from .condition import Condition, PreparedSet
from .families import Family

#: Families whose bootstrap is meaningful (see the module docstring).
BOOTSTRAPPED = ("vendi", "energy", "average_distance")
#: Never resampled: Circles' upper bound costs far more than it tells here.
_SKIP = {"circles_upper"}


def _evaluate_all(cond: Condition, item: PreparedSet, fams: list[Family], grids: dict) -> dict:
    out = {}
    for fam in fams:
        for var, (values, _) in fam.evaluate(cond, item, grids[fam.name]).items():
            if var not in _SKIP:
                out[var] = np.asarray(values, dtype=np.float64)
    return out


def _replicates(
    cond: Condition,
    fams: list[Family],
    grids: dict,
    draw: Callable[[np.random.Generator, PreparedSet], PreparedSet],
    repeats: int,
    seed: int,
    show: bool = False,
) -> dict[str, np.ndarray]:
    """var -> array (set, repeat, *grid) of the families on ``repeats`` draws per set.

    ``show`` draws a progress bar (set by profiles when the work is estimated to be long).
    """
    from ._progress import progress

    fast = copy.copy(cond)
    fast.circles_method = "greedy"  # thousands of sweeps: the certified lower bound
    per_set = []
    for k, item in enumerate(cond.sets):
        rng = np.random.default_rng([seed, k])
        steps = progress(
            range(repeats),
            total=repeats,
            desc=f"resampling set {k + 1}/{len(cond.sets)}",
            enabled=show,
        )
        runs = [_evaluate_all(fast, draw(rng, item), fams, grids) for _ in steps]
        per_set.append({var: np.stack([r[var] for r in runs]) for var in runs[0]})
    return {var: np.stack([s[var] for s in per_set]) for var in per_set[0]} if per_set else {}


def bootstrap(
    cond: Condition,
    fams: list[Family],
    grids: dict,
    n_boot: int,
    seed: int,
    size: int | None = None,
    show: bool = False,
) -> dict[str, np.ndarray]:
    """Bootstrap replicates: ``size`` (default n) draws with replacement per resample."""

    def draw(rng, item):
        idx = rng.integers(0, item.n, size or item.n)
        distinct, counts = np.unique(idx, return_counts=True)
        return item.subset(distinct, counts)

    fams = [f for f in fams if f.name in BOOTSTRAPPED]
    if any(f.name == "energy" for f in fams):
        for item in cond.sets:
            item.D  # noqa: B018 - form each distance matrix once; resamples slice it
    return _replicates(cond, fams, grids, draw, n_boot, seed, show) if fams else {}


def subsamples(
    cond: Condition,
    fams: list[Family],
    grids: dict,
    size: int,
    repeats: int,
    seed: int,
    show: bool = False,
) -> dict[str, np.ndarray]:
    """Replicates on subsets of ``size`` samples drawn without replacement."""

    def draw(rng, item):
        return item.subset(np.sort(rng.choice(item.n, size, replace=False)))

    return _replicates(cond, fams, grids, draw, repeats, seed + 7919, show)


def bands(estimate: np.ndarray, replicates: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """Basic (reverse-percentile) bootstrap interval: ``2 est - q_hi, 2 est - q_lo``.

    The basic interval subtracts the bootstrap's own bias estimate, which matters
    here: plug-in diversity estimates are biased at finite n (the Vendi score of a
    resample with ties is lower than the sample's), and the percentile interval
    inherits that bias twice. ``replicates`` has the repeat on axis 1.
    """
    alpha = (1.0 - ci) / 2.0
    with np.errstate(invalid="ignore"):
        q_lo, q_hi = np.nanquantile(replicates, [alpha, 1.0 - alpha], axis=1)
        lower, upper = 2 * estimate - q_hi, 2 * estimate - q_lo
    return np.minimum(lower, estimate), np.maximum(upper, estimate)
