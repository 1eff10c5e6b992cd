"""The explorer's findings, margin-aware and simultaneous-confidence verdicts in Debian's
Chromium.

The view receives each set's replicates (multiplier draws, or half-sample replicates with
their subsample sizes) and compare's family-wise z for the full grid, and recomputes, for
the domain the user narrows to, every pair's finding (verdict rule step 8), the verdict
with the margin and the sup-t band of its difference (verdict.ts); each must equal
``dp.compare`` for the same domain, with that z (which the view keeps on a narrower
domain: valid there, conservatively).
"""

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

BUNDLE = Path(dp.__file__).parent / "static" / "widget.js"
PATH = "plane/euclidean"


@pytest.fixture(scope="module")
def banded_tree():
    """Sets with the default uncertainty: A; A with one point moved next to another (a
    near-duplicate pair: one circle fewer at small tau, within the margin); a narrower
    cloud C."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((120, 2))
    B = A.copy()
    B[0] = B[1] + 1e-3
    return dp.profiles(
        {"A": A, "near-duplicate": B, "C": 0.7 * rng.standard_normal((120, 2))},
        representation="plane",
        distance="euclidean",
        families=["vendi", "circles", "energy", "richness"],
        # Exact: greedy bounds would overlap where the near-duplicate costs one circle.
        circles_method="exact",
        n_points=12,
        ci=0.9,
    )


@pytest.fixture(scope="module")
def banded_page(banded_tree, tmp_path_factory):
    folder = tmp_path_factory.mktemp("banded")
    write_page(folder, BUNDLE, ProfileExplorer(banded_tree).get_state())
    with serve(folder) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_page()
        blocked = block_outside(page, url)
        page.goto(f"{url}/index.html")
        page.wait_for_function("window.__ready === true")
        page.wait_for_selector("section[data-family=vendi] table td[data-confident]")
        yield page, blocked
        browser.close()


def _matrices(pg) -> dict:
    """family -> [[(finding, verdict, confident) per column] per row] as the view shows them
    (rows and columns are headed by <th>: every <td> is a pair's cell or an empty one)."""
    return pg.evaluate("""() => Object.fromEntries([...document.querySelectorAll('section')]
        .map((s) => [s.dataset.family, [...s.querySelectorAll('table tr')].slice(1).map((row) =>
            [...row.querySelectorAll('td')].map((td) =>
                [td.dataset.verdict ?? null, td.dataset.point ?? null,
                 td.dataset.confident ?? null, td.dataset.part ?? null]))]))""")


def _part(side: float) -> str | None:
    """A cell's data-part: the side ordered on part of the domain only (step 9)."""
    return None if np.isnan(side) else ("dominates" if side > 0 else "dominated")


def _expected(res, labels) -> dict:
    out = {}
    for family in res.family.values.tolist():
        at = dict(family=family)
        out[family] = [
            [
                [None, None, None, None]
                if labels.index(b) <= labels.index(a)  # one triangle: each pair once
                else [
                    *(
                        str(res[var].sel(set_a=a, set_b=b, **at).values)
                        for var in ("finding", "verdict", "verdict_ci")
                    ),
                    _part(float(res.part_side.sel(set_a=a, set_b=b, **at))),
                ]
                for b in labels
            ]
            for a in labels
        ]
    return out


def test_findings_and_verdicts_match_compare_on_full_and_narrowed_domains(
    banded_page, banded_tree, monkeypatch
):
    pg, blocked = banded_page
    labels = ["A", "near-duplicate", "C"]
    ds = banded_tree[PATH].to_dataset()
    # Both kinds of replicates: multiplier draws (no rescaling) and half-sample ones.
    assert ds.vendi_boot.attrs["kind"] == "multiplier"
    assert ds.circles_boot.attrs["kind"] == "half-sample"
    tree = dp.compare(banded_tree)
    full = tree[PATH]
    # The data exercise the margin (a near-duplicate pair is not a finding), confidence,
    # and findings of several kinds.
    pair = dict(set_a="A", set_b="near-duplicate", family="circles")
    assert str(full.verdict_plain.sel(**pair).values) == "dominates"
    assert str(full.verdict.sel(**pair).values) == "tied"
    assert {"dominates", "uncertain"} <= set(full.verdict_ci.values.ravel().tolist())
    assert {"dominates", "dominated", "not distinguishable"} <= set(
        full.finding.values.ravel().tolist()
    )
    assert np.isfinite(full.part_side.values).any()  # ...and orders on part of it (step 9)
    assert _matrices(pg) == _expected(full, labels)
    lines = view_summary_lines(pg)
    assert lines == summary_lines(tree)  # line for line, findings first
    assert any("(not distinguishable elsewhere)" in line for line in lines)
    assert lines[0].startswith("Findings hold with 90% confidence for every pair, point and family")
    # Narrow Vendi's domain from the keyboard: the view recomputes the findings, the
    # margin's verdicts and the sup-t band for the narrowed domain, as compare does.
    q = banded_tree[PATH].q.values
    lower = pg.locator("section[data-family=vendi] input[type=range]").first
    lower.focus()
    for _ in range(6):
        pg.keyboard.press("ArrowRight")
    settled(pg)
    domains = {"vendi": (q[6], q[-1])}
    narrowed = compare_as_the_view_does(banded_tree, domains, monkeypatch)
    assert _matrices(pg) == _expected(narrowed[PATH], labels)
    lines = view_summary_lines(pg)
    assert lines == summary_lines(narrowed)
    text = "\n".join(lines)
    assert "number of circles 0.01 × n samples" in text and "Vendi score 0.01 relative" in text
    assert "these samples (no confidence): " in text
    assert "within the margin" in text  # a dismissed lead is named, not hidden
    assert blocked == []


def test_a_cell_shows_the_finding_and_says_it_from_the_rows_side(banded_page, banded_tree):
    pg, _ = banded_page
    full = dp.compare(banded_tree)[PATH]
    at = dict(set_a="A", set_b="C", family="vendi")
    finding, verdict = (str(full[v].sel(**at).values) for v in ("finding", "verdict"))
    # Row A (the second row, under the header), column C (after the row's header, A, near).
    cell = pg.locator("section[data-family=vendi] table tr:nth-child(2) td:nth-child(4)")
    symbol = {"dominates": "≻", "dominated": "≺", "tied": "=", "crosses": "×"}
    symbol.update({"not distinguishable": "·", "no uncertainty": "–"})
    assert cell.inner_text() == symbol[finding] and cell.get_attribute("data-verdict") == finding
    said = {"dominates": "A ahead, supported at 90%", "dominated": "C ahead, supported at 90%",
            "crosses": "they cross, supported at 90%", "not distinguishable":
            "not distinguishable at this sample size"}  # fmt: skip
    point = {"dominates": "A ahead", "dominated": "C ahead", "crosses": "they cross",
             "tied": "equal within the margin"}  # fmt: skip
    title = cell.get_attribute("title")
    assert title.startswith(f"A vs C in Vendi score: {said[finding]}"), title
    assert f"; these samples: {point[verdict]}" in title
    assert cell.get_attribute("aria-label") == title
    assert cell.locator("*").count() == 0  # text only


def test_the_matrix_has_a_key_one_triangle_and_cells_reachable_by_keyboard(banded_page):
    pg, _ = banded_page
    labels = ["A", "near-duplicate", "C"]
    section = "section[data-family=vendi]"
    # A key that stays on the page: every symbol with what it means, at 16 px or more.
    key = pg.locator(f"{section} ul.dp-legend li").all_inner_texts()
    assert [k.split(" ", 1)[0] for k in key] == ["≻", "≺", "=", "×", "·", "(≻)", "(≺)", "–"]
    assert key[0] == "≻ row ahead" and key[1] == "≺ column ahead"
    sizes = pg.evaluate(f"""() => [...document.querySelectorAll(
        '{section} .dp-legend .dp-symbol, {section} table td[data-verdict]')]
        .map((e) => parseFloat(getComputedStyle(e).fontSize))""")
    assert len(sizes) == 8 + 3 and min(sizes) >= 16
    # Wording that says which way to read, not "A \ B".
    caption = pg.locator(f"{section} table caption").inner_text()
    assert "row's set against the column's" in caption
    assert pg.locator(f"{section} table tr").first.inner_text().startswith("row vs column →")
    assert "\\" not in pg.locator(f"{section} table").inner_text()
    # One triangle: the three pairs, each once, above the diagonal.
    places = pg.evaluate(f"""() => [...document.querySelectorAll('{section} table td')]
        .filter((td) => td.dataset.verdict)
        .map((td) => [td.parentElement.rowIndex - 1, td.cellIndex - 1])""")
    assert sorted(places) == [[0, 1], [0, 2], [1, 2]]
    # One cell in the tab order; arrows move between cells, Enter opens it as a click does.
    assert pg.locator(f"{section} td[tabindex='0']").count() == 1
    pg.locator(f"{section} input[type=range]").last.focus()
    for _ in range(12):
        pg.keyboard.press("Tab")
        if pg.evaluate("document.activeElement.tagName") == "TD":
            break
    focused = pg.evaluate("document.activeElement.getAttribute('aria-label') || ''")
    assert focused.startswith(f"{labels[0]} vs {labels[1]} in Vendi score: ")
    for key, pair in (("ArrowRight", (0, 2)), ("ArrowDown", (1, 2)), ("ArrowLeft", (1, 2)),
                      ("ArrowUp", (0, 2)), ("Home", (0, 1)), ("End", (1, 2))):  # fmt: skip
        pg.keyboard.press(key)
        label = pg.evaluate("document.activeElement.getAttribute('aria-label')")
        assert label.startswith(f"{labels[pair[0]]} vs {labels[pair[1]]} in Vendi score: "), key
        assert pg.evaluate("document.activeElement.tabIndex") == 0
        assert pg.locator(f"{section} td[tabindex='0']").count() == 1
    pg.evaluate(f"""() => {{ window.__cellClicks = 0; document.querySelector('{section} table')
        .addEventListener('click', () => {{ window.__cellClicks += 1; }}); }}""")
    pg.keyboard.press("Enter")
    pg.keyboard.press(" ")
    assert pg.evaluate("window.__cellClicks") == 2
