"""``dp.convergence``: would the answer change with more samples?

Each family is evaluated on nested subsamples of every set (drawn without
replacement; within one repeat the subsample of size m is the first m samples of one
random permutation, so sizes are nested) on the grids of the full sets.

Cost: ``repeats × len(sizes)`` evaluations of every family per set, each on a subset
of at most the set's size; the matrices are computed once for the full sets and
reused by index. Circles uses its greedy lower bound here (exact solves per
subsample would dominate); this is recorded in the ``circles`` attributes.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..core import progress
from ..pipeline import (
    Condition,
    Plan,
    condition_grids,
    plan_bandwidth,
    prepare_sets,
    resolve_families,
)

if TYPE_CHECKING:
    import xarray as xr

FUNC = "convergence"


def _check_sizes(sizes, largest: int) -> np.ndarray:
    arr = np.asarray(sizes)
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu" or (arr < 2).any():
        raise ValueError(
            f"The 'sizes' argument of {FUNC} must be a list of ints >= 2, e.g. [10, 20, 50]. "
            f"Got {sizes!r}."
        )
    if (arr > largest).all():
        raise ValueError(
            f"Every size passed to {FUNC} exceeds the largest set ({largest} samples). "
            f"Got {arr.tolist()}."
        )
    return np.unique(arr)


def _from_tree(tree, condition, sets, families):
    """Condition, families and grids of a stored profile (the same sets, checked)."""
    from ._explain import _condition_node, _rebuild

    _, ds = _condition_node(tree, condition, FUNC)
    cond = _rebuild(ds, sets, None, FUNC)
    stored = str(ds.attrs.get("families", "")).split(", ")
    fams = resolve_families(stored if families is None else families)
    missing = [f.name for f in fams if f.name not in stored]
    if missing:
        raise ValueError(
            f"The 'families' argument of {FUNC} asks for {missing}, which the profile in 'like' "
            f"does not hold (it holds {stored}); leave them out or profile them first."
        )
    grids = {f.name: ds[f.parameter].values if f.parameter else np.empty(0) for f in fams}
    # Subsamples are small: every family exactly, with the profile's bandwidth.
    bandwidth = ds.attrs.get("bandwidth")
    return cond, fams, Plan(grids=grids, bandwidth=None if bandwidth is None else float(bandwidth))


def convergence(
    sets: Mapping[str, object],
    *,
    sizes: Sequence[int],
    representation: str = "embedding",
    distance: str | None = None,
    like=None,
    condition: str | None = None,
    families: Sequence[str] | str | None = None,
    repeats: int = 5,
    domains: Mapping[str, object] | None = None,
    n_points: int = 50,
    bandwidth: float | None = None,
    seed: int = 0,
    show_progress: bool = True,
) -> xr.Dataset:
    """Each family at nested subsample sizes: its mean and spread against n.

    Parameters
    ----------
    sets : dict of str to array_like
        As for :func:`profiles`.
    sizes : list of int
        Subsample sizes (>= 2). A size larger than a set gives NaN for that set.
    distance, representation, families, domains, n_points, bandwidth
        As for :func:`profiles`; the grids are those of the full sets.
    like : xarray.DataTree, optional
        A profile tree of these sets: its condition (``condition=`` when it holds
        several) sets the distance, bandwidth, families and grids, so the result can be
        stored beside it: ``tree[f"{C}/convergence"] = xr.DataTree(result)``.
    repeats : int, default 5
        Random nested subsample sequences per set.
    seed : int, default 0
    show_progress : bool, default True
        A progress bar over sets × repeats.

    Returns
    -------
    xarray.Dataset
        ``<var>(set, size, repeat[, parameter])`` for every family variable, with
        ``<var>_mean`` and ``<var>_sd`` (over repeats, ddof=1) on (set, size[, parameter]),
        and ``n_samples(set)``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.repeat(np.eye(3), 10, axis=0)           # 3 distinct items, 10 copies each
    >>> ds = convergence({"A": X}, sizes=[2, 30], distance="euclidean",
    ...                  families="richness", repeats=3, show_progress=False)
    >>> ds["richness_mean"].sel(size=30).item()
    3.0
    """
    import xarray as xr

    from ..pipeline import evaluate_all

    if not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"The 'repeats' argument of {FUNC} must be an int >= 1. Got {repeats!r}.")
    if like is not None:
        cond, fams, plan = _from_tree(like, condition, sets, families)
        prepared = cond.sets
    else:
        if distance is None:
            raise ValueError(
                f"{FUNC} needs distance='euclidean' (or another distance), or like=tree to "
                f"take the condition of a profile tree."
            )
        fams = resolve_families(families)
        prepared = prepare_sets(sets, distance)
        cond = Condition(representation, distance, prepared, bandwidth, "greedy", seed)
        plan = Plan()
        if cond.kernel == "gaussian" and any(f.uses_kernel for f in fams):
            plan = Plan(bandwidth=plan_bandwidth(cond, {})[0])
        grids = condition_grids(cond, plan, fams, dict(domains or {}), int(n_points))
        plan = plan.with_grids({name: g for name, (g, _) in grids.items()})
    # Checked: an int array from here on (the argument may be any sequence of ints).
    sizes = _check_sizes(sizes, max(s.n for s in prepared))  # type: ignore[assignment]
    fast = replace(cond, circles_method="greedy")
    results: dict[str, np.ndarray] = {}
    jobs = [(k, r) for k in range(len(prepared)) for r in range(repeats)]
    for k, r in progress(jobs, total=len(jobs), desc="convergence", enabled=show_progress):
        item = prepared[k]
        order = np.random.default_rng([seed, k, r]).permutation(item.n)
        for j, m in enumerate(sizes):
            if m > item.n:
                continue
            values = evaluate_all(fast, plan, item.subset(np.sort(order[:m])), fams)
            for var, v in values.items():
                if var not in results:
                    results[var] = np.full((len(prepared), len(sizes), repeats, *v.shape), np.nan)
                results[var][k, j, r] = v
    data: dict = {"n_samples": ("set", [s.n for s in prepared])}
    for var, arr in results.items():
        fam = next(f for f in fams if var == f.name or var.startswith(f.name + "_"))
        param = () if fam.parameter is None else (fam.parameter,)
        attrs = {"family": fam.name}
        if fam.bounds is not None:  # replicates run the greedy (certified lower) bound
            attrs["estimate"] = "greedy lower bound"
        data[var] = (("set", "size", "repeat", *param), arr, attrs)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN: sizes above a set's n
            data[f"{var}_mean"] = (("set", "size", *param), np.nanmean(arr, axis=2), attrs)
            sd = np.nanstd(arr, axis=2, ddof=1) if repeats > 1 else np.zeros_like(arr[:, :, 0])
            data[f"{var}_sd"] = (("set", "size", *param), sd, attrs)
    coords: dict = {
        "set": np.array(cond.labels, dtype=str),
        "size": sizes,
        "repeat": np.arange(repeats),
    }
    for fam in fams:
        if fam.parameter is not None:
            coords[fam.parameter] = (fam.parameter, plan.grids[fam.name], {"family": fam.name})
    attrs = {
        "representation_name": cond.representation,
        "distance": cond.distance,
        "subsampling": "nested, without replacement",
        "seed": seed,
    }
    return xr.Dataset(data, coords=coords, attrs=attrs)
