"""The built explorer in a real headless Chromium (Debian's), driven by Playwright.

Renders the bundle with the widget's real state, checks that the dominance matrices show
``dp.compare``'s findings first and the summary its lines, moves a domain slider from the
keyboard and checks the finding and verdict that ``dp.compare`` gives for the same domain,
sets the domain from the model side, checks a hostile label stays text, and that
cleanup removes every listener it added. No request leaves the machine.
"""

import re
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import sync_playwright

import diversity_profiles as dp
from diversity_profiles.display._explorer import ProfileExplorer

from .browser import (
    CHROMIUM,
    LAUNCH_ARGS,
    block_outside,
    compare_as_the_view_does,
    serve,
    settled,
    summary_lines,
    view_summary_lines,
    write_page,
)
from .conftest import XSS

BUNDLE = Path(dp.__file__).parent / "static" / "widget.js"


@pytest.fixture(scope="module")
def tree(paper_tree):
    return paper_tree


@pytest.fixture(scope="module")
def page(tree, tmp_path_factory):
    folder = tmp_path_factory.mktemp("page")
    write_page(folder, BUNDLE, ProfileExplorer(tree).get_state())
    with serve(folder) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_page()
        blocked = block_outside(page, url)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{url}/index.html")
        page.wait_for_function("window.__ready === true")
        page.wait_for_selector(
            "section[data-family=vendi] svg path.mark-line, "
            "section[data-family=vendi] svg .mark-line path"
        )
        yield page, blocked, errors
        browser.close()


def cell(page, family: str, shows: str = "point") -> str:
    """A vs the other set in a family's dominance matrix: these samples' verdict
    (``shows="point"``) or the finding the cell shows first (``shows="verdict"``)."""
    return page.get_attribute(
        f"section[data-family={family}] table tr:nth-child(2) td:nth-child(3)", f"data-{shows}"
    )


