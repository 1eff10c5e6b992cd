"""Where things sit in a profile tree: condition nodes, comparison nodes, bands.

The low layer every display, report and storage module reads (none of them imports
the ``tree.dp`` accessor, which only forwards to them). It knows the tree's layout
and the registry (:mod:`.families`), nothing about plotting or widgets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ._registry import FAMILIES, Family

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr


def _paths_where(tree: xr.DataTree, holds: Callable[[xr.DataTree], bool]) -> list[str]:
    return [
        node.relative_to(tree) if node is not tree else "." for node in tree.subtree if holds(node)
    ]


def conditions_of(tree: xr.DataTree) -> list[str]:
    """Paths (``"representation/distance"``) of the nodes that hold profiles."""
    return _paths_where(tree, lambda node: "set" in node.dims and "representation" in node.attrs)


#: The child of a condition node where ``profiles(permutations=R)`` stores its permutation
#: test (a node like one of :func:`~diversity_profiles.permutation_test`'s).
PERMUTATION_NODE = "permutation"


def stored_permutation_tests(tree: xr.DataTree, paths: list[str]) -> dict[str, xr.Dataset]:
    """Condition path -> the permutation test stored as its :data:`PERMUTATION_NODE` child,
    for the ``paths`` that have one testing exactly the node's sets (a tree whose sets were
    selected or relabelled since keeps its test, but the test no longer applies)."""
    out = {}
    for path in paths:
        node = tree[path]
        child = node.children.get(PERMUTATION_NODE)
        if child is None or "p_holm" not in child.data_vars:
            continue
        test = child.to_dataset()
        sets = [str(s) for s in node.to_dataset()["set"].values]
        tested = [str(s) for s in test["set_a"].values] if "set_a" in test.coords else []
        if sorted(tested) == sorted(sets):
            out[path] = test
    return out


def comparison_paths(tree: xr.DataTree) -> list[str]:
    """Paths of the nodes that hold comparison results."""
    return _paths_where(tree, lambda node: "verdict" in node.data_vars)


def band_kind(ds: xr.Dataset, family: str) -> str | None:
    """Which band ``ds`` carries around ``family``: ``"bootstrap"`` (the pointwise
    bands of :func:`profiles` with ``n_boot``), ``"certified"`` (lower and upper
    bounds: the registry's ``bounds`` variables, or ``<family>_lower``/``_upper`` of
    a large-n method) or ``None``."""
    if f"{family}_ci_lower" in ds and f"{family}_ci_upper" in ds:
        return "bootstrap"
    fam = FAMILIES.get(family)
    if fam is not None and fam.bounds is not None and all(v in ds for v in fam.bounds):
        return "certified"
    if f"{family}_lower" in ds and f"{family}_upper" in ds:
        return "certified"
    return None


#: Per kind of stored replicate (the ``<family>_boot`` variable's ``kind``), the variable
#: holding each set's replicate size m. Large-n subsamples have their own: one condition
#: may hold both kinds (Vendi on its large-n method beside Circles' half-samples).
REPLICATE_SIZES = {"half-sample": "subsample_size", "subsample": "large_subsample_size"}


def replicate_sizes(ds: xr.Dataset, family: str) -> np.ndarray | None:
    """Each set's replicate size m of ``family``'s subsample replicates (float, shaped by
    set), which scale their spread to n (verdict rule, step 6); None for multiplier draws
    (no rescaling) or without replicates. A tree written before the large-n subsamples had
    their own sizes keeps them in ``subsample_size``."""
    boot = ds.get(f"{family}_boot")
    if boot is None:
        return None
    kind = boot.attrs.get("kind", "half-sample")
    if kind == "multiplier":
        return None
    name = REPLICATE_SIZES.get(kind, "subsample_size")
    name = name if name in ds else "subsample_size"
    return np.asarray(ds[name].values, dtype=np.float64) if name in ds else None


def brackets(ds: xr.Dataset, family: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The stored (lower, upper) bracket of each of ``family``'s values, as float64 arrays
    shaped like them: the registry's ``bounds`` variables, else ``<family>_lower``/
    ``<family>_upper``, else the value ± ``<family>_error``; None when none is stored (the
    values are exact). A NaN bound (a set computed exactly beside large-n ones) is the
    value itself."""
    return bracket_of(family, lambda name: ds[name].values if name in ds else None)


