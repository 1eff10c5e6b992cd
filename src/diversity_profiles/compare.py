"""Pairwise comparison of sample sets: verdicts, crossings, shares and agreement.

``compare(tree)`` applies the rule of :mod:`diversity_profiles.verdict` to every
condition, family and ordered pair of sets, optionally over narrowed domains.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from . import verdict as rule
from ._validation import check_real
from .families import FAMILIES

FUNC = "compare"


def _family_curves(ds) -> dict[str, tuple[str | None, np.ndarray, np.ndarray]]:
    """family -> (parameter name, grid, values(set, grid)) for the families in ``ds``."""
    out = {}
    for name, fam in FAMILIES.items():
        if name not in ds.data_vars:
            continue
        var = ds[name]
        if fam.parameter is None:
            out[name] = (None, np.zeros(1), np.asarray(var.values, dtype=np.float64)[:, None])
        else:
            out[name] = (
                fam.parameter,
                ds[fam.parameter].values,
                np.asarray(var.values, np.float64),
            )
    return out


def _narrow(family: str, grid: np.ndarray, domain, path: str) -> tuple[np.ndarray, str]:
    """Indices of grid points inside the user's (low, high) domain."""
    try:
        lo, hi = (float(v) for v in domain)
    except (TypeError, ValueError):
        raise ValueError(
            f"domains[{family!r}] passed to {FUNC} must be a (low, high) pair. Got {domain!r}."
        ) from None
    if lo > hi:
        lo, hi = hi, lo
    gmin, gmax = float(grid.min()), float(grid.max())
    if lo < gmin or hi > gmax:
        raise ValueError(
            f"domains[{family!r}] = ({lo:g}, {hi:g}) passed to {FUNC} reaches outside the grid "
            f"computed for {path!r}, [{gmin:g}, {gmax:g}]. Narrow it, or recompute the profiles "
            f"with domains={{{family!r}: ({lo:g}, {hi:g})}}."
        )
    keep = np.flatnonzero((grid >= lo) & (grid <= hi))
    if keep.size == 0:
        raise ValueError(
            f"domains[{family!r}] = ({lo:g}, {hi:g}) passed to {FUNC} holds no grid point of "
            f"{path!r}; widen it or recompute the profiles on a finer grid."
        )
    return keep, f"[{lo:g}, {hi:g}] (narrowed)"


def _agreement(verdicts: list[str]) -> str:
    """Cross-family reading of one ordered pair."""
    kinds = set(verdicts)
    if kinds <= {"tied"}:
        return "tied"
    if kinds <= {"dominates", "tied"}:
        return "a_ahead"
    if kinds <= {"dominated", "tied"}:
        return "b_ahead"
    return "mixed"


