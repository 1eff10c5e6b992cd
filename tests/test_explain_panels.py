"""The "Why does it say that?" panels (issue 14) in Debian's Chromium, and their payload.

The witnesses a click shows are checked against references computed here from the
samples themselves (brute-force separation, a direct solve of Z_t w = 1, numpy's
eigendecomposition), hostile sample texts, set labels and category names stay text, and
the offline report draws the same panels with no request leaving the page.
"""

import json
import re
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import diversity_profiles as dp
from diversity_profiles.display._explain_view import MAX_MEMBERS, TOP, explanation_payload
from diversity_profiles.display._explorer import ProfileExplorer, standalone_payload

from .browser import block_outside, serve, write_page
from .conftest import XSS

BUNDLE = Path(dp.__file__).parent / "static" / "widget.js"
HOSTILE_TEXT = "<b>bold</b><script>alert(2)</script>"


def _dist(X):
    X = np.asarray(X, dtype=float)
    return np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))


@pytest.fixture(scope="module")
def sets():
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(4, 5)) * 4
    return {
        "A": centres[rng.integers(0, 4, 30)] + rng.normal(size=(30, 5)) * 0.5,
        XSS: centres[rng.integers(0, 2, 24)] + rng.normal(size=(24, 5)) * 0.5,
    }


@pytest.fixture(scope="module")
def explained(sets):
    tree = dp.profiles(sets, representation="x", distance="euclidean", n_points=10)
    texts = {
        "A": [f"text {i} {HOSTILE_TEXT}" for i in range(30)],
        XSS: [f"{XSS} {i}" for i in range(24)],
    }
    cats = {"A": np.where(np.arange(30) < 15, "left", XSS), XSS: ["one"] * 23 + ["solo"]}
    out = dp.explain(tree, sets, samples=texts, categories=cats, n_modes=3)
    conv = dp.convergence(sets, sizes=[5, 10, 24], like=tree, repeats=2, show_progress=False)
    out["x/euclidean/convergence"] = xr.DataTree(conv)
    return out


@pytest.fixture(scope="module")
def page(explained, browser, tmp_path_factory):
    folder = tmp_path_factory.mktemp("explain_page")
    write_page(folder, BUNDLE, ProfileExplorer(explained).get_state())
    with serve(folder) as url:
        page = browser.new_page(viewport={"width": 1300, "height": 1600})
        blocked = block_outside(page, url)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{url}/index.html")
        page.wait_for_function("window.__ready === true")
        page.wait_for_selector("section[data-family=circles] svg .mark-line path")
        yield page, blocked, errors
        page.close()


def _click_at(pg, family: str, x: float, log: bool = False) -> None:
    """Click a chart where its x axis reads ``x`` (between two labelled ticks)."""
    labels = pg.locator(
        f"section[data-family={family}] svg g.role-axis[aria-label^='X-axis'] .role-axis-label text"
    ).all()
    pairs = [(float(t.text_content()), t.bounding_box()) for t in labels if t.text_content()]
    f = np.log if log else (lambda v: v)
    values = [v for v, _ in pairs]
    k = min(max(int(np.searchsorted(values, x)) - 1, 0), len(values) - 2)
    (v0, b0), (v1, b1) = pairs[k], pairs[k + 1]
    c0, c1 = b0["x"] + b0["width"] / 2, b1["x"] + b1["width"] / 2
    px = c0 + (f(x) - f(v0)) / (f(v1) - f(v0)) * (c1 - c0)
    pg.mouse.click(px, b0["y"] - 40)


def distance_block(pg, set_label: str):
    """The witness block of one set (its label matched exactly, as data, not as CSS)."""
    blocks = pg.locator(".dp-explain .dp-witness")
    labels = blocks.evaluate_all("(els) => els.map((e) => e.dataset.set)")
    return blocks.nth(labels.index(set_label))


def _shown(pg, set_label: str, role: str) -> list[int]:
    items = distance_block(pg, set_label).locator(f"ol[data-role='{role}'] li")
    return [int(i) for i in items.evaluate_all("(els) => els.map((e) => e.dataset.index)")]


