"""``tree.dp``: what users do next with a profile tree.

A thin facade (like xarray's own accessors) that nothing else in the package
imports: ``__init__`` only stores the tree, and every method forwards to the module
that does the work. The tree-layout helpers live in :mod:`.layout`; their names
stay importable from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import xarray as xr

from .pipeline import band_of, comparison_paths, conditions_of, tidy

if TYPE_CHECKING:
    from pathlib import Path

    import altair as alt
    import pandas as pd

    from .display import ProfileExplorer
    from .pipeline import Profiler

__all__ = ["DiversityProfilesAccessor", "band_of", "comparison_paths", "conditions_of", "tidy"]


@xr.register_datatree_accessor("dp")
class DiversityProfilesAccessor:
    """Diversity-profile helpers on an ``xarray.DataTree`` made by :func:`profiles`."""

    def __init__(self, tree: xr.DataTree) -> None:
        self._tree = tree

    @property
    def conditions(self) -> list[str]:
        """Condition paths in the tree, e.g. ``["minilm/cosine"]``.

        Examples
        --------
        >>> import diversity_profiles as dp
        >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
        ...                    representation="line", distance="euclidean",
        ...                    families=["richness", "average_distance"])
        >>> tree.dp.conditions
        ['line/euclidean']
        """
        return conditions_of(self._tree)

    @property
    def sets(self) -> list[str]:
        """Set labels (shared by every condition).

        Examples
        --------
        >>> import diversity_profiles as dp
        >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
        ...                    representation="line", distance="euclidean",
        ...                    families=["richness", "average_distance"])
        >>> tree.dp.sets
        ['A', 'B']
        """
        first = self.conditions[0]
        return [str(s) for s in self._tree[first].dataset["set"].values]

    def families(self, condition: str | None = None) -> list[str]:
        """Families computed under ``condition`` (the first one by default).

        Examples
        --------
        >>> import diversity_profiles as dp
        >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
        ...                    representation="line", distance="euclidean",
        ...                    families=["richness", "average_distance"])
        >>> tree.dp.families()
        ['richness', 'average_distance']
        """
        path = condition or self.conditions[0]
        return self._tree[path].attrs["families"].split(", ")

    def to_dataframe(self, condition: str | None = None) -> pd.DataFrame:
        """A tidy ``pandas.DataFrame`` of every curve, ready for plotting.

        Examples
        --------
        >>> import diversity_profiles as dp
        >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
        ...                    representation="line", distance="euclidean",
        ...                    families=["richness", "average_distance"])
        >>> df = tree.dp.to_dataframe()
        >>> sorted(df["family"].unique())
        ['average_distance', 'richness']
        """
        return tidy(self._tree, condition)

    def compare(self, **kwargs) -> xr.DataTree:
        """Verdicts for every pair of sets: see :func:`diversity_profiles.compare`.

        Examples
        --------
        >>> import diversity_profiles as dp
        >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
        ...                    representation="line", distance="euclidean",
        ...                    families=["richness", "average_distance"])
        >>> res = tree.dp.compare()["line/euclidean"]
        >>> res.verdict.sel(set_a="A", set_b="B", family="richness").item()
        'dominates'
        """
        from .comparison import compare

        return compare(self._tree, **kwargs)

    def plot(self, condition: str | None = None, *, crossings: bool = True) -> alt.ConcatChart:
        """Altair charts of every family (``display.plot_profiles``).

        Examples
        --------
        >>> import diversity_profiles as dp
        >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
        ...                    representation="line", distance="euclidean",
        ...                    families=["richness", "average_distance"])
        >>> chart = tree.dp.plot()
        >>> type(chart).__name__
        'ProfileCharts'
        """
        from .display import plot_profiles

        return plot_profiles(self._tree, condition, crossings=crossings)

    def explore(
        self,
        condition: str | None = None,
        profiler: Profiler | None = None,
        permutation: xr.DataTree | None = None,
    ) -> ProfileExplorer:
        """The interactive explorer widget for a condition (the first by default).

        Pass the :class:`~diversity_profiles.Profiler` behind the tree to extend grids,
        and ``permutation=dp.permutation_test(tree, profiler)`` to draw, for two
        highlighted sets, their difference against its chance envelope. Shown as the
        last expression of a notebook cell, it draws itself; see
        :class:`~diversity_profiles.ProfileExplorer`.

        Examples
        --------
        >>> import diversity_profiles as dp
        >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
        ...                    representation="line", distance="euclidean",
        ...                    families=["richness", "average_distance"])
        >>> explorer = tree.dp.explore()
        >>> explorer.condition
        'line/euclidean'
        """
        from .display import ProfileExplorer

        return ProfileExplorer(self._tree, condition, profiler=profiler, permutation=permutation)

    def report(self, path, **kwargs) -> Path:
        """A self-contained offline HTML report (see :func:`diversity_profiles.report`).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> import diversity_profiles as dp
        >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
        ...                    representation="line", distance="euclidean",
        ...                    families=["richness", "average_distance"])
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> tree.dp.report(folder / "report.html").name
        'report.html'
        """
        from .display import report

        return report(self._tree, path, **kwargs)

    def summary(self, *, markdown: bool = True, **kwargs) -> str:
        """Markdown conclusions with their conditions.

        Compares first if needed, with ``kwargs`` passed to
        :func:`~diversity_profiles.compare`; ``markdown=False`` writes labels as they
        are, for a terminal or a page that escapes text itself.

        Examples
        --------
        >>> import diversity_profiles as dp
        >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
        ...                    representation="line", distance="euclidean",
        ...                    families=["richness", "average_distance"])
        >>> text = tree.dp.summary(markdown=False)
        >>> "richness" in text
        True
        """
        from .comparison import summary

        tree = self._tree if comparison_paths(self._tree) else self.compare(**kwargs)
        return summary(tree, markdown=markdown)
