"""Everything a display of the explorer shows without a running widget, computed once.

A notebook display (:meth:`ProfileExplorer._repr_mimebundle_`) and an HTML report
(:func:`report`) both show a condition as a static chart (SVG, through vl-convert), a
summary of :func:`compare`, and the payload from which the explorer runs with no kernel
(``js/standalone.ts``). :func:`static_view` runs :func:`compare` once and derives all of
them from that one result, so the chart's crossings, the summary's verdicts and the
findings' z that the payload carries cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..comparison import compare, summary
from ..pipeline import conditions_of
from ._constants import MIME_TYPE
from ._payload import standalone_payload

if TYPE_CHECKING:
    import xarray as xr


@dataclass(frozen=True)
class StaticView:
    """The static outputs of one display of one condition (immutable by convention:
    ``payload`` is a plain JSON dict, handed to the front end as it is).

    Attributes
    ----------
    condition : str
        The condition drawn in the chart and shown first by the payload.
    svg : str
        The charts of :func:`plot_profiles`, with :func:`compare`'s crossings, as SVG.
    markdown : str
        :func:`summary` of the comparison, as Markdown (a notebook's fallback).
    text : str
        The same summary as plain text (the report shows it in a ``<pre>``).
    payload : dict
        :func:`standalone_payload`: what the explorer needs to run without a kernel.
    """

    condition: str
    svg: str
    markdown: str
    text: str
    payload: dict[str, Any]

    def fallbacks(self) -> dict[str, str]:
        """What front ends that run no widget JavaScript show (GitHub, nbviewer, PDF)."""
        return {"image/svg+xml": self.svg, "text/markdown": self.markdown}

    def mimebundle(self) -> dict[str, Any]:
        """The payload under :data:`MIME_TYPE` (drawn by the JupyterLab extension) and the
        fallbacks, in the order a display has always carried them."""
        return {MIME_TYPE: self.payload, **self.fallbacks()}


def static_view(
    tree: xr.DataTree,
    condition: str | None = None,
    *,
    conditions: list[str] | None = None,
    permutation: xr.DataTree | None = None,
) -> StaticView:
    """Run :func:`compare` on ``tree`` once and derive every static output from it.

    Parameters
    ----------
    tree : xarray.DataTree
        A result of :func:`profiles`.
    condition : str, optional
        The condition to draw (assumed to be one of the tree's: callers check it, with
        their own name in the message); the first one by default.
    conditions : list of str, optional
        The conditions the payload carries (its selector offers them); every condition of
        the tree by default.
    permutation : xarray.DataTree, optional
        A :func:`permutation_test` of ``tree`` (checked by the caller with
        :func:`~._payload.permutation_nodes`): the summary reports its p-values and the
        payload carries its chance envelopes.

    Returns
    -------
    StaticView
    """
    import vl_convert

    from ._plotting import plot_profiles

    paths = conditions_of(tree)
    condition = condition or paths[0]
    # once: the chart's crossings and the summary read it
    comparison = compare(tree, permutation=permutation)
    chart = plot_profiles(tree, condition, comparison=comparison)
    return StaticView(
        condition=condition,
        svg=vl_convert.vegalite_to_svg(chart.to_dict()),
        markdown=summary(comparison),
        text=summary(comparison, markdown=False),
        payload=standalone_payload(
            tree,
            paths if conditions is None else conditions,
            condition,
            comparison=comparison,
            permutation=permutation,
        ),
    )