def test_clicking_a_circles_point_shows_a_valid_packing_of_the_stored_size(page, explained, sets):
    pg, blocked, errors = page
    tau = explained["x/euclidean/samples/set_0"]["circles_member"].attrs["tau"]
    _click_at(pg, "circles", tau * 0.8)
    pg.wait_for_selector(".dp-explain .dp-witness[data-family=circles]")
    note = pg.locator(".dp-explain .dp-where").inner_text()
    # The click is read in data units and snapped to the nearest grid point; what is shown
    # is the stored witness, and the note says so plainly.
    grid = explained["x/euclidean"].tau.values
    nearest = grid[np.argmin(np.abs(grid - tau * 0.8))]
    assert nearest != tau
    found = re.search(
        r"No explanation stored at τ = ([0-9.]+); nearest stored: τ = ([0-9.]+)", note
    )
    assert float(found.group(1)) == pytest.approx(nearest, rel=5e-3)  # 3 figures
    assert float(found.group(2)) == pytest.approx(tau, rel=5e-3)
    assert "Asking Python for the witnesses" in note  # a kernel stands behind this model
    # With a kernel behind the model, Python is asked for the packing at that grid point.
    request = pg.evaluate("window.__model.get('explain_request')")
    assert request["family"] == "circles" and request["value"] == pytest.approx(nearest)
    ds = explained["x/euclidean"].to_dataset()
    for k, label in enumerate(ds["set"].values):
        node = explained[f"x/euclidean/samples/set_{k}"]
        expected = np.flatnonzero(node["circles_member"].values).tolist()
        shown = _shown(pg, label, "packing")
        assert shown == expected[:MAX_MEMBERS]
        # Independently: pairwise farther than tau, and as many as the profile says.
        D = _dist(sets[label])[np.ix_(shown, shown)]
        assert (D[~np.eye(len(shown), dtype=bool)] > tau).all()
        assert len(shown) == int(ds["circles"].sel(tau=tau).values[k])
    assert errors == [] and blocked == []


def test_a_click_opens_the_panel_below_its_chart_with_every_set_at_the_clicked_point(
    page, explained, sets
):
    """Issue 23: the panel opens next to the clicked chart, in view and focused; it says
    plainly when nothing is stored at the clicked point, and shows every set's witnesses
    there once Python has found them."""
    pg, _, errors = page
    pg.evaluate("window.__model.set('selected_sets', [])")
    pg.evaluate("window.scrollTo(0, 0)")
    ds = explained["x/euclidean"].to_dataset()
    grid = ds.tau.values
    stored = explained["x/euclidean/samples/set_0"]["circles_member"].attrs["tau"]
    target = float(grid[2]) if grid[2] != stored else float(grid[3])
    _click_at(pg, "circles", target)
    pg.wait_for_selector(".dp-explain.dp-inline .dp-where")
    # Right after the circles panel (the grid's next row), in the viewport, focused.
    where = pg.evaluate(
        """() => {
          const box = document.querySelector('.dp-explain');
          const panel = document.querySelector('section[data-family=circles]');
          const b = box.getBoundingClientRect(), p = panel.getBoundingClientRect();
          return { follows: panel.nextElementSibling === box, gap: b.top - p.bottom,
                   top: b.top, height: innerHeight,
                   focused: box.contains(document.activeElement) };
        }"""
    )
    assert where["follows"] and 0 <= where["gap"] < 40, where
    assert 0 <= where["top"] < where["height"] and where["focused"], where
    note = pg.locator(".dp-explain .dp-where").inner_text()
    assert note.startswith(
        f"No explanation stored at τ = {float(f'{target:.3g}'):g}; "
        f"nearest stored: τ = {float(f'{stored:.3g}'):g}"
    )
    # The clicked curve is highlighted, yet every set's witnesses are shown.
    shown_sets = pg.locator(".dp-explain .dp-witness[data-family=circles]").evaluate_all(
        "(els) => els.map((e) => e.dataset.set)"
    )
    assert shown_sets == list(ds["set"].values)
    request = pg.evaluate("window.__model.get('explain_request')")
    assert request["family"] == "circles" and request["value"] == pytest.approx(target)
    # Python answers (a live explorer over the same samples and grid): the packings at the
    # clicked point, for every set, checked here against the distances themselves.
    profiler = dp.Profiler(sets, representation="x", distance="euclidean")
    live_tree = dp.explain(profiler.profiles(n_points=10), sets)
    np.testing.assert_allclose(live_tree["x/euclidean"].tau.values, grid)
    live = ProfileExplorer(live_tree, profiler=profiler)
    live.explain_request = {"family": "circles", "value": target, "nonce": 1.0}
    assert live.status == ""
    pg.evaluate("(ex) => window.__model.set('explanation', ex)", live.explanation)
    note = pg.locator(".dp-explain .dp-where").inner_text()
    assert (
        note == f"Witnesses at τ = {float(f'{target:.3g}'):g}, the point you chose, for every set."
    )
    for k, label in enumerate(ds["set"].values):
        members = _shown(pg, label, "packing")
        D = _dist(sets[label])[np.ix_(members, members)]
        assert (D[~np.eye(len(members), dtype=bool)] > target).all()
        assert len(members) == int(ds["circles"].sel(tau=target).values[k])
    pg.evaluate(
        "(ex) => window.__model.set('explanation', ex)", ProfileExplorer(explained).explanation
    )
    assert errors == []


