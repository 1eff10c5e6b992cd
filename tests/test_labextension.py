"""The JupyterLab / Notebook 7 extension: saved notebooks stay interactive with no kernel.

A notebook showing the explorer is executed with nbclient *without* widget state
(what JupyterLab saves by default), its kernelspec removed, and opened in a real
JupyterLab and a real Notebook 7 in Debian's Chromium. No kernel may start; the
extension, installed with the package, must draw the explorer from the output's
diversity-profiles MIME data, and a slider must change a verdict in the page.
"""

import json
import urllib.request

import nbformat
import pytest
from nbclient import NotebookClient
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import sync_playwright

from diversity_profiles.display._explorer import MIME_TYPE

from .browser import CHROMIUM, LAUNCH_ARGS, block_outside, jupyterlab, view_summary_lines
from .conftest import XSS

SOURCE = f"""\
import numpy as np
import diversity_profiles as dp
line = {{"A": [[1.0], [2.0], [3.0]], {XSS!r}: [[0.0], [4.0]]}}
tree = dp.merge([
    dp.profiles(line, representation="line", distance="euclidean", n_points=20),
    dp.profiles({{k: np.hstack([v, v]) for k, v in line.items()}}, representation="plane",
                distance="euclidean", n_points=20),
])
tree.dp.explore()
"""
OPEN_END = "section[data-family=magnitude]"
VERDICT = f".dp-mime-explorer {OPEN_END} table tr:nth-child(2) td:nth-child(3)"


@pytest.fixture(scope="module")
def saved_notebook(tmp_path_factory):
    root = tmp_path_factory.mktemp("saved")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SOURCE)])
    NotebookClient(nb, kernel_name="python3", store_widget_state=False).execute()
    # As a collaborator receives it: no widget state, no kernel to start.
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("kernelspec", None)
    nb.metadata.pop("language_info", None)  # else JupyterLab starts a kernel for the language
    nbformat.write(nb, root / "shared.ipynb")
    return root, nb


def test_every_explorer_display_carries_the_kernel_free_payload(saved_notebook):
    _, nb = saved_notebook
    data = nb.cells[0].outputs[-1]["data"]
    assert {MIME_TYPE, "application/vnd.jupyter.widget-view+json", "image/svg+xml"} <= set(data)
    payload = data[MIME_TYPE]
    assert payload["version"] == 1
    assert sorted(payload["conditions"]) == ["line/euclidean", "plane/euclidean"]
    assert payload["conditions"]["line/euclidean"]["spec"]["sets"] == ["A", XSS]


def running_kernels(url: str) -> list:
    with urllib.request.urlopen(f"{url}/api/kernels", timeout=5) as response:
        return json.load(response)


@pytest.mark.parametrize("app", ["jupyterlab", "notebook"])
def test_saved_notebook_is_interactive_without_kernel_or_widget_state(saved_notebook, app):
    root, _ = saved_notebook
    path = "lab/tree/shared.ipynb" if app == "jupyterlab" else "notebooks/shared.ipynb"
    with jupyterlab(root, app=app) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        blocked = block_outside(page, url)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(f"{error}\n{error.stack}"))
        # Asked which kernel to start (the notebook names none), the reader declines.
        page.add_locator_handler(
            page.locator(".jp-Dialog"),
            lambda dialog: dialog.get_by_role("button", name="No Kernel").click(),
        )
        page.goto(f"{url}/{path}")
        page.wait_for_function("window.jupyterapp && window.jupyterapp.shell", timeout=60_000)
        page.wait_for_selector(f".dp-mime-explorer {OPEN_END} svg .mark-line path", timeout=60_000)
        # The kernel-free view: no buttons that would need Python.
        assert page.locator(".dp-mime-explorer .dp-explorer.dp-offline").count() == 1
        # Two and three samples give no uncertainty: the cell's finding says so, and its point
        # verdict (these samples' own, kept in data-point) is what the slider moves.
        assert page.get_attribute(VERDICT, "data-verdict") == "no uncertainty"
        assert page.get_attribute(VERDICT, "data-point") == "crosses"
        # Pressed on the slider itself (focus first), and again if the key was lost: the app
        # may still move focus while its kernel dialog closes (seen in Notebook 7, and once in
        # JupyterLab on a loaded machine). End is idempotent on a slider at its end.
        slider = page.locator(f".dp-mime-explorer {OPEN_END} input[type=range]").first
        dominates = f"document.querySelector({VERDICT!r}).dataset.point === 'dominates'"
        for attempt in range(4):
            slider.press("End")
            try:
                page.wait_for_function(dominates, timeout=5_000)
                break
            except PlaywrightTimeoutError:
                if attempt == 3:
                    raise
        # Each pair's detail (behind its disclosure): the label is text, never markup.
        summary = "\n".join(view_summary_lines(page, ".dp-mime-explorer"))
        assert f"A ≻ {XSS} in magnitude" in summary
        # The condition selector works offline: the payload carries every condition.
        page.select_option(".dp-mime-explorer select[aria-label=condition]", "plane/euclidean")
        page.wait_for_function(
            "document.querySelector('.dp-mime-explorer h3').textContent.endsWith('plane/euclidean')"
        )
        assert "Error displaying widget" not in page.locator(".jp-OutputArea").inner_text()
        page.screenshot(path=str(root / f"{app}.png"))
        assert running_kernels(url) == []
        # Notebook 7 itself logs a settings-schema error on load; none may come from us.
        assert [e for e in errors if "diversity-profiles" in e] == []
        assert blocked == []
        browser.close()
