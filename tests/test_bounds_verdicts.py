"""Verdicts respect the bounds of large-n values (verdict.py, step 7; issue 12).

A family whose values are certified bounds or estimates ± error dominates another set
only where the bounds separate; a crossing is reported only where they separate on both
sides; otherwise the verdict is "bounds overlap" — in compare, the summary, the report
and the explorer alike. Exact values keep today's verdicts (tests/test_verdict_js.py
pins point bands to the margin rule).
"""

from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from playwright.sync_api import sync_playwright

import diversity_profiles as dp
from diversity_profiles._accessor import conditions_of
from diversity_profiles.comparison._summary import summary
from diversity_profiles.display._explorer import ProfileExplorer

from .browser import (
    CHROMIUM,
    LAUNCH_ARGS,
    block_outside,
    serve,
    settled,
    view_summary_lines,
    write_page,
)

BUNDLE = Path(dp.__file__).parent / "static" / "widget.js"
T = np.geomspace(0.1, 10.0, 41)  # magnitude's scale t, a log axis; ln t is symmetric about 0


def _tree(a, b, half_width=None, method="estimate ± error", error_only=False):
    """A condition with magnitude curves a (set A) and b (set B), and bounds value ± the
    half width when given (as the large-n methods store them)."""
    values = np.stack([a, b])
    attrs = {"family": "magnitude", "axis_scale": "log"}
    data = {"n_samples": ("set", [300, 300])}
    if half_width is not None:
        attrs["method"] = method
        err = np.full(values.shape, float(half_width))
        if error_only:
            data["magnitude_error"] = (("set", "t"), err, {**attrs, "role": "error"})
        else:
            data["magnitude_lower"] = (("set", "t"), values - err, {**attrs, "role": "lower"})
            data["magnitude_upper"] = (("set", "t"), values + err, {**attrs, "role": "upper"})
    data["magnitude"] = (("set", "t"), values, attrs)
    ds = xr.Dataset(
        data,
        coords={"set": ["A", "B"], "t": T},
        attrs={"representation": "toy", "distance": "euclidean"},
    )
    return xr.DataTree.from_dict({"toy/euclidean": ds})


def _verdict(tree, a="A", b="B", family="magnitude", **kwargs):
    res = dp.compare(tree, **kwargs)["toy/euclidean"]
    return res, str(res.verdict.sel(set_a=a, set_b=b, family=family).values)


# A leads B by 1 everywhere (at most 20: the 1% margin is at most 0.2).
AHEAD = (10 + T, 9 + T)


def test_exact_curves_dominate_but_wide_bounds_overlap():
    assert _verdict(_tree(*AHEAD))[1] == "dominates"  # exact: today's rule
    # ± 0.8: lower_A - upper_B = -0.6 < 0, so A is never surely ahead; B possibly is
    # (upper_B - lower_A = 0.6 > margin) — the bounds cannot order them.
    res, verdict = _verdict(_tree(*AHEAD, half_width=0.8))
    assert verdict == "bounds overlap"
    assert str(res.verdict.sel(set_a="B", set_b="A", family="magnitude").values) == verdict
    assert str(res.verdict_plain.sel(set_a="A", set_b="B", family="magnitude").values) == verdict
    assert str(res.agreement.sel(set_a="A", set_b="B").values) == "bounds overlap"
    assert res.attrs["method_magnitude"] == "estimate ± error"
    assert float(res.share_ahead.sel(set_a="A", set_b="B", family="magnitude")) == 0.0
    # The same from the error alone (value ± error), and for certified bounds.
    assert _verdict(_tree(*AHEAD, half_width=0.8, error_only=True))[1] == "bounds overlap"
    assert _verdict(_tree(*AHEAD, 0.8, method="certified bounds"))[1] == "bounds overlap"
    # Without a method attribute the bounds are a drawn band, not the verdict's business.
    assert _verdict(_tree(*AHEAD, 0.8, method="exact"))[1] == "dominates"


def test_separated_bounds_dominate():
    # ± 0.3: lower_A - upper_B = 0.4 > every margin (<= 0.2) on the whole domain.
    res, verdict = _verdict(_tree(*AHEAD, half_width=0.3))
    assert verdict == "dominates"
    assert str(res.verdict.sel(set_a="B", set_b="A", family="magnitude").values) == "dominated"
    assert float(res.share_ahead.sel(set_a="A", set_b="B", family="magnitude")) == 1.0
    assert np.isnan(float(res.minor_lead.sel(set_a="A", set_b="B", family="magnitude")))
    # Tied needs every difference the bounds allow (up to 1.6) within the margin: 20% of
    # the values (>= 2) is; 10% (1.0 at t = 0.1) is not, and the bounds cannot tell.
    assert _verdict(_tree(*AHEAD, half_width=0.3), margins=0.2)[1] == "tied"
    assert _verdict(_tree(*AHEAD, half_width=0.3), margins=0.1)[1] == "bounds overlap"