def bracket_of(
    family: str, stored: Callable[[str], object | None]
) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`brackets` from any store: ``stored(name)`` gives a variable's values, or None
    where it has none (a dataset, or one set's results while a grid is refined)."""
    values = np.asarray(stored(family), dtype=np.float64)
    fam = FAMILIES.get(family)
    names = fam.bounds if fam is not None and fam.bounds else (f"{family}_lower", f"{family}_upper")
    found = [stored(name) for name in names]
    error = stored(f"{family}_error")
    if all(v is not None for v in found):
        lo, hi = (np.asarray(v, dtype=np.float64).reshape(values.shape) for v in found)
    elif error is not None:
        err = np.abs(np.asarray(error, dtype=np.float64)).reshape(values.shape)
        lo, hi = values - err, values + err
    else:
        return None
    return np.where(np.isnan(lo), values, lo), np.where(np.isnan(hi), values, hi)


def band_of(ds: xr.Dataset, family: str) -> tuple[xr.DataArray | None, xr.DataArray | None]:
    """The band drawn around a family's curves (see :func:`band_kind`), else
    ``(None, None)``."""
    kind = band_kind(ds, family)
    if kind == "bootstrap":
        return ds[f"{family}_ci_lower"], ds[f"{family}_ci_upper"]
    if kind == "certified":
        fam = FAMILIES.get(family)
        if fam is not None and fam.bounds is not None and all(v in ds for v in fam.bounds):
            return ds[fam.bounds[0]], ds[fam.bounds[1]]
        return ds[f"{family}_lower"], ds[f"{family}_upper"]
    return None, None


@dataclass(frozen=True)
class Curves:
    """One family's curves in a condition, as plain float64 arrays.

    Scale-free families have a one-point grid (``[0.0]``), so every family reads the
    same way.
    """

    family: Family
    grid: np.ndarray  # (g,)
    values: np.ndarray  # (set, g)
    lower: np.ndarray | None  # (set, g): the band (see band_kind), if any
    upper: np.ndarray | None
    band: str | None  # "bootstrap", "certified" or None
    boot: np.ndarray | None  # (set, replicate, g): the bootstrap replicates, if any


def curves(ds: xr.Dataset) -> dict[str, Curves]:
    """family name -> :class:`Curves`, for the families of the registry present in ``ds``
    (a condition's Dataset), in registry order. The one reading of a condition that
    :func:`compare`, the explorer and the plots share."""
    out: dict[str, Curves] = {}
    n_sets = int(ds.sizes["set"])
    for name, fam in FAMILIES.items():
        if name not in ds.data_vars:
            continue
        grid = (
            np.asarray(ds[fam.parameter].values, dtype=np.float64) if fam.parameter else np.zeros(1)
        )
        shape = (n_sets, grid.size)
        values = np.asarray(ds[name].values, dtype=np.float64).reshape(shape)
        lo, hi = band_of(ds, name)
        boot = None
        if f"{name}_boot" in ds:
            raw = ds[f"{name}_boot"]
            boot = np.asarray(raw.values, dtype=np.float64).reshape(
                n_sets, int(raw.shape[1]), grid.size
            )
        out[name] = Curves(
            fam,
            grid,
            values,
            None if lo is None else np.asarray(lo.values, dtype=np.float64).reshape(shape),
            None if hi is None else np.asarray(hi.values, dtype=np.float64).reshape(shape),
            band_kind(ds, name),
            boot,
        )
    return out


def tidy(tree: xr.DataTree, condition: str | None = None) -> pd.DataFrame:
    """Long table: one row per (condition, family, set, parameter value).

    Columns: ``representation, distance, family, variable, set, parameter,
    value``. Scale-free families have ``parameter`` NaN and an empty parameter name.
    """
    import pandas as pd

    frames = []
    paths = conditions_of(tree) if condition is None else [condition]
    for path in paths:
        ds = tree[path].to_dataset()
        for name, var in ds.data_vars.items():
            family = var.attrs.get("family")
            if family is None:
                continue
            param_dims = [d for d in var.dims if d != "set"]
            frame = var.to_dataframe(name="value").reset_index()
            if param_dims:
                frame = frame.rename(columns={param_dims[0]: "parameter"})
                frame["parameter_name"] = param_dims[0]
            else:
                frame["parameter"] = np.nan
                frame["parameter_name"] = ""
            frame["family"] = family
            frame["variable"] = name
            frame["representation"] = ds.attrs["representation"]
            frame["distance"] = ds.attrs["distance"]
            frames.append(frame)
    columns = [
        "representation",
        "distance",
        "family",
        "variable",
        "set",
        "parameter_name",
        "parameter",
        "value",
    ]
    return pd.concat(frames, ignore_index=True)[columns]


def with_children(node, grown, parameter: str, drop: tuple[str, ...] = ()) -> xr.DataTree:
    """``grown`` (a condition's Dataset on a longer ``parameter`` grid) as a tree node that
    keeps ``node``'s children (explain's and convergence's nodes), their ``parameter`` axis
    reindexed to the new grid (NaN at the new points) so they stay aligned with it; the
    children named in ``drop`` (results that no longer hold on the new grid) go."""
    import xarray as xr

    nodes = {"/": grown}
    for sub in node.subtree:
        if sub is node or sub.relative_to(node).split("/")[0] in drop:
            continue
        own = sub.to_dataset(inherit=False)
        ds = sub.to_dataset(inherit=True)
        if parameter in ds.dims:
            ds = ds.reindex({parameter: grown[parameter].values})
        inherited = [c for c in ds.coords if c not in own.coords]
        nodes["/" + sub.relative_to(node)] = ds.drop_vars(inherited)
    return xr.DataTree.from_dict(nodes)
