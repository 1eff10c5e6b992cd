"""Static Altair charts of a profile tree: one panel per family, bands and crossings.

Builders return charts and never display them, so users can restyle, compose
and save them (``chart.save("profiles.svg")`` renders offline with vl-convert).
Labels are drawn cut to :data:`LABEL_WIDTH` characters (the data and the
tooltips keep them whole), and ``save("x.html")`` / ``to_html()`` embed the spec
so that no label can end its ``<script>``. In a notebook a chart shows as an SVG
drawn in the kernel, so it needs no network (Altair's HTML would fetch Vega).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import altair as alt
import numpy as np

from ..core import ScriptSafeEncoder, display_labels, shorten
from ..pipeline import Curves, conditions_of, curves
from ._constants import PALETTE

if TYPE_CHECKING:
    import xarray as xr

#: Characters of a set label drawn in legends and axes: renderers measure every
#: character, and a 30,000-character label would take tens of seconds to draw.
LABEL_WIDTH = 60

#: The sets' colours (:data:`._constants.PALETTE`, shared with the view).
SET_COLOURS = list(PALETTE)


def _script_safe_json(kwargs: dict[str, Any]) -> dict[str, Any]:
    json_kwds = dict(kwargs.get("json_kwds") or {})
    json_kwds.setdefault("cls", ScriptSafeEncoder)
    return {**kwargs, "json_kwds": json_kwds}


class ProfileCharts(alt.ConcatChart):
    """The charts of :func:`plot_profiles`: an ``alt.ConcatChart`` whose HTML is safe.

    Altair writes the spec into its page's ``<script>`` with plain ``json.dumps``,
    so a label ``</script><script>…`` would run; ``save("x.html")`` and
    ``to_html()`` hand Altair an encoder that writes ``<``, ``>`` and ``&`` as
    ``\\u`` escapes, which are the same strings to the chart.
    """

    def to_html(self, *args: Any, inline: bool = True, **kwargs: Any) -> str:
        """Altair's page, with Vega inlined by default so that it draws offline."""
        options = {**_script_safe_json(kwargs), "inline": inline}
        return super().to_html(*args, **options)

    def save(self, fp, *args: Any, **kwargs: Any) -> None:
        super().save(fp, *args, **_script_safe_json(kwargs))

    def _repr_mimebundle_(self, *args: Any, **kwargs: Any):
        """An SVG drawn here with vl-convert (and a text line), under Altair's default
        renderers: their HTML loads Vega from a CDN when the front end has no Vega-Lite
        renderer of its own (JupyterLab 4.6 has none for Vega-Lite 6), so offline it
        shows "Error loading script". An SVG draws in JupyterLab, Notebook 7, VS Code
        and exported HTML with no network. A renderer the user enabled is obeyed, with
        the script-safe encoder for the HTML ones."""
        from altair.utils.display import HTMLRenderer

        name = alt.renderers.active
        if name in OFFLINE_RENDERERS:
            return self._svg_bundle()
        renderer = alt.renderers.get()
        if not isinstance(renderer, HTMLRenderer):
            return super()._repr_mimebundle_(*args, **kwargs)
        safe = _script_safe_json({"json_kwds": renderer.kwargs.get("json_kwds")})
        return renderer(self.to_dict(context={"pre_transform": False}), **safe)

    def _svg_bundle(self) -> dict[str, str]:
        import vl_convert

        spec = self.to_dict()
        title = spec.get("title", {})
        text = title.get("text", "") if isinstance(title, dict) else str(title)
        panels = len(spec.get("concat", []))
        return {
            # vl-convert writes every label as SVG text, escaped: no markup gets through.
            "image/svg+xml": vl_convert.vegalite_to_svg(spec),
            "text/plain": f"<ProfileCharts: {text} ({panels} panels)>",
        }


#: Altair's renderers that would load Vega from a CDN (its default is "html" in
#: Altair 6): under them a chart is shown as an SVG instead.
OFFLINE_RENDERERS = frozenset({"default", "html"})


def _palette(labels: list[str]) -> dict:
    colours = SET_COLOURS if len(labels) <= len(SET_COLOURS) else None
    scale = (
        alt.Scale(domain=labels, range=colours)
        if colours
        else alt.Scale(domain=labels, scheme="tableau20")
    )
    return {"scale": scale, "legend": alt.Legend(title="set")}


def _curve_frame(got: Curves, labels: list[str], shown: dict[str, str]):
    """Tidy rows of one family: set, its drawn name, x, value, and the band."""
    import pandas as pd

    grid = got.grid
    keep = np.isfinite(grid) & ((grid > 0) if got.family.axis == "log" else True)
    rows = []
    for k, label in enumerate(labels):
        frame = pd.DataFrame(
            {"set": label, "shown": shown[label], "x": grid[keep], "value": got.values[k][keep]}
        )
        if got.lower is not None and got.upper is not None:
            frame["lower"] = got.lower[k][keep]
            frame["upper"] = got.upper[k][keep]
        rows.append(frame)
    return pd.concat(rows, ignore_index=True), int((~keep).sum())


def _crossing_frame(comparison, family: str):
    import pandas as pd

    res = comparison
    rows = []
    labels = [str(s) for s in res.set_a.values]
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            locs = res.crossings.sel(set_a=a, set_b=b, family=family).values
            rows += [{"x": float(x), "pair": f"{a} × {b}"} for x in locs if np.isfinite(x)]
    return pd.DataFrame(rows, columns=["x", "pair"])