def test_a_crossing_needs_the_bands_to_separate_on_both_sides():
    a, b = 15 + 3 * np.log(T), 15 - 3 * np.log(T)  # cross at t = 1
    assert _verdict(_tree(a, b))[1] == "crosses"
    # ± 0.5: separated for |6 ln t| > 1 + margin; the overlap is symmetric about ln t = 0,
    # so the crossing is reported at its middle, t = 1.
    res, verdict = _verdict(_tree(a, b, half_width=0.5))
    assert verdict == "crosses"
    where = res.crossings.sel(set_a="A", set_b="B", family="magnitude").values
    assert where[~np.isnan(where)] == pytest.approx([1.0], rel=1e-9)
    # ± 5: separated only for |ln t| > ~1.7 (13% of ln t's range on each side): still a
    # crossing, located in the overlap between.
    res, verdict = _verdict(_tree(a, b, half_width=5.0))
    assert verdict == "crosses"
    assert res.crossings.sel(set_a="A", set_b="B", family="magnitude", crossing=0) == (
        pytest.approx(1.0, rel=1e-9)
    )
    # ± 10: 20 > 6 |ln t| everywhere, the bands never separate.
    assert _verdict(_tree(a, b, half_width=10.0))[1] == "bounds overlap"
    # B surely ahead on ln t < -1.1 only (25% of the domain), A possibly ahead elsewhere.
    res, verdict = _verdict(_tree(np.minimum(a, 15.0), 15 + 0 * T, half_width=1.6))
    assert verdict == "bounds overlap"


def test_summary_names_the_overlap_and_the_methods():
    a, b = AHEAD
    text = summary(dp.compare(_tree(a, b, half_width=0.8)))
    assert "A vs B: bounds overlap in magnitude" in text
    assert "Values known within bounds (estimate ± error: magnitude)" in text
    assert "A ≻ B" not in text
    text = summary(dp.compare(_tree(a, b, half_width=0.3)))
    assert "A ≻ B on every family" in text


# --- a real large-path tree ----------------------------------------------------------------