def findings(page) -> dict:
    """family -> the finding of A vs the other set, as the matrices show it."""
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('section')]
        .map((s) => [s.dataset.family,
          s.querySelector('table tr:nth-child(2) td:nth-child(3)').dataset.verdict]))""")


def test_curves_are_drawn_for_every_family(page):
    pg, blocked, errors = page
    for family in ("vendi", "magnitude", "circles", "energy"):
        assert pg.locator(f"section[data-family={family}] svg path").count() > 0
    assert pg.locator("h3").inner_text() == "Diversity profiles — line/euclidean"
    assert errors == [] and blocked == []


def test_crossings_are_marked_where_compare_finds_them(page, tree):
    pg, _, _ = page
    res = dp.compare(tree)["line/euclidean"]
    for family in ("magnitude", "circles"):
        n = int(res.n_crossings.sel(set_a="A", set_b=XSS, family=family))
        assert n > 0
        # The crossing rules (the hover layer draws rules too, one per grid point).
        pg.wait_for_function(
            f"[...document.querySelectorAll('section[data-family={family}] .mark-rule.role-mark "
            "line')].filter((r) => (r.getAttribute('aria-label') || '')"
            f".includes('crossing: ')).length === {n}"
        )


def test_the_matrices_and_summary_lead_with_what_compare_finds(page, tree):
    pg, _, _ = page
    comparison = dp.compare(tree)
    res = comparison["line/euclidean"].sel(set_a="A", set_b=XSS)
    want = dict(zip(res.family.values.tolist(), res.finding.values.tolist(), strict=True))
    assert findings(pg) == want
    # The summary is summary.py's, line for line: what the findings hold with first.
    lines = view_summary_lines(pg)
    assert lines == summary_lines(comparison)
    assert lines[0].startswith(("Findings hold with 95% confidence", "**No verdict is supported**"))
    assert any(line.startswith("  - these samples (no confidence): ") for line in lines)
    # The headline is drawn first; each pair's detail waits behind its disclosure.
    shown = pg.locator(".dp-summary").inner_text()
    assert shown.index("- Vendi score: ") < shown.index("Each pair in detail (1 pair)")
    assert "these samples (no confidence): " not in shown


def test_slider_from_the_keyboard_changes_the_verdict_as_compare_does(page, tree, monkeypatch):
    pg, _, _ = page
    t = tree["line/euclidean"].t.values
    full = dp.compare(tree)["line/euclidean"].sel(set_a="A", set_b=XSS, family="magnitude")
    assert str(full.verdict.values) == "crosses" and cell(pg, "magnitude") == "crosses"
    assert cell(pg, "magnitude", "verdict") == str(full.finding.values)
    crossing = float(full.crossings.values[0])
    k = int(np.searchsorted(t, crossing))  # first grid point past the crossing
    domains = {"magnitude": (t[k], t[-1])}
    narrowed = compare_as_the_view_does(tree, domains, monkeypatch)
    expected = narrowed["line/euclidean"].sel(set_a="A", set_b=XSS, family="magnitude")
    assert str(expected.verdict.values) == "dominates"
    lower = pg.locator("section[data-family=magnitude] input[type=range]").first
    lower.focus()
    for _ in range(k):
        pg.keyboard.press("ArrowRight")
    settled(pg)
    assert cell(pg, "magnitude") == "dominates"
    assert cell(pg, "magnitude", "verdict") == str(expected.finding.values)
    saved = pg.evaluate("window.__saved.at(-1)")
    assert saved["magnitude"] == pytest.approx([t[k], t[-1]])
    # The summary for the current domain follows, in summary.py's words (wording.py).
    lines = view_summary_lines(pg)
    assert lines == summary_lines(narrowed)
    (point,) = [line for line in lines if "these samples (no confidence)" in line]
    assert re.search(f"A ≻ {re.escape(XSS)} in [^;]*magnitude", point)


def test_brushing_an_x_range_moves_the_slider(page, tree):
    pg, _, _ = page
    area = pg.locator("section[data-family=circles] svg .layer_0_marks path").first
    area.scroll_into_view_if_needed()  # the summary leads: the charts start below it
    box = area.bounding_box()
    y = box["y"] + box["height"] / 2
    pg.mouse.move(box["x"] + 0.5 * box["width"], y)
    pg.mouse.down()
    pg.mouse.move(box["x"] + 0.9 * box["width"], y, steps=5)
    pg.mouse.up()
    settled(pg)
    lower, upper = pg.locator("section[data-family=circles] input[type=range]").all()
    assert 0 < int(lower.input_value()) < int(upper.input_value())
    tau = tree["line/euclidean"].tau.values
    saved = pg.evaluate("window.__saved.at(-1)")["circles"]
    assert saved == pytest.approx([tau[int(lower.input_value())], tau[int(upper.input_value())]])
    pg.evaluate(f"window.__model.set('domains', {{circles: [{tau[0]}, {tau[-1]}]}})")


def test_setting_domains_from_the_model_moves_the_slider(page, tree):
    pg, _, _ = page
    t = tree["line/euclidean"].t.values
    pg.evaluate(f"window.__model.set('domains', {{magnitude: [{t[0]}, {t[-1]}]}})")
    lower = pg.locator("section[data-family=magnitude] input[type=range]").first
    assert lower.input_value() == "0"
    assert cell(pg, "magnitude") == "crosses"


def test_hostile_labels_are_text_not_markup(page):
    pg, _, _ = page
    assert pg.get_by_text(XSS, exact=False).count() > 0
    assert pg.locator("img").count() == 0
    assert pg.evaluate("window.__alerts") == 0
    # Matrix cells hold one symbol and no element; the label lives in their title as text.
    cells = pg.locator("section[data-family=circles] table td[data-verdict]")
    assert cells.count() == 1  # one triangle: the pair once, from the row's side
    for k in range(1):
        assert cells.nth(k).locator("*").count() == 0
        assert cells.nth(k).inner_text() in ("≻", "≺", "=", "×", "·", "–")
        assert XSS in cells.nth(k).get_attribute("title")


def _three(x: float) -> str:
    """A parameter value as the view writes it: 3 significant figures, ∞ for infinity."""
    return "∞" if np.isinf(x) else f"{float(f'{x:.3g}'):g}"


def test_each_domain_is_one_two_handled_control(page, tree):
    """One labelled control per family: two handles on one track, keyboard-operable
    (Arrow keys, PageUp/PageDown, Home, End) and draggable, the handles never crossing."""
    pg, _, _ = page
    q = tree["line/euclidean"].q.values
    n = len(q)
    group = pg.locator("section[data-family=vendi] .dp-range[role=group]")
    assert group.count() == 1
    lower, upper = group.locator("input[type=range]").all()
    assert lower.get_attribute("aria-label") == (
        "lower end of the q range Vendi score is compared over"
    )
    assert upper.get_attribute("aria-label") == (
        "upper end of the q range Vendi score is compared over"
    )

    def shown():
        label = f"compare over q ∈ [{_three(q[int(lower.input_value())])}, "
        label += f"{_three(q[int(upper.input_value())])}]"
        assert group.get_attribute("aria-label") == label
        assert group.locator(".dp-range-label").inner_text() == label
        return int(lower.input_value()), int(upper.input_value())

    assert shown() == (0, n - 1)
    assert upper.get_attribute("aria-valuetext") == f"q = {_three(q[-1])}"
    lower.focus()
    pg.keyboard.press("ArrowRight")
    assert shown() == (1, n - 1)
    assert lower.get_attribute("aria-valuetext") == f"q = {_three(q[1])}"
    pg.keyboard.press("End")  # the lower end stops at the upper one
    assert shown() == (n - 1, n - 1)
    pg.keyboard.press("ArrowRight")
    assert shown() == (n - 1, n - 1)
    upper.focus()
    pg.keyboard.press("Home")  # nor does the upper end pass the lower one
    assert shown() == (n - 1, n - 1)
    lower.focus()
    pg.keyboard.press("Home")
    upper.focus()
    pg.keyboard.press("PageDown")  # a larger step than an arrow's
    pg.keyboard.press("ArrowLeft")
    lo, hi = shown()
    assert lo == 0 and hi < n - 2
    settled(pg)
    saved = pg.evaluate("window.__saved.at(-1)")["vendi"]
    assert saved == pytest.approx([q[0], q[hi]])
    # The pointer: the nearer handle follows it along the track.
    track = group.locator(".dp-range-track")
    track.scroll_into_view_if_needed()
    box = track.bounding_box()
    y = box["y"] + box["height"] / 2
    pg.mouse.move(box["x"] + 7, y)  # the lower handle's centre
    pg.mouse.down()
    pg.mouse.move(box["x"] + box["width"] / 2, y, steps=4)
    pg.mouse.up()
    half = round((box["width"] / 2 - 7) / (box["width"] - 14) * (n - 1))
    assert shown() == (min(half, hi), hi)
    pg.mouse.click(box["x"] + box["width"] - 7, y)  # beyond the upper end: it comes along
    assert shown() == (min(half, hi), n - 1)
    pg.evaluate("window.__model.set('domains', {vendi: [0, 'inf']})")
    assert shown() == (0, n - 1)


def test_clicking_a_set_highlights_it_everywhere_and_syncs_selected_sets(page):
    pg, _, _ = page
    button = pg.locator('.dp-sets button[data-set="A"]')
    button.click()
    assert pg.evaluate("window.__model.get('selected_sets')") == ["A"]
    assert button.get_attribute("aria-pressed") == "true"
    # The other set fades in every chart; the chosen one stays opaque.
    for family in ("vendi", "magnitude", "circles", "energy"):
        pg.wait_for_function(
            f"[...document.querySelectorAll('section[data-family={family}] .mark-line path')]"
            ".map((p) => Number(p.getAttribute('opacity') ?? 1)).sort().join() === '0.15,1'"
        )
    pg.evaluate("window.__model.set('selected_sets', [])")
    assert button.get_attribute("aria-pressed") == "false"


def test_clicking_a_curve_highlights_its_set(page):
    pg, _, _ = page
    pg.evaluate("window.__model.set('selected_sets', [])")
    line = pg.locator("section[data-family=magnitude] .mark-line.role-mark path").first
    label = line.get_attribute("aria-label")  # Vega describes the datum: "...; set: A; ..."
    picked = label.split("set: ")[1].split(";")[0]
    line.dispatch_event("click")  # a click on the stroke itself (the box centre may miss it)
    assert pg.evaluate("window.__model.get('selected_sets')") == [picked]
    pg.evaluate("window.__model.set('selected_sets', [])")


def test_cleanup_removes_every_listener(page):
    pg, _, errors = page
    pg.evaluate("window.__cleanup()")
    counts = pg.evaluate("window.__counts")
    assert counts["on"] == counts["off"] > 0
    assert pg.evaluate("window.__listeners()") == 0
    assert pg.evaluate("document.getElementById('root').children.length") == 0
    assert errors == []


def test_repeated_renders_leave_nothing_behind(page):
    pg, _, errors = page
    listeners = pg.evaluate("""() => {
        const counts = [];
        for (let k = 0; k < 5; k++) {
          const cleanup = window.__render();
          counts.push(window.__listeners());
          cleanup();
        }
        return { during: counts, after: window.__listeners(),
                 nodes: document.getElementById('root').children.length };
    }""")
    assert len(set(listeners["during"])) == 1 and listeners["during"][0] > 0
    assert listeners["after"] == 0 and listeners["nodes"] == 0
    assert errors == []