def _family_chart(
    got: Curves, labels: list[str], comparison, colour: dict, title_suffix: str, shown: dict
):
    fam = got.family
    family = fam.name
    assert fam.parameter is not None  # scale-free families are drawn by _scalefree_chart
    data, hidden = _curve_frame(got, labels, shown)
    axis_title = fam.display()["axis_title"]
    scale = alt.Scale(type="log") if fam.axis == "log" else alt.Scale(zero=False)
    x = alt.X("x:Q", title=axis_title + (" (log)" if fam.axis == "log" else ""), scale=scale)
    base = alt.Chart(data)
    layers = []
    if "lower" in data:
        band_colour = alt.Color("shown:N", scale=colour["scale"], legend=None)
        layers.append(
            base.mark_area(opacity=0.18).encode(x=x, y="lower:Q", y2="upper:Q", color=band_colour)
        )
    layers.append(
        base.mark_line(interpolate="step-after" if fam.rule.step else "linear").encode(
            x=x,
            y=alt.Y("value:Q", title=fam.long_name),
            color=alt.Color("shown:N", **colour),
            tooltip=["set:N", alt.Tooltip("x:Q", title=fam.parameter), "value:Q"],
        )
    )
    crossings = _crossing_frame(comparison, family) if comparison is not None else None
    if crossings is not None and len(crossings):
        layers.append(
            alt.Chart(crossings)
            .mark_rule(strokeDash=[4, 3], color="#555")
            .encode(
                x=alt.X("x:Q", scale=scale),
                tooltip=["pair:N", alt.Tooltip("x:Q", title="crossing")],
            )
        )
    subtitle = [title_suffix]
    if hidden:
        symbol = fam.display()["symbol"]
        subtitle.append(f"{hidden} grid point(s) off the log axis ({symbol} = 0 or ∞) not drawn")
    return alt.layer(*layers).properties(
        title=alt.TitleParams(fam.long_name, subtitle=subtitle), width=260, height=180
    )


def _scalefree_chart(got: Curves, labels: list[str], colour: dict, title_suffix: str, shown: dict):
    import pandas as pd

    data = pd.DataFrame(
        {"set": labels, "shown": [shown[s] for s in labels], "value": got.values[:, 0]}
    )
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y("shown:N", title=None, sort=None),
            x=alt.X("value:Q", title=got.family.long_name),
            color=alt.Color("shown:N", **colour),
            tooltip=["set:N", "value:Q"],
        )
        .properties(
            title=alt.TitleParams(got.family.long_name, subtitle=title_suffix),
            width=260,
            height=18 * len(data),
        )
    )


def plot_profiles(
    tree: xr.DataTree,
    condition: str | None = None,
    *,
    crossings: bool = True,
    comparison: xr.DataTree | None = None,
) -> alt.ConcatChart:
    """One chart per family of a condition, each set a coloured curve.

    Parameters
    ----------
    tree : xarray.DataTree
        A result of :func:`profiles`.
    condition : str, optional
        Which condition path; the first one by default.
    crossings : bool, default True
        Mark the crossing parameters found by :func:`compare` as dashed rules.
    comparison : xarray.DataTree, optional
        The result of :func:`compare` on ``tree``, when the caller has it already (a
        report or display compares once and hands it to the chart and the summary);
        computed here otherwise.

    Returns
    -------
    ProfileCharts
        An ``altair.ConcatChart`` whose ``save("x.html")`` no label can break out of:
        curves with their bands (bootstrap bands, or Circles' certified bounds),
        titled with the family and the condition; scale-free families as bars.
        Labels longer than :data:`LABEL_WIDTH` are drawn cut, whole in the tooltips.

    Examples
    --------
    >>> import diversity_profiles as dp
    >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
    ...                    representation="line", distance="euclidean",
    ...                    families=["circles", "richness"])
    >>> chart = plot_profiles(tree)
    >>> [panel["title"]["text"] for panel in chart.to_dict()["concat"]]
    ['number of circles', 'richness (distinct items)']
    >>> chart.save("profiles.svg")  # doctest: +SKIP
    """
    from ..comparison import compare

    path = condition or conditions_of(tree)[0]
    ds = tree[path].to_dataset()
    labels = [str(s) for s in ds["set"].values]
    shown = dict(zip(labels, display_labels(labels, LABEL_WIDTH), strict=True))
    colour = _palette(list(shown.values()))
    res = None
    if crossings and len(labels) > 1:
        res = (compare(tree) if comparison is None else comparison)[path].to_dataset()
    # Names from a file can be any length too: drawn cut, like labels.
    suffix = shorten(f"{ds.attrs.get('representation')} / {ds.attrs.get('distance')}", 120)
    charts = []
    for got in curves(ds).values():
        if got.family.parameter is None:
            charts.append(_scalefree_chart(got, labels, colour, suffix, shown))
        else:
            charts.append(_family_chart(got, labels, res, colour, suffix, shown))
    return ProfileCharts(concat=charts, columns=2).properties(
        title=alt.TitleParams(f"Diversity profiles — {shorten(path, 120)}", anchor="start")
    )