def test_magnitude_witness_lists_the_largest_weights_of_a_direct_solve(page, explained, sets):
    pg, _, _ = page
    t = explained["x/euclidean/samples/set_0"]["magnitude_weight"].attrs["t"]
    _click_at(pg, "magnitude", t, log=True)
    pg.wait_for_selector(".dp-explain .dp-witness[data-family=magnitude]")
    note = pg.locator(".dp-explain .dp-where").inner_text()
    assert f"Witnesses at t = {float(f'{t:.3g}'):g}, the point you chose, for every set" in note
    for label in sets:
        w = np.linalg.solve(np.exp(-t * _dist(sets[label])), np.ones(len(sets[label])))
        assert _shown(pg, label, "largest weights") == np.argsort(-w)[:TOP].tolist()
        negative = np.flatnonzero(w < 0)
        worst = negative[np.argsort(w[negative])][:TOP].tolist()
        assert _shown(pg, label, "negative weights") == worst if worst else True
        block = distance_block(pg, label)
        assert f"Σw = {float(f'{w.sum():.4g}'):g}" in block.inner_text()


def test_vendi_witness_shows_the_leading_eigenvalue_share(page, explained, sets):
    pg, _, _ = page
    pg.select_option(".dp-explain select[aria-label='witnesses of family']", "vendi")
    h = float(explained["x/euclidean"].attrs["bandwidth"])
    for label in sets:
        D = _dist(sets[label])
        lam = np.linalg.eigvalsh(np.exp(-0.5 * (D / h) ** 2) / len(D))[::-1]
        block = distance_block(pg, label)
        assert f"Mode 1: {float(f'{100 * lam[0] / lam.sum():.3g}'):g}%" in block.inner_text()
        assert len(_shown(pg, label, "mode 1")) == 5


def test_a_matrix_cell_opens_the_witnesses_of_its_two_sets(page):
    pg, _, _ = page
    pg.evaluate("window.__model.set('selected_sets', [])")
    cell = pg.locator("section[data-family=richness] table tr:nth-child(2) td:nth-child(3)")
    cell.click()
    blocks = pg.locator(".dp-explain .dp-witness[data-family=richness] h5")
    assert blocks.all_inner_texts() == ["A", XSS]
    assert pg.locator(".dp-explain ol[data-role='nearest samples'] li").count() > 0


def test_hostile_texts_labels_and_categories_stay_text(page):
    pg, _, errors = page
    pg.click(".dp-explain button[data-tab=categories]")
    table = pg.locator(".dp-explain table[aria-label='categories of A']")
    assert XSS in table.inner_text()
    pg.click(".dp-explain button[data-tab=witnesses]")
    pg.select_option(".dp-explain select[aria-label='witnesses of family']", "magnitude")
    text = pg.locator(".dp-explain").inner_text()
    assert HOSTILE_TEXT in text and f"{XSS} " in text
    assert pg.locator(".dp-explain b, .dp-explain script, .dp-explain img").count() == 0
    assert pg.locator("img").count() == 0
    assert pg.evaluate("window.__alerts") == 0 and errors == []


