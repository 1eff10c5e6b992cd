"""The explorer's margin-aware and simultaneous-confidence verdicts in Debian's Chromium.

The view receives each set's half-sample replicates and recomputes, for the domain
the user narrows to, the verdict with the margin and the sup-t band of every pair's
difference (verdict.ts); both must equal ``dp.compare`` for the same domain.
"""

from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import sync_playwright

import diversity_profiles as dp
from diversity_profiles.display._explorer import ProfileExplorer

from .browser import CHROMIUM, LAUNCH_ARGS, block_outside, serve, write_page

BUNDLE = Path(dp.__file__).parent / "static" / "widget.js"


@pytest.fixture(scope="module")
def banded_tree():
    """Sets with replicates: A; A with one point moved next to another (a near-duplicate
    pair: one circle fewer at small tau, within the margin); a narrower cloud C."""
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
        n_boot=20,
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
    """family -> [[(verdict, confident) per column] per row] as the view shows them."""
    return pg.evaluate("""() => Object.fromEntries([...document.querySelectorAll('section')]
        .map((s) => [s.dataset.family, [...s.querySelectorAll('table tr')].slice(1).map((row) =>
            [...row.querySelectorAll('td')].slice(1).map((td) =>
                [td.dataset.verdict ?? null, td.dataset.confident ?? null]))]))""")


def _expected(res, labels) -> dict:
    out = {}
    for family in res.family.values.tolist():
        out[family] = [
            [
                [None, None]
                if a == b
                else [
                    str(res.verdict.sel(set_a=a, set_b=b, family=family).values),
                    str(res.verdict_ci.sel(set_a=a, set_b=b, family=family).values),
                ]
                for b in labels
            ]
            for a in labels
        ]
    return out


def test_margin_and_simultaneous_confidence_match_compare_on_narrowed_domains(
    banded_page, banded_tree
):
    pg, blocked = banded_page
    labels = ["A", "near-duplicate", "C"]
    full = dp.compare(banded_tree)["plane/euclidean"]
    # The data exercise the margin (a near-duplicate pair is not a finding) and confidence.
    pair = dict(set_a="A", set_b="near-duplicate", family="circles")
    assert str(full.verdict_plain.sel(**pair).values) == "dominates"
    assert str(full.verdict.sel(**pair).values) == "tied"
    assert {"dominates", "uncertain"} <= set(full.verdict_ci.values.ravel().tolist())
    assert _matrices(pg) == _expected(full, labels)
    # Narrow Vendi's domain from the keyboard: the view recomputes the sup-t band for the
    # narrowed domain, as compare does.
    q = banded_tree["plane/euclidean"].q.values
    lower = pg.locator("section[data-family=vendi] input[type=range]").first
    lower.focus()
    for _ in range(6):
        pg.keyboard.press("ArrowRight")
    narrowed = dp.compare(banded_tree, domains={"vendi": (q[6], q[-1])})["plane/euclidean"]
    assert _matrices(pg) == _expected(narrowed, labels)
    text = pg.locator(".dp-summary").inner_text()
    assert "Margins (leads within them, or on less than 5% of the domain" in text
    assert "circles 0.01 × n samples" in text and "vendi 0.01 relative" in text
    assert "with 90% confidence over each whole domain (" in text
    assert "within the margin" in text  # a dismissed lead is named, not hidden
    # Line for line what summary.py writes for the same narrowed comparison.
    from diversity_profiles.comparison._summary import summary

    want = summary(
        dp.compare(banded_tree, domains={"vendi": (q[6], q[-1])}), markdown=False
    ).splitlines()
    words = [w.strip() for w in want if w.startswith(("Margins", "No verdict", "- ", "  - "))]
    assert words and all(w in text for w in words)
    mark = pg.locator("section[data-family=vendi] td[data-confident] sup.dp-conf").first
    assert mark.inner_text() in ("✓", "?")
    assert blocked == []