def _compare_condition(ds, path: str, domains: Mapping, rtol: float, atol: float):
    import xarray as xr

    labels = [str(s) for s in ds["set"].values]
    if len(labels) < 2:
        raise ValueError(
            f"{FUNC} needs at least two sets to compare; condition {path!r} holds only {labels}."
        )
    curves = _family_curves(ds)
    unknown = sorted(set(domains) - set(curves))
    if unknown:
        raise ValueError(
            f"domains passed to {FUNC} names families not in {path!r}: {unknown}. "
            f"Families there: {sorted(curves)}."
        )
    fams = list(curves)
    S, F = len(labels), len(fams)
    verdicts = np.full((S, S, F), "tied", dtype=object)
    confident = np.full((S, S, F), "no band", dtype=object)
    ci = float(ds.attrs.get("ci", 0.95))
    shares = np.zeros((S, S, F))
    found: dict[tuple[int, int, int], list[float]] = {}
    attrs = {k: v for k, v in ds.attrs.items()}
    attrs.update(rtol=rtol, atol=atol)
    for f, fam in enumerate(fams):
        param, grid, values = curves[fam]
        if fam in domains and param is not None:
            keep, how = _narrow(fam, grid, domains[fam], path)
        else:
            keep = np.arange(grid.size)
            how = "full grid" if param is not None else "scale-free"
        attrs[f"domain_{fam}"] = how
        theta, vals = grid[keep], values[:, keep]
        boots = None
        if f"{fam}_boot" in ds:  # (set, boot[, param]) -> per set (boot, kept points)
            raw = np.asarray(ds[f"{fam}_boot"].values, dtype=np.float64)
            boots = raw[..., None] if param is None else raw[..., keep]
        axis, step = FAMILIES[fam].axis, FAMILIES[fam].step
        for i in range(S):
            for j in range(S):
                if i == j:
                    continue
                s = rule.signs(vals[i], vals[j], rtol, atol)
                verdicts[i, j, f] = rule.verdict_of(s)
                if boots is not None:
                    lo, hi = rule.band_of_difference(vals[i], vals[j], boots[i], boots[j], ci)
                    confident[i, j, f] = rule.confident_verdict(
                        vals[i], vals[j], lo, hi, rtol, atol
                    )
                if param is None:
                    shares[i, j, f] = float(s[0] > 0)
                    continue
                shares[i, j, f] = rule.share_ahead(theta, vals[i], vals[j], s, axis, step)
                if verdicts[i, j, f] == "crosses":
                    found[i, j, f] = rule.crossings(theta, vals[i], vals[j], s, axis, step)
    width = max((len(v) for v in found.values()), default=0)
    cross = np.full((S, S, F, max(width, 1)), np.nan)
    counts = np.zeros((S, S, F), dtype=np.int64)
    for (i, j, f), locs in found.items():
        cross[i, j, f, : len(locs)] = locs
        counts[i, j, f] = len(locs)
    agreement = np.array(
        [
            [_agreement(list(verdicts[i, j])) if i != j else "tied" for j in range(S)]
            for i in range(S)
        ]
    )
    dims = ("set_a", "set_b", "family")
    sizes = ds["n_samples"].values if "n_samples" in ds else np.full(S, -1)
    return xr.Dataset(
        {
            "n_samples": (("set_a",), sizes),
            "verdict": (dims, verdicts.astype(str), {"values": ", ".join(rule.VERDICTS)}),
            "verdict_ci": (
                dims,
                confident.astype(str),
                {
                    "values": ", ".join(rule.CONFIDENT_VERDICTS) + ", no band",
                    "note": f"holds at confidence {ci:g} (basic bootstrap band of the difference)",
                },
            ),
            "crossings": ((*dims, "crossing"), cross, {"note": "NaN-padded crossing parameters"}),
            "n_crossings": (dims, counts),
            "share_ahead": (dims, shares, {"note": "share of the domain where set_a is ahead"}),
            "agreement": (
                ("set_a", "set_b"),
                agreement,
                {"values": "a_ahead, b_ahead, mixed, tied"},
            ),
        },
        coords={"set_a": labels, "set_b": labels, "family": fams},
        attrs=attrs,
    )


def compare(
    tree,
    *,
    domains: Mapping[str, Sequence[float]] | None = None,
    rtol: float = rule.RTOL,
    atol: float = rule.ATOL,
):
    """Verdicts for every ordered pair of sets, family and condition of a profile tree.

    Parameters
    ----------
    tree : xarray.DataTree
        A result of :func:`profiles` (or :func:`merge`).
    domains : dict of str to (low, high), optional
        Narrow a family's parameter domain; it must lie inside the computed grid.
    rtol, atol : float
        Tolerances below which two curves are tied at a point.

    Returns
    -------
    xarray.DataTree
        The same condition paths; each node has ``verdict``, ``crossings``
        (NaN-padded along ``crossing``), ``n_crossings`` and ``share_ahead`` on
        ``(set_a, set_b, family)`` and the cross-family ``agreement(set_a, set_b)``.

    Examples
    --------
    >>> import diversity_profiles as dp
    >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
    ...                    representation="line", distance="euclidean",
    ...                    families=["richness", "average_distance", "circles"],
    ...                    domains={"circles": [0.5, 1.5, 2.5, 3.5]})
    >>> res = compare(tree)["line/euclidean"]
    >>> dict(zip(res.family.values.tolist(), res.verdict.sel(set_a="A", set_b="B").values.tolist()))
    {'circles': 'crosses', 'average_distance': 'dominated', 'richness': 'dominates'}
    >>> float(res.crossings.sel(set_a="A", set_b="B", family="circles", crossing=0))
    1.5
    """
    import xarray as xr

    from .accessor import conditions_of

    if not isinstance(tree, xr.DataTree):
        raise TypeError(f"{FUNC} takes a DataTree from dp.profiles. Got {type(tree).__name__}.")
    rtol = check_real(rtol, "rtol", FUNC, low=0.0, high=np.inf, high_open=True)
    atol = check_real(atol, "atol", FUNC, low=0.0, high=np.inf, high_open=True)
    if domains is not None and not isinstance(domains, Mapping):
        raise TypeError(
            f"The 'domains' argument of {FUNC} must be None or a dict of family -> (low, high). "
            f"Got {type(domains).__name__}."
        )
    paths = conditions_of(tree)
    if not paths:
        raise ValueError(f"The tree passed to {FUNC} holds no profiles (no node with a 'set' dim).")
    nodes = {
        path: _compare_condition(tree[path].to_dataset(), path, dict(domains or {}), rtol, atol)
        for path in paths
    }
    return xr.DataTree.from_dict(nodes)