def test_category_curves_on_demand(page, explained):
    pg, _, errors = page
    pg.click(".dp-explain button[data-tab=categories]")
    pg.select_option(".dp-explain select[aria-label='curves per category of A']", "magnitude")
    body = ".dp-explain [role=tabpanel][data-tab=categories]"
    cat = explained["x/euclidean/categories/set_0"]
    pg.wait_for_function(
        f"document.querySelectorAll('{body} .mark-line.role-mark path').length === "
        f"{cat.sizes['category']}"
    )
    legend = pg.locator(f"{body} .role-legend-label text").all_text_contents()
    assert XSS in legend  # a category named XSS, drawn as text
    assert pg.locator(".dp-explain img").count() == 0 and errors == []
    # Categories are listed by diversity (normalised alpha at the chosen order).
    order = [
        r.get_attribute("data-category")
        for r in pg.locator(
            ".dp-explain table[aria-label='categories of A'] tr[data-category]"
        ).all()
    ]
    alpha = cat["alpha"].sel(order=1.0).values
    assert order == [str(c) for c in cat["category"].values[np.argsort(-alpha)]]
    pg.click(".dp-explain button[data-tab=witnesses]")


def test_distance_panel_draws_the_histogram_and_follows_the_slider(page, explained):
    pg, _, _ = page
    pg.locator(".dp-explain button[data-tab=distances]").focus()
    pg.keyboard.press("Enter")  # the tabs are reachable from the keyboard
    assert pg.get_attribute(".dp-explain button[data-tab=distances]", "aria-selected") == "true"
    dist = explained["x/euclidean/distances"]
    bins = dist.sizes["bin"]
    body = ".dp-explain [role=tabpanel][data-tab=distances]"
    pg.wait_for_function(
        f"document.querySelectorAll('{body} .layer_1_marks path').length === {bins}"
    )
    label = pg.locator(f"{body} .layer_1_marks path").nth(
        int(np.argmax(dist["pooled_count"].values))
    )
    assert f"count: {int(dist['pooled_count'].max())}" in label.get_attribute("aria-label")
    stats = pg.locator(f"{body} table").inner_text()
    contrast = float(dist["pooled_relative_contrast"])
    assert f"{float(f'{contrast:.3g}'):g}" in stats
    # The circles domain is drawn on the distance axis and moves with the slider.
    tau = explained["x/euclidean"].tau.values

    def circles_rect():
        return pg.evaluate(
            f"[...document.querySelectorAll('{body} .layer_0_marks path')]"
            ".map((p) => p.getAttribute('aria-label')).find((a) => a.includes('circles'))"
        )

    assert "full grid" in circles_rect()
    slider = pg.locator("section[data-family=circles] input[type=range]").first
    slider.focus()
    pg.keyboard.press("ArrowRight")
    pg.keyboard.press("ArrowRight")
    pg.wait_for_function(
        f"[...document.querySelectorAll('{body} .layer_0_marks path')]"
        ".some((p) => (p.getAttribute('aria-label') || '').includes('slider'))"
    )
    assert f"from: {float(f'{tau[2]:.4g}'):g}"[:9] in circles_rect()
    pg.keyboard.press("Home")


def test_convergence_view_plots_every_size_of_every_set(page, explained):
    pg, _, _ = page
    pg.click(".dp-explain button[data-tab=convergence]")
    conv = explained["x/euclidean/convergence"]
    body = ".dp-explain [role=tabpanel][data-tab=convergence]"
    n = conv.sizes["size"] * conv.sizes["set"]
    pg.wait_for_function(
        f"document.querySelectorAll('{body} .mark-symbol.role-mark path').length === {n}"
    )
    pg.select_option(f"{body} select[aria-label='convergence of family']", "richness")
    richness = conv["richness_mean"].sel(set="A", size=24).item()
    pg.wait_for_function(
        f"document.querySelectorAll('{body} .mark-symbol.role-mark path').length === {n}"
    )
    labels = pg.locator(f"{body} .mark-symbol.role-mark path").evaluate_all(
        "(els) => els.map((e) => e.getAttribute('aria-label'))"
    )
    assert any(f"mean: {richness:g}" in a and "set: A" in a for a in labels)


