"""Self-contained reports: one HTML file, opened offline in Chromium, still interactive."""

import pytest
from playwright.sync_api import sync_playwright

import diversity_profiles as dp

from .browser import (
    CHROMIUM,
    LAUNCH_ARGS,
    LOCAL_FILE,
    block_outside,
    compare_as_the_view_does,
    settled,
    summary_lines,
    view_summary_lines,
)
from .conftest import XSS


@pytest.fixture(scope="module")
def tree(paper_tree):
    return paper_tree


def test_report_never_overwrites_without_being_asked(tree, tmp_path):
    path = tmp_path / "report.html"
    path.write_text("my notes")
    with pytest.raises(FileExistsError, match=r"overwrite=True"):
        dp.report(tree, path)
    assert path.read_text() == "my notes"
    with pytest.raises(ValueError, match=r"not an HTML page written by diversity-profiles"):
        tree.dp.report(path, overwrite=True)  # overwrite replaces only our own reports
    assert path.read_text() == "my notes"
    path.unlink()
    tree.dp.report(path)
    first = path.read_text()
    tree.dp.report(path, overwrite=True, title="Second")
    assert path.read_text().startswith("<!doctype html>") and path.read_text() != first


def test_report_opens_offline_and_stays_interactive(tree, tmp_path, monkeypatch):
    full = dp.compare(tree)
    t = tree["line/euclidean"].t.values
    at = dict(set_a="A", set_b=XSS, family="magnitude")
    last = compare_as_the_view_does(tree, {"magnitude": (t[-1], t[-1])}, monkeypatch)
    path = dp.report(tree, tmp_path / "report.html")
    text = path.read_text()
    assert "https://" not in text.split("<script")[0]  # the page loads nothing from outside
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_page()
        outside = block_outside(page, LOCAL_FILE)
        page.goto(path.as_uri())
        page.wait_for_function("window.__dpReady === true")
        page.wait_for_selector("#explorer section[data-family=magnitude] svg .mark-line path")
        cell = "#explorer section[data-family=magnitude] table tr:nth-child(2) td:nth-child(3)"
        # The cell shows the finding first, these samples' verdict after it.
        assert page.get_attribute(cell, "data-verdict") == str(
            full["line/euclidean"].finding.sel(**at).values
        )
        assert page.get_attribute(cell, "data-point") == "crosses"
        page.locator("#explorer section[data-family=magnitude] input[type=range]").first.focus()
        page.keyboard.press("End")
        settled(page)
        assert page.get_attribute(cell, "data-point") == "dominates"
        assert page.get_attribute(cell, "data-verdict") == str(
            last["line/euclidean"].finding.sel(**at).values
        )
        # The page leads with the finding: the title once, then the explorer's summary
        # (what the findings hold with, one sentence per family); the facts are folded.
        visible = page.locator("body").inner_text()
        assert visible.count("Diversity profiles — line/euclidean") == 1
        head = page.locator("#explorer .dp-headline").inner_text().splitlines()
        assert head[0].startswith(("Findings hold", "**No verdict is supported**"))
        assert head[head.index("") + 1].startswith("- Vendi score: ")
        assert visible.index(head[0]) < visible.index("Condition, sample sizes and settings")
        assert "Margins (leads" in visible and "Each pair in detail (1 pair)" in visible
        assert "line/euclidean" not in page.locator("table.dp-condition").inner_text()  # folded
        assert "line/euclidean" in page.locator("table.dp-condition").text_content()
        # The full domains' text summary, folded, shown only once opened; labels as text.
        assert "Summary of the full domains" in visible
        page.locator("details.dp-text summary").click()
        text = page.locator("pre.dp-summary-text").inner_text()
        assert XSS in text
        assert text.splitlines()[2].startswith(("Findings hold", "**No verdict is supported**"))
        assert view_summary_lines(page, "#explorer") == summary_lines(last)
        assert page.locator("img").count() == 0
        assert page.locator("details svg").count() == 1
        assert outside == []
        browser.close()
