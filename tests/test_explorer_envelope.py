"""The explorer draws a permutation test's chance envelope (issue #21, item 2).

``ProfileExplorer(tree, permutation=...)``, ``tree.dp.explore(permutation=...)`` and
``dp.report(..., permutation=...)`` take the DataTree of :func:`dp.permutation_test`; the
payload carries, per family with a parameter, the envelope of every unordered pair and its
Holm p-value, and the view, with two sets highlighted, draws the observed difference
against ±envelope. Checked here: the payload's values are the test's, every wrong argument
is refused with a message naming it and the fix, and (in Debian's Chromium) an offline
report draws the difference chart with its p-value, labels as text.
"""

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import xarray as xr
from playwright.sync_api import sync_playwright

import diversity_profiles as dp
from diversity_profiles.display._explorer import ProfileExplorer
from diversity_profiles.display._payload import permutation_nodes

from .browser import CHROMIUM, LAUNCH_ARGS, LOCAL_FILE, block_outside
from .conftest import XSS

PATH = "toy/euclidean"
FAMILIES = ["vendi", "energy", "average_distance"]
SCHEMA = json.loads(
    (
        Path(__file__).resolve().parents[1] / "src/diversity_profiles/explorer_traits.schema.json"
    ).read_text("utf-8")
)


@pytest.fixture(scope="module")
def tested():
    """Three sets of 30 (the second spread wider), three families, 12 points, 19 relabellings."""
    rng = np.random.default_rng(0)
    sets = {
        "A": rng.standard_normal((30, 3)),
        XSS: 2.0 * rng.standard_normal((30, 3)),
        "C": rng.standard_normal((30, 3)),
    }
    profiler = dp.Profiler(sets, representation="toy", distance="euclidean")
    tree = profiler.profiles(families=FAMILIES, n_points=12)
    return profiler, tree, dp.permutation_test(tree, profiler, n_permutations=19)


def _floats(curves) -> np.ndarray:
    return np.frombuffer(bytes(curves), dtype="<f8")


def test_the_payload_carries_each_pairs_envelope_and_holm_p_value(tested):
    _, tree, perm = tested
    test = perm[PATH].to_dataset()
    widget = ProfileExplorer(tree, permutation=perm)
    floats = _floats(widget.curves)
    sets = widget.spec["sets"]
    assert sets == ["A", XSS, "C"]
    by_name = {f["name"]: f for f in widget.spec["families"]}
    for name in ("vendi", "energy"):
        env = by_name[name]["envelope"]
        n = by_name[name]["n"]
        assert env["pairs"] == [[0, 1], [0, 2], [1, 2]]  # unordered pairs only, a < b
        rows = floats[env["offset"] : env["offset"] + 3 * n].reshape(3, n)
        for (a, b), row, p in zip(env["pairs"], rows, env["p_holm"], strict=True):
            want = test[f"envelope_{name}"].sel(set_a=sets[a], set_b=sets[b]).values
            np.testing.assert_array_equal(row, want)
            assert p == float(test.p_holm.sel(set_a=sets[a], set_b=sets[b], family=name))
    assert by_name["average_distance"]["envelope"] is None  # scale-free: no envelope
    assert widget.spec["permutation"] == {
        "n_permutations": 19,
        "level": 0.95,
        "holm": test.attrs["p_holm"],
    }
    traits = {name: getattr(widget, name) for name in SCHEMA["properties"]}
    jsonschema.Draft202012Validator(SCHEMA).validate(traits)
    # The accessor and the static paths carry the same; without a test, nothing changes.
    assert tree.dp.explore(permutation=perm).spec == widget.spec
    plain = ProfileExplorer(tree)
    assert all(f["envelope"] is None for f in plain.spec["families"])
    assert plain.spec["permutation"] is None and len(plain.curves) < len(widget.curves)
    bundle = widget._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    payload = data["application/vnd.diversity-profiles.explorer+json"]
    assert payload["conditions"][PATH]["spec"] == widget.spec
    # three sets, three pairs: the p-values are one paragraph after the headline
    assert (
        "Permutation test (19 relabellings per pair; exact p-values, Holm-adjusted over every "
        "pair and family): " in data["text/markdown"]
    )


def test_a_test_stored_by_profiles_is_drawn_without_passing_it(tested):
    """profiles(permutations=19) stores the same test (same seed, grids and sets) as the
    tree's ``permutation`` child: the explorer, compare and the payload read it from there,
    and extending a grid drops it (it tested the former grid)."""
    profiler, tree, perm = tested
    stored = profiler.profiles(families=FAMILIES, n_points=12, permutations=19)
    node = stored[f"{PATH}/permutation"].to_dataset()
    want = perm[PATH].to_dataset()
    for var in ("p_value", "p_holm", "statistic", "envelope_vendi", "envelope_energy"):
        np.testing.assert_array_equal(node[var].values, want[var].values)
    assert ProfileExplorer(stored).spec == ProfileExplorer(tree, permutation=perm).spec
    res = dp.compare(stored)[PATH]
    np.testing.assert_array_equal(
        res.p_holm.values, dp.compare(tree, permutation=perm)[PATH].p_holm.values
    )
    assert res.attrs["n_permutations"] == 19
    grown = profiler.extend(stored, "energy", points=2)
    assert "permutation" not in grown[PATH].children
    assert "p_holm" not in dp.compare(grown)[PATH]


def _renamed(perm, **changes) -> xr.DataTree:
    ds = perm[PATH].to_dataset()
    return xr.DataTree.from_dict({PATH: ds.assign_attrs(**changes)})