def test_the_parameter_of_a_witness_can_be_chosen_from_the_keyboard(page, explained):
    pg, _, _ = page
    pg.click(".dp-explain button[data-tab=witnesses]")
    pg.select_option(".dp-explain select[aria-label='witnesses of family']", "circles")
    chooser = pg.locator(".dp-explain select[aria-label='τ of the circles witnesses']")
    tau = explained["x/euclidean"].tau.values
    stored = explained["x/euclidean/samples/set_0"]["circles_member"].attrs["tau"]
    options = chooser.locator("option").all_inner_texts()
    assert len(options) == len(tau) and sum("(stored)" in o for o in options) == 1
    chooser.focus()
    pg.keyboard.press("Home")  # the first grid point, from the keyboard
    assert chooser.input_value() == repr(float(tau[0])) or float(chooser.input_value()) == tau[0]
    pg.wait_for_function("window.__model.get('explain_request').value === " + repr(float(tau[0])))
    note = pg.locator(".dp-explain .dp-where").inner_text()
    assert f"No explanation stored at τ = 0; nearest stored: τ = {float(f'{stored:.3g}'):g}" in note
    # The redraw keeps the keyboard where it was.
    assert (
        pg.evaluate("document.activeElement.getAttribute('aria-label')")
        == "τ of the circles witnesses"
    )


def test_cleanup_leaves_no_listener(page):
    pg, _, errors = page
    pg.evaluate("window.__cleanup()")
    assert pg.evaluate("window.__listeners()") == 0
    assert errors == []


def test_payload_is_empty_without_explanation_and_valid_json(explained, paper_tree):
    assert explanation_payload(paper_tree, "line/euclidean") == {}
    assert ProfileExplorer(paper_tree).explanation == {}
    payload = standalone_payload(explained, ["x/euclidean"])
    text = json.dumps(payload, allow_nan=False)  # no NaN or infinity: JSON.parse must read it
    assert payload["conditions"]["x/euclidean"]["explanation"]["version"] == 1
    assert len(text) < 200_000


def test_stored_images_become_data_urls_and_nothing_else(sets):
    tree = dp.profiles(sets, representation="x", distance="euclidean", families=["richness"])
    images = {"A": np.random.default_rng(0).integers(0, 255, (30, 8, 8)), XSS: ["x"] * 24}
    out = dp.explain(tree, sets, samples=images)
    pay = explanation_payload(out, "x/euclidean")
    srcs = [s["image"] for s in pay["sets"][0]["samples"]]
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
    node = out["x/euclidean/samples/set_0"].to_dataset()
    node["display_image"].values[:] = 'x" onerror="alert(1)'  # a file read back: anything
    out["x/euclidean/samples/set_0"] = xr.DataTree(node)
    assert {s["image"] for s in explanation_payload(out, "x/euclidean")["sets"][0]["samples"]} == {
        ""
    }


def test_two_sets_of_500_thumbnails_stay_within_the_budget():
    rng = np.random.default_rng(1)
    sets = {k: rng.normal(size=(500, 4)) for k in ("A", "B")}
    tree = dp.profiles(sets, representation="x", distance="euclidean", families=["magnitude"])
    digits = {k: rng.integers(0, 16, (500, 8, 8)) for k in sets}
    out = dp.explain(tree, sets, samples=digits)
    size = len(json.dumps(explanation_payload(out, "x/euclidean")))
    assert size < 500_000, size  # the budget in explain_view's docstring