@pytest.fixture(scope="module")
def large_tree():
    """Three sets of n = 300 through the large-n methods: a wide cloud, a narrower one, and
    another draw of the wide one. Circles takes no half-samples on its large-n method here,
    as above 6,000 samples per set, so one family has no sampling uncertainty."""
    from dataclasses import replace

    from diversity_profiles.pipeline import _registry

    rng = np.random.default_rng(0)
    unbanded = replace(_registry.FAMILIES["circles"], half_samples_when_large=0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(_registry.FAMILIES, "circles", unbanded)
        return dp.profiles(
            {
                "wide": rng.standard_normal((300, 8)),
                "narrow": 0.7 * rng.standard_normal((300, 8)),
                "wide again": rng.standard_normal((300, 8)),
            },
            representation="gauss",
            distance="euclidean",
            method="large",
            n_points=12,
        )


LABELS = ["wide", "narrow", "wide again"]


def _bounds(ds, family):
    lower = "circles" if family == "circles" else f"{family}_lower"
    return ds[lower].values, ds[f"{family}_upper"].values


def test_large_tree_verdicts_hold_only_where_the_bounds_separate(large_tree):
    (path,) = conditions_of(large_tree)
    ds = large_tree[path].to_dataset()
    res = dp.compare(large_tree)[path]
    seen = set()
    for family in ("vendi", "magnitude", "circles", "energy"):
        assert ds[family].attrs["method"] in ("certified bounds", "estimate ± error")
        lo, hi = _bounds(ds, family)
        for i, a in enumerate(LABELS):
            for j, b in enumerate(LABELS):
                if i == j:
                    continue
                verdict = str(res.verdict.sel(set_a=a, set_b=b, family=family).values)
                seen.add(verdict)
                surely_ahead = lo[i] > hi[j]
                overlap = (lo[i] <= hi[j]) & (lo[j] <= hi[i])
                values = ds[family].values
                margin = (
                    np.full(lo[i].shape, 3.0)  # 1% of n = 300 samples
                    if family == "circles"
                    else 0.01 * np.maximum(abs(values[i]), abs(values[j]))
                )
                if verdict == "dominates":
                    # Surely ahead beyond the margin somewhere; B possibly ahead beyond it
                    # at no more than one grid point of the 12.
                    assert (lo[i] - hi[j] > margin).any(), (family, a, b)
                    assert (hi[j] - lo[i] > margin).sum() <= 1, (family, a, b)
                if verdict == "bounds overlap":
                    assert overlap.any(), (family, a, b)
                if verdict == "crosses":
                    assert surely_ahead.any() and (hi[i] < lo[j]).any(), (family, a, b)
    # The data make both kinds of answer: orders the bounds settle, and ones they cannot.
    assert {"dominates", "bounds overlap"} <= seen, seen
    # Exact values on the same curves (the method attributes dropped) order more pairs.
    stripped = large_tree.copy(deep=True)
    node = stripped[path].to_dataset()
    for family in ("vendi", "magnitude", "circles", "energy"):
        node[family].attrs.pop("method")
    stripped[path] = xr.DataTree(node)
    exact = dp.compare(stripped)[path]
    assert "bounds overlap" not in set(exact.verdict.values.ravel().tolist())
    assert "bounds overlap" in set(res.verdict.values.ravel().tolist())
    text = summary(dp.compare(large_tree))
    assert "bounds overlap in" in text
    assert "a verdict there holds only where the bounds separate" in text


def _matrices(pg, root=""):
    return pg.evaluate(
        """(root) => Object.fromEntries([...document.querySelectorAll(root + ' section')]
        .map((s) => [s.dataset.family, [...s.querySelectorAll('table tr')].slice(1).map((row) =>
            [...row.querySelectorAll('td')].map((td) => td.dataset.point ?? null))]))""",
        root,
    )


def _expected(res):
    return {
        family: [
            [
                None  # one triangle: each pair once, in its row
                if LABELS.index(b) <= LABELS.index(a)
                else str(res.verdict.sel(set_a=a, set_b=b, family=family).values)
                for b in LABELS
            ]
            for a in LABELS
        ]
        for family in res.family.values.tolist()
    }


def test_large_tree_in_the_explorer_and_the_report(large_tree, tmp_path):
    path = "gauss/euclidean"
    full = dp.compare(large_tree)[path]
    tau = large_tree[path].tau.values
    narrowed = dp.compare(large_tree, domains={"circles": (tau[4], tau[-1])})[path]
    assert "bounds overlap" in set(full.verdict.values.ravel().tolist())
    spec = ProfileExplorer(large_tree).spec
    methods = {f["name"]: f.get("method") for f in spec["families"]}
    assert methods["vendi"] == "estimate ± error" and methods["energy"] == "certified bounds"
    assert all(
        f["bounds_lower"] is not None
        for f in spec["families"]
        if f["name"] != "richness" and methods[f["name"]] != "exact"
    )
    write_page(tmp_path, BUNDLE, ProfileExplorer(large_tree).get_state())
    report = dp.report(large_tree, tmp_path / "report.html")
    with serve(tmp_path) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_page()
        blocked = block_outside(page, url)
        page.goto(f"{url}/index.html")
        page.wait_for_function("window.__ready === true")
        page.wait_for_selector("section[data-family=vendi] table td[data-verdict]")
        assert _matrices(page) == _expected(full)
        # A family without sampling uncertainty on its large-n method (magnitude, Circles):
        # its bounds-overlap cells say "no uncertainty" (–); Gaussian Vendi has subsample
        # bands there, so its cells carry a finding.
        cell = page.locator(
            'section:not([data-family=vendi]) td[data-point="bounds overlap"]'
        ).first
        assert cell.inner_text() == "–" and cell.get_attribute("data-verdict") == "no uncertainty"
        assert "values are" in cell.get_attribute("title")
        vendi = page.locator('section[data-family=vendi] td[data-verdict]').first
        assert vendi.get_attribute("data-verdict") != "no uncertainty"
        # The headline's table names the family whose bounds leave pairs open; the pairs'
        # detail (folded) says it pair by pair.
        shown = page.locator(".dp-summary").inner_text()
        assert "Vendi score (bounds overlap)" in shown, shown
        assert "Values known within bounds (estimate ± error: Vendi score" in shown
        assert "bounds overlap in Vendi score" in "\n".join(view_summary_lines(page))
        # Narrow Circles' domain from the keyboard: the view recomputes with the bounds.
        lower = page.locator("section[data-family=circles] input[type=range]").first
        lower.focus()
        for _ in range(4):
            page.keyboard.press("ArrowRight")
        settled(page)
        assert _matrices(page) == _expected(narrowed)
        assert blocked == []
        # The report: the same explorer offline, and the summary in its text.
        page.goto(f"{url}/{report.name}")
        page.wait_for_function("window.__dpReady === true")
        page.wait_for_selector("#explorer section[data-family=vendi] table td[data-verdict]")
        assert _matrices(page, "#explorer") == _expected(full)
        folded = page.locator("pre.dp-summary-text").text_content()  # in a closed <details>
        assert "bounds overlap in Vendi score" in folded
        browser.close()


def test_extending_a_large_family_keeps_its_bounds():
    rng = np.random.default_rng(0)
    sets = {"wide": rng.standard_normal((300, 8)), "narrow": 0.7 * rng.standard_normal((300, 8))}
    profiler = dp.Profiler(sets, representation="gauss", distance="euclidean")
    large_tree = profiler.profiles(method="large", n_points=12)
    explorer = ProfileExplorer(large_tree, profiler=profiler)
    explorer.extend("energy", "high", points=2)
    ds = explorer.tree["gauss/euclidean"].to_dataset()
    new = ds.s.values[-2:]
    assert ds.s.size == large_tree["gauss/euclidean"].s.size + 2
    lower = ds.energy_lower.sel(s=new).values
    upper = ds.energy_upper.sel(s=new).values
    value = ds.energy.sel(s=new).values
    assert np.isfinite(lower).all() and np.isfinite(upper).all()
    assert (lower <= value).all() and (value <= upper).all()
    fam = next(f for f in explorer.spec["families"] if f["name"] == "energy")
    assert fam["method"] == "certified bounds" and fam["bounds_upper"] is not None
