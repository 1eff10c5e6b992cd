"""Static charts: what they draw, how they are labelled, and that labels stay text."""

import json

import numpy as np
import pytest
import vl_convert as vlc

import diversity_profiles as dp
from diversity_profiles.display._constants import PALETTE

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def tree():
    rng = np.random.default_rng(0)
    sets = {"wide": rng.standard_normal((40, 4)), XSS: 0.4 * rng.standard_normal((30, 4))}
    return dp.profiles(sets, representation="toy", distance="euclidean", n_points=12, n_boot=20)


def layers_of(spec):
    return [c for c in spec["concat"]]


def test_one_panel_per_family_with_titles_axes_and_bands(tree):
    spec = tree.dp.plot().to_dict()
    panels = layers_of(spec)
    titles = [p["title"]["text"] for p in panels]
    assert titles == [
        "Vendi score",
        "magnitude",
        "number of circles",
        "energy",
        "average pairwise distance",
        "richness (distinct items)",
    ]
    assert all("toy / euclidean" in p["title"]["subtitle"] for p in panels)
    vendi = panels[0]
    marks = [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        for layer in vendi["layer"]
    ]
    assert marks[:2] == ["area", "line"]  # bootstrap band under the curve
    x = vendi["layer"][1]["encoding"]["x"]
    assert x["title"] == "order q (log)" and x["scale"]["type"] == "log"
    circles = panels[2]
    assert circles["layer"][1]["mark"]["interpolate"] == "step-after"  # a step function
    assert circles["layer"][1]["encoding"]["x"]["title"] == "threshold τ"


def test_colour_blind_safe_palette_and_crossing_rules(tree):
    spec = tree.dp.plot().to_dict()
    text = json.dumps(spec)
    assert PALETTE[0] in text and PALETTE[1] in text  # the explorer's colours
    res = tree.dp.compare()["toy/euclidean"]
    crossing_families = [
        str(f) for f in res.family.values if int(res.n_crossings.sel(family=f).max()) > 0
    ]
    for panel, family in zip(
        layers_of(spec)[:4], ["vendi", "magnitude", "circles", "energy"], strict=True
    ):
        has_rule = any(
            layer["mark"] == "rule"
            or (isinstance(layer["mark"], dict) and layer["mark"]["type"] == "rule")
            for layer in panel["layer"]
        )
        assert has_rule == (family in crossing_families)


def test_svg_renders_offline_and_keeps_labels_as_text(tree):
    svg = vlc.vegalite_to_svg(tree.dp.plot().to_dict())
    assert svg.count("<path") > 10  # curves and bands are drawn
    assert "<img" not in svg  # the hostile label is text, not markup
    assert "&lt;img src=x onerror=alert(1)&gt;" in svg
    assert "Diversity profiles — toy/euclidean" in svg


@pytest.mark.parametrize("renderer", ["default", "html"])
def test_notebook_display_is_an_offline_svg_with_labels_as_text(tree, renderer):
    import re

    import altair as alt

    with alt.renderers.enable(renderer):  # Altair's HTML here would fetch Vega from a CDN
        bundle = tree.dp.plot()._repr_mimebundle_()
    if isinstance(bundle, tuple):
        bundle = bundle[0]
    assert set(bundle) == {"image/svg+xml", "text/plain"}
    text = json.dumps(bundle)
    assert "<script" not in text and "cdn." not in text
    # The only URLs are XML namespaces, none a script to load.
    assert set(re.findall(r"https?://[^\s\"'<>]+", bundle["image/svg+xml"])) <= {
        "http://www.w3.org/2000/svg",
        "http://www.w3.org/1999/xlink",
    }
    svg = bundle["image/svg+xml"]
    assert "<img" not in svg and "&lt;img src=x onerror=alert(1)&gt;" in svg
    assert ">wide<" in svg and svg.count("<path") > 10
    assert "Diversity profiles" in bundle["text/plain"]


def test_to_html_inlines_vega_so_it_draws_offline(tree):
    page = tree.dp.plot().to_html()
    assert "cdn.jsdelivr" not in page and "vegaEmbed" in page