def test_report_draws_the_panels_offline(explained, browser, tmp_path):
    path = dp.report(explained, tmp_path / "report.html")
    text = path.read_text()
    payload_line = text.split("const payload = ")[1].split("\n")[0]
    assert "alert(2)" in payload_line and "</script" not in payload_line.lower()
    page = browser.new_page(viewport={"width": 1300, "height": 1600})
    outside = []

    def route(r):
        if r.request.url.startswith(("file://", "blob:", "data:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    alerts = []
    page.on("dialog", lambda d: (alerts.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_function("window.__dpReady === true")
    page.wait_for_selector("#explorer section[data-family=circles] svg .mark-line path")
    page.locator("#explorer section[data-family=circles] table td[data-verdict]").first.click()
    shown = _shown(page, "A", "packing")
    expected = np.flatnonzero(
        explained["x/euclidean/samples/set_0"]["circles_member"].values
    ).tolist()
    assert shown == expected
    page.click("#explorer .dp-explain button[data-tab=distances]")
    page.wait_for_selector(
        "#explorer .dp-explain [data-tab=distances] .layer_1_marks path", state="attached"
    )
    assert page.locator("#explorer .dp-explain b").count() == 0
    assert outside == [] and alerts == []
    page.close()


def test_profiles_stores_what_the_panels_show(sets):
    texts = {"A": [f"a{i}" for i in range(30)], XSS: [f"b{i}" for i in range(24)]}
    cats = {"A": ["x", "y"] * 15}
    tree = dp.profiles(
        sets,
        representation="x",
        distance="euclidean",
        families=["richness", "circles"],
        samples=texts,
        categories=cats,
        n_points=8,
    )
    plain = dp.profiles(
        sets, representation="x", distance="euclidean", families=["richness", "circles"], n_points=8
    )
    reference = dp.explain(plain, sets, samples=texts, categories=cats)
    for sub in ("samples/set_0", "samples/set_1", "distances", "categories/set_0"):
        xr.testing.assert_identical(
            tree[f"x/euclidean/{sub}"].to_dataset(), reference[f"x/euclidean/{sub}"].to_dataset()
        )
    assert ProfileExplorer(tree).explanation["sets"][0]["samples"][0]["text"].startswith("a")
    with pytest.raises(ValueError, match=r"samples\['A'\] passed to profiles needs one item"):
        dp.profiles(sets, representation="x", distance="euclidean", samples={"A": ["x"]})
    with pytest.raises(ValueError, match="'categories' argument of profiles names sets"):
        dp.profiles(sets, representation="x", distance="euclidean", categories={"C": [1]})


def test_a_click_elsewhere_finds_the_witnesses_there_in_a_live_session(sets, tmp_path):
    # The profiler that computed the tree holds its matrices.
    profiler = dp.Profiler(sets, representation="x", distance="euclidean")
    tree = profiler.profiles(n_points=10)
    explained = dp.explain(tree, sets)
    widget = ProfileExplorer(explained, profiler=profiler)
    ds = explained["x/euclidean"].to_dataset()
    stored = widget.explanation["sets"][0]["witnesses"]["circles"]["at"]
    tau = float(ds.tau.values[2])
    assert tau != stored
    widget.explain_request = {"family": "circles", "value": tau * 1.001, "nonce": 1.0}
    assert widget.status == ""
    for k, label in enumerate(ds["set"].values):
        c = widget.explanation["sets"][k]["witnesses"]["circles"]
        assert c["at"] == tau  # snapped to the grid point
        members = c["members"]
        D = _dist(sets[label])[np.ix_(members, members)]
        assert (D[~np.eye(len(members), dtype=bool)] > tau).all()
        assert len(members) == c["size"] == int(ds["circles"].sel(tau=tau).values[k])
    t = float(ds.t.values[1])
    widget.explain_request = {"family": "magnitude", "value": t, "nonce": 2.0}
    for k, label in enumerate(ds["set"].values):
        w = np.linalg.solve(np.exp(-t * _dist(sets[label])), np.ones(len(sets[label])))
        m = widget.explanation["sets"][k]["witnesses"]["magnitude"]
        assert [r["i"] for r in m["top"]] == np.argsort(-w)[:TOP].tolist()
        assert m["stored"] == pytest.approx(w.sum(), rel=1e-9)
    # The tree itself keeps what explain stored.
    assert explained["x/euclidean/samples/set_0"]["circles_member"].attrs["tau"] == stored
    # Without the profiler (a file from elsewhere) the matrices are gone: the view says why.
    explained.to_netcdf(tmp_path / "e.nc")
    other = dp.open_profiles(tmp_path / "e.nc")
    back = ProfileExplorer(other)
    before = back.explanation
    back.explain_request = {"family": "circles", "value": tau, "nonce": 3.0}
    assert back.explanation == before and "No profiler stands behind this view" in back.status


def test_extending_a_domain_keeps_the_explanation(sets):
    profiler = dp.Profiler(sets, representation="x", distance="euclidean")
    tree = profiler.profiles(n_points=6)
    out = dp.explain(tree, sets, categories={"A": ["u", "v"] * 15})
    conv = dp.convergence(sets, sizes=[4, 10], like=tree, repeats=2, show_progress=False)
    out["x/euclidean/convergence"] = xr.DataTree(conv)
    widget = ProfileExplorer(out, profiler=profiler)
    before = out["x/euclidean/categories/set_0"]["magnitude"].values.copy()
    widget.extend("magnitude", "high", 3)  # the view's tree grows; ``out`` stays as it was
    assert out["x/euclidean"]["t"].size == 6
    node = widget.tree["x/euclidean"]
    assert set(node.children) == {"samples", "distances", "categories", "convergence"}
    assert node["t"].size == 9
    grown = node["categories/set_0"]["magnitude"]
    np.testing.assert_array_equal(grown.values[:, :6], before)
    assert np.isnan(grown.values[:, 6:]).all()  # nothing invented at the new points
    assert node["convergence"]["magnitude_mean"].shape == (2, 2, 9)


LAB_SOURCE = f"""\
import numpy as np
import diversity_profiles as dp
rng = np.random.default_rng(3)
sets = {{"A": rng.normal(size=(20, 3)), {XSS!r}: rng.normal(size=(15, 3)) * 0.5}}
texts = {{"A": [f"{HOSTILE_TEXT} {{i}}" for i in range(20)], {XSS!r}: list(range(15))}}
tree = dp.profiles(sets, representation="x", distance="euclidean", n_points=8, samples=texts)
tree.dp.explore()
"""


def test_jupyterlab_draws_the_panels_without_kernel_or_widget_state(browser, tmp_path, monkeypatch):
    """A notebook saved without widget state, opened in a real JupyterLab with no kernel:
    the extension built in this checkout (put first on JUPYTER_PATH) draws the panels."""
    import nbformat
    from nbclient import NotebookClient

    from .browser import jupyterlab

    built = Path(dp.__file__).parent / "labextension"
    if not (built / "package.json").exists():
        pytest.skip("the JupyterLab extension is not built here (npm run build builds it)")
    (tmp_path / "jp" / "labextensions").mkdir(parents=True)
    (tmp_path / "jp" / "labextensions" / "diversity-profiles").symlink_to(built)
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jp"))
    root = tmp_path / "root"
    root.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(LAB_SOURCE)])
    NotebookClient(nb, kernel_name="python3", store_widget_state=False).execute()
    for key in ("widgets", "kernelspec", "language_info"):
        nb.metadata.pop(key, None)
    nbformat.write(nb, root / "shared.ipynb")
    with jupyterlab(root) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        blocked = block_outside(page, url)
        page.add_locator_handler(
            page.locator(".jp-Dialog"),
            lambda dialog: dialog.get_by_role("button", name="No Kernel").click(),
        )
        page.goto(f"{url}/lab/tree/shared.ipynb")
        page.wait_for_selector(
            ".dp-mime-explorer section[data-family=circles] svg .mark-line path", timeout=60_000
        )
        page.locator(
            ".dp-mime-explorer section[data-family=circles] table td[data-verdict]"
        ).first.click()
        out = nb.cells[0].outputs[-1]["data"]["application/vnd.diversity-profiles.explorer+json"]
        explanation = out["conditions"]["x/euclidean"]["explanation"]
        members = explanation["sets"][0]["witnesses"]["circles"]["members"]
        shown = _shown(page, "A", "packing")
        assert shown == members and shown
        assert HOSTILE_TEXT in page.locator(".dp-mime-explorer .dp-explain").inner_text()
        assert page.locator(".dp-mime-explorer .dp-explain b, .dp-explain script").count() == 0
        assert blocked == []
        page.close()
