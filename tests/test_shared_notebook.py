"""The shared-notebook path: execute with widget state, export to HTML, open offline.

A notebook that shows the explorer is executed with nbclient (widget state
stored), exported with nbconvert so that require.js, the widget manager and
anywidget are served from local files next to the HTML, and opened in Debian's
Chromium with every outside request blocked. The curves must be drawn from the
saved state alone (no kernel), a slider must change a verdict, and a hostile set
label must show as text: '<!--<script>' in the widget-state JSON once left its
<script> element open, so the explorer never mounted.
"""

import nbformat
import pytest
from playwright.sync_api import sync_playwright

from diversity_profiles import sharing

from .browser import CHROMIUM, LAUNCH_ARGS, block_outside, serve, settled
from .conftest import XSS

HOSTILE = "<!--<script>" + XSS

SOURCE = f"""\
import diversity_profiles as dp
tree = dp.profiles({{"A": [[1.0], [2.0], [3.0]], {HOSTILE!r}: [[0.0], [4.0]]}},
                   representation="line", distance="euclidean", n_points=20)
tree.dp.explore()
"""

FORMULA = r"Vendi of order $q$: $\left(\sum_i \lambda_i^q\right)^{1/(1-q)}$"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shared")
    source = folder / "analysis.ipynb"
    cells = [nbformat.v4.new_code_cell(SOURCE), nbformat.v4.new_markdown_cell(FORMULA)]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), source)
    executed = sharing.execute_notebook(source)
    nb = nbformat.read(executed, as_version=4)
    assert "application/vnd.jupyter.widget-state+json" in nb.metadata["widgets"]
    sharing.export_html(executed, folder / "notebook.html")
    return folder, nb


def test_helpers_never_overwrite_and_clean_metadata_for_github(exported, tmp_path):
    folder, _ = exported
    with pytest.raises(FileExistsError, match="overwrite=True"):
        sharing.execute_notebook(folder / "analysis.ipynb")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        sharing.export_html(folder / "analysis.executed.ipynb", folder / "notebook.html")
    # A notebook saved by JupyterLab without state: GitHub rejects its widgets metadata.
    broken = nbformat.v4.new_notebook()
    broken.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"version_major": 2}}
    path = tmp_path / "lab.ipynb"
    nbformat.write(broken, path)
    assert sharing.clean_widget_metadata(path) is True
    assert "widgets" not in nbformat.read(path, as_version=4).metadata
    assert sharing.clean_widget_metadata(folder / "analysis.executed.ipynb") is False


def test_executed_notebook_carries_fallbacks_for_readers_without_javascript(exported):
    _, nb = exported
    data = nb.cells[0].outputs[-1]["data"]
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["image/svg+xml"].lstrip().startswith("<svg")
    assert data["text/markdown"].startswith("### line/euclidean")


def test_exported_html_renders_offline_and_a_slider_changes_a_verdict(exported):
    folder, _ = exported
    with serve(folder) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_page()
        blocked = block_outside(page, url)
        dialogs, errors = [], []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{url}/notebook.html")
        page.wait_for_selector("section[data-family=magnitude] svg .mark-line path", timeout=60_000)
        cell = "section[data-family=magnitude] table tr:nth-child(2) td:nth-child(3)"
        # data-point: these samples' verdict (data-verdict is the finding: no uncertainty for
        # the toy sets of 3 and 2 points)
        assert page.get_attribute(cell, "data-point") == "crosses"
        lower = page.locator("section[data-family=magnitude] input[type=range]").first
        lower.focus()
        page.keyboard.press("End")  # the domain shrinks to the largest scale: A is ahead there
        settled(page)
        assert page.get_attribute(cell, "data-point") == "dominates"
        assert (
            page.get_by_text(HOSTILE).count() > 0 and page.locator(".dp-explorer img").count() == 0
        )
        # LaTeX in Markdown is typeset by the MathJax copied beside the page.
        page.wait_for_selector(".MathJax_CHTML", timeout=30_000)
        assert page.locator(".MathJax_CHTML").count() >= 2
        assert blocked == []  # nothing outside the folder was even asked for
        assert dialogs == [] and errors == []
        browser.close()
