"""How far the drawn curve can be from the truth between two grid points, where that is known.

A profile is evaluated at grid points; the chart joins them with straight lines (Circles:
steps that hold the left value), and the verdicts read shares of the domain from the same
lines. For a family whose true value never increases along its parameter — Vendi and
Leinster–Cobbold diversity (each is 1 / a power mean of order q − 1, and power means increase
with their order), Circles (a set of samples pairwise more than τ apart is so for every
smaller τ) — the true curve on ``[θ_k, θ_{k+1}]`` lies between the true values at the two
ends, so within ``[lo_{k+1}, hi_k]`` for brackets ``[lo, hi]`` that hold each end (the value
itself where it is exact). The drawn curve on that interval lies between the two values, so
neither is off by more than

    ``max(hi_k − min(drawn), max(drawn) − lo_{k+1})``,

a certified bound, stored as ``<family>_interpolation_error`` beside the values (NaN at the
last point, which starts no interval). Magnitude and energy are not monotone in general:
they get no bound (their adaptive grids bound the error of the line by the curvature,
``._adaptive``, an estimate).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._layout import brackets
from ._registry import FAMILIES

if TYPE_CHECKING:
    import xarray as xr

#: Suffix of the stored bound.
SUFFIX = "_interpolation_error"


def interpolation_bound(
    values: np.ndarray,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    step: bool = False,
) -> np.ndarray:
    """The bound on each interval of a nonincreasing curve, on the last axis (NaN at its end).

    >>> interpolation_bound(np.array([5.0, 3.0, 2.0])).tolist()
    [2.0, 1.0, nan]
    >>> interpolation_bound(np.array([5.0, 3.0]), upper=np.array([6.0, 3.0]), step=True).tolist()
    [2.0, nan]
    """
    v = np.asarray(values, dtype=np.float64)
    lo = v if lower is None else np.asarray(lower, dtype=np.float64)
    hi = v if upper is None else np.asarray(upper, dtype=np.float64)
    out = np.full(v.shape, np.nan)
    if v.shape[-1] < 2:
        return out
    left, right = v[..., :-1], v[..., 1:]
    drawn_lo, drawn_hi = (left, left) if step else (np.fmin(left, right), np.fmax(left, right))
    with np.errstate(invalid="ignore"):  # inf - inf at q = 0 or a NaN value: no bound
        bound = np.maximum(hi[..., :-1] - drawn_lo, drawn_hi - lo[..., 1:])
        out[..., :-1] = np.where(bound >= 0, bound, np.where(np.isnan(bound), np.nan, 0.0))
    return out


def with_interpolation_bounds(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` with ``<family>_interpolation_error`` for each nonincreasing family it holds
    (recomputed from the values, so a grown grid gets its new intervals); a new Dataset."""
    out = ds.copy(deep=False)
    for fam in FAMILIES.values():
        if not fam.nonincreasing or fam.parameter is None or fam.name not in ds:
            continue
        var = ds[fam.name]
        if var.dims[-1] != fam.parameter:
            continue
        lower, upper = brackets(ds, fam.name) or (None, None)
        bound = interpolation_bound(var.values, lower, upper, fam.rule.step)
        line = "the step it holds" if fam.rule.step else "the straight line between them"
        out[f"{fam.name}{SUFFIX}"] = (
            var.dims,
            bound,
            {
                "family": fam.name,
                "role": "interpolation_error",
                "note": f"certified bound on |true value - {line}| on [{fam.parameter}_k, "
                f"{fam.parameter}_k+1]: the family never increases in {fam.parameter}, so the "
                "truth lies between the brackets of the two ends; NaN at the last point",
            },
        )
    return out