def test_a_wrong_permutation_argument_is_refused_with_the_fix(tested, tmp_path):
    profiler, tree, perm = tested
    test = perm[PATH].to_dataset()
    with pytest.raises(TypeError, match=r"'permutation' argument of ProfileExplorer takes"):
        ProfileExplorer(tree, permutation=test)  # the Dataset, not the tree
    with pytest.raises(ValueError, match=r"holds no permutation test .*dp.permutation_test"):
        tree.dp.explore(permutation=tree)
    with pytest.raises(ValueError, match=r"condition 'other/cosine', which this display"):
        ProfileExplorer(tree, permutation=_renamed(perm, condition="other/cosine"))
    relabelled = test.assign_coords(set_a=["A", "B", "C"], set_b=["A", "B", "C"])
    with pytest.raises(ValueError, match=r"tested the sets \['A', 'B', 'C'\].*rerun"):
        ProfileExplorer(tree, permutation=xr.DataTree.from_dict({PATH: relabelled}))
    coarse = profiler.profiles(families=FAMILIES, n_points=8)
    with pytest.raises(ValueError, match=r"another q grid for 'vendi' \(12 points\).*\(8 points"):
        ProfileExplorer(coarse, permutation=perm)
    bare = test.drop_vars(["envelope_vendi", "envelope_energy"])
    with pytest.raises(ValueError, match=r"holds no chance envelope"):
        ProfileExplorer(tree, permutation=xr.DataTree.from_dict({PATH: bare}))
    fewer = profiler.profiles(families=["vendi", "average_distance"], n_points=12)
    with pytest.raises(ValueError, match=r"tested 'energy', which the profiles"):
        ProfileExplorer(fewer, permutation=perm)
    path = tmp_path / "report.html"
    with pytest.raises(TypeError, match=r"'permutation' argument of report takes"):
        tree.dp.report(path, permutation="p.nc")
    assert not path.exists()  # refused before anything is written
    assert permutation_nodes(None, tree, [PATH], "report") == {}


def test_extending_a_tested_family_drops_only_its_envelope_and_says_so(tested):
    profiler, tree, perm = tested
    widget = ProfileExplorer(tree, profiler=profiler, permutation=perm)
    widget.extend("energy", "high", points=2)
    by_name = {f["name"]: f for f in widget.spec["families"]}
    assert by_name["energy"]["n"] == 14 and by_name["energy"]["envelope"] is None
    assert by_name["vendi"]["envelope"] is not None  # its grid is the test's still
    assert "rerun dp.permutation_test(explorer.tree, profiler)" in widget.status
    widget._repr_mimebundle_()  # the static paths accept the grown tree too


@pytest.mark.browser  # the module's other tests are unit tests
def test_two_highlighted_sets_show_their_difference_against_chance(tested, tmp_path):
    _, tree, perm = tested
    test = perm[PATH].to_dataset()
    path = dp.report(tree, tmp_path / "report.html", permutation=perm)
    p = float(test.p_holm.sel(set_a="A", set_b=XSS, family="vendi"))
    p_text = f"Permutation p-value (Holm): {float(f'{p:.2g}'):g}."
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_page()
        errors, dialogs = [], []
        outside = block_outside(page, LOCAL_FILE)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(path.as_uri())
        page.wait_for_function("window.__dpReady === true")
        vendi = "#explorer section[data-family=vendi]"
        page.wait_for_selector(f"{vendi} .dp-chart svg .mark-line path")
        figures = page.locator("#explorer .dp-difference")
        assert figures.count() == 2  # vendi and energy; none for the scale-free family
        assert page.locator("#explorer .dp-difference:visible").count() == 0  # none highlighted
        button = "#explorer .dp-sets button"
        page.locator(button).nth(0).click()
        assert page.locator("#explorer .dp-difference:visible").count() == 0  # one set
        page.locator(button).nth(1).click()
        figure = page.locator(f"{vendi} .dp-difference")
        page.wait_for_selector(f"{vendi} .dp-difference svg .mark-area path")
        page.wait_for_selector(f"{vendi} .dp-difference svg .mark-line path")
        assert figure.get_attribute("data-pair") == "0,1"
        title = figure.locator(".dp-difference-title").inner_text()
        # The hostile label is text in the title, never markup.
        assert title == (f"A − {XSS} (line) against what relabelling alone produces (shaded, 95%)")
        note = figure.locator(".dp-difference-p").inner_text()
        assert note.startswith(p_text) and "19 random relabellings" in note
        assert "no p-value is below 0.05 before the adjustment" in note
        assert float(figure.get_attribute("data-p-holm")) == p
        assert page.locator("#explorer .dp-difference:visible").count() == 2
        # q = 0 and q = inf are not drawn on the log axis; the rest all have an envelope.
        q = tree[PATH].q.values
        drawable = int(np.sum(np.isfinite(q) & (q > 0)))
        assert figure.get_attribute("data-points") == str(drawable)
        # The slider narrows the difference chart's domain too.
        page.locator(f"{vendi} input[type=range]").first.focus()
        page.keyboard.press("End")
        assert int(figure.get_attribute("data-points")) < drawable
        # A third set highlighted: no pair, no chart; then the other pair's.
        page.locator(button).nth(2).click()
        assert page.locator("#explorer .dp-difference:visible").count() == 0
        page.locator(button).nth(0).click()
        assert figure.get_attribute("data-pair") == "1,2"
        assert figure.locator(".dp-difference-title").inner_text().startswith(f"{XSS} − C ")
        assert page.locator("#explorer img").count() == 0
        # The report's own summary reports the p-values; its conditions table names the test
        # (both folded, in closed <details>: read as text).
        folded = page.locator("pre.dp-summary-text").text_content()
        assert "Permutation test (19 relabellings per pair" in folded
        assert "19 relabellings per pair" in page.locator("table.dp-condition").text_content()
        assert outside == [] and errors == [] and dialogs == []
        browser.close()
