"""Notebook display of profile and comparison trees (``%load_ext diversity_profiles``)."""

from __future__ import annotations

from ..pipeline import comparison_paths, conditions_of


def tree_mimebundle(tree, include=None, exclude=None) -> dict | tuple[dict, dict] | None:
    """Explorer view (with SVG/Markdown fallbacks) for profile trees, Markdown for comparisons.

    Returns None for any other DataTree so that xarray's own display is used.
    """
    if conditions_of(tree):
        explorer = tree.dp.explore()
        return explorer._repr_mimebundle_(include=include, exclude=exclude)
    if comparison_paths(tree):
        from ..comparison import summary

        text = summary(tree)
        return {"text/markdown": text, "text/plain": text}
    return None
