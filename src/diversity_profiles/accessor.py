"""``tree.dp``: what users do next with a profile tree.

Thin by design (like xarray's own accessors): ``__init__`` only stores the tree,
module-level functions do the work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

if TYPE_CHECKING:
    from pathlib import Path

    import altair as alt
    import pandas as pd

    from .explorer import ProfileExplorer


def _paths_where(tree: xr.DataTree, holds) -> list[str]:
    return [
        node.relative_to(tree) if node is not tree else "." for node in tree.subtree if holds(node)
    ]


def conditions_of(tree: xr.DataTree) -> list[str]:
    """Paths (``"representation/distance"``) of the nodes that hold profiles."""
    return _paths_where(tree, lambda node: "set" in node.dims and "representation" in node.attrs)


def band_of(ds: xr.Dataset, family: str) -> tuple[xr.DataArray | None, xr.DataArray | None]:
    """The band drawn around a family's curves: its bootstrap band if it has one, else
    its (lower, upper) bounds (Circles always; other families from the large-n methods),
    else ``(None, None)``."""
    if f"{family}_ci_lower" in ds:
        return ds[f"{family}_ci_lower"], ds[f"{family}_ci_upper"]
    if family == "circles" and "circles_upper" in ds:
        return ds["circles"], ds["circles_upper"]
    if f"{family}_lower" in ds and f"{family}_upper" in ds:
        return ds[f"{family}_lower"], ds[f"{family}_upper"]
    return None, None


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


def comparison_paths(tree: xr.DataTree) -> list[str]:
    """Paths of the nodes that hold comparison results."""
    return _paths_where(tree, lambda node: "verdict" in node.data_vars)


@xr.register_datatree_accessor("dp")
class DiversityProfilesAccessor:
    """Diversity-profile helpers on an ``xarray.DataTree`` made by :func:`profiles`."""

    def __init__(self, tree: xr.DataTree) -> None:
        self._tree = tree

    @property
    def conditions(self) -> list[str]:
        """Condition paths in the tree, e.g. ``["minilm/cosine"]``."""
        return conditions_of(self._tree)

    @property
    def sets(self) -> list[str]:
        """Set labels (shared by every condition)."""
        first = self.conditions[0]
        return [str(s) for s in self._tree[first].dataset["set"].values]

    def families(self, condition: str | None = None) -> list[str]:
        """Families computed under ``condition`` (the first one by default)."""
        path = condition or self.conditions[0]
        return self._tree[path].attrs["families"].split(", ")

    def to_dataframe(self, condition: str | None = None) -> pd.DataFrame:
        """A tidy ``pandas.DataFrame`` of every curve, ready for plotting."""
        return tidy(self._tree, condition)

    def compare(self, **kwargs) -> xr.DataTree:
        """Verdicts for every pair of sets: see :func:`diversity_profiles.compare`."""
        from .compare import compare

        return compare(self._tree, **kwargs)

    def plot(self, condition: str | None = None, *, crossings: bool = True) -> alt.ConcatChart:
        """Altair charts of every family: see :func:`diversity_profiles.plotting.plot_profiles`."""
        from .plotting import plot_profiles

        return plot_profiles(self._tree, condition, crossings=crossings)

    def explore(self, condition: str | None = None) -> ProfileExplorer:
        """The interactive explorer widget for a condition (the first by default)."""
        from .explorer import ProfileExplorer

        return ProfileExplorer(self._tree, condition)

    def report(self, path, **kwargs) -> Path:
        """A self-contained offline HTML report (see :func:`diversity_profiles.report`)."""
        from .html_report import report

        return report(self._tree, path, **kwargs)

    def summary(self, **kwargs) -> str:
        """Markdown conclusions with their conditions (compares first if needed)."""
        from .summary import summary

        tree = self._tree if comparison_paths(self._tree) else self.compare(**kwargs)
        return summary(tree)
