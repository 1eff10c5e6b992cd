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
    summary_lines,
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
        circles_method="greedy",
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
    """family -> [[(finding, verdict, confident) per column] per row] as the view shows them."""
    return pg.evaluate("""() => Object.fromEntries([...document.querySelectorAll('section')]
        .map((s) => [s.dataset.family, [...s.querySelectorAll('table tr')].slice(1).map((row) =>
            [...row.querySelectorAll('td')].slice(1).map((td) =>
                [td.dataset.verdict ?? null, td.dataset.point ?? null,
                 td.dataset.confident ?? null]))]))""")


def _expected(res, labels) -> dict:
    out = {}
    for family in res.family.values.tolist():
        at = dict(family=family)
        out[family] = [
            [
                [None, None, None]
                if a == b
                else [
                    str(res[var].sel(set_a=a, set_b=b, **at).values)
                    for var in ("finding", "verdict", "verdict_ci")
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
    assert _matrices(pg) == _expected(full, labels)
    text = pg.locator(".dp-summary").inner_text()
    assert text.splitlines() == summary_lines(tree)  # line for line, findings first
    assert text.startswith("Findings hold with 90% confidence for every pair, point and family")
    # Narrow Vendi's domain from the keyboard: the view recomputes the findings, the
    # margin's verdicts and the sup-t band for the narrowed domain, as compare does.
    q = banded_tree[PATH].q.values
    lower = pg.locator("section[data-family=vendi] input[type=range]").first
    lower.focus()
    for _ in range(6):
        pg.keyboard.press("ArrowRight")
    domains = {"vendi": (q[6], q[-1])}
    narrowed = compare_as_the_view_does(banded_tree, domains, monkeypatch)
    assert _matrices(pg) == _expected(narrowed[PATH], labels)
    text = pg.locator(".dp-summary").inner_text()
    assert text.splitlines() == summary_lines(narrowed)
    assert "circles 0.01 × n samples" in text and "vendi 0.01 relative" in text
    assert "these samples (no confidence): " in text
    assert "within the margin" in text  # a dismissed lead is named, not hidden
    assert blocked == []


def test_a_cell_shows_the_finding_and_titles_these_samples_verdict(banded_page, banded_tree):
    pg, _ = banded_page
    full = dp.compare(banded_tree)[PATH]
    at = dict(set_a="C", set_b="A", family="vendi")
    finding, verdict = (str(full[v].sel(**at).values) for v in ("finding", "verdict"))
    cell = pg.locator("section[data-family=vendi] table tr:nth-child(4) td:nth-child(2)")
    symbol = {"dominates": "≻", "dominated": "≺", "tied": "=", "crosses": "×"}
    symbol.update({"not distinguishable": "·", "no uncertainty": "–"})
    assert cell.inner_text() == symbol[finding] and cell.get_attribute("data-verdict") == finding
    title = cell.get_attribute("title")
    assert title.startswith("C vs A in vendi: finding ") and f"these samples: {verdict}" in title
    assert cell.get_attribute("aria-label") == title
    assert cell.locator("*").count() == 0  # text only
    legend = pg.locator("section[data-family=vendi] .dp-legend").inner_text()
    assert legend.startswith("Row vs column") and "· not distinguishable" in legend
