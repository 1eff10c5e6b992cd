"""Live round trip in a real JupyterLab: browser slider -> Python, Python -> browser DOM.

With diversity-profiles' JupyterLab extension installed, its kernel-free renderer
outranks the widget renderer; here, with a live kernel, it must hand over to the
live widget (the grid extension below only works through Python).

Starts JupyterLab on 127.0.0.1, opens a notebook in Debian's Chromium, runs it,
moves a domain slider from the keyboard and checks the kernel saw the new
``explorer.domains`` (an observer in the notebook writes every change to a
file), then runs a cell that assigns ``explorer.domains`` and checks the slider
in the page moved.
"""

import json
import time

import nbformat
import pytest
from playwright.sync_api import sync_playwright

from .browser import CHROMIUM, LAUNCH_ARGS, block_outside, jupyterlab

SETUP = """\
import json
import os
import diversity_profiles as dp
profiler = dp.Profiler({"A": [[1.0], [2.0], [3.0]], "B": [[0.0], [4.0]]},
                       representation="line", distance="euclidean")
tree = profiler.profiles(n_points=20)
grid = tree["line/euclidean"].t.values
explorer = tree.dp.explore(profiler=profiler)  # its matrices let "more" extend a domain
def save_domains(change):  # written beside and renamed: the test never reads half a file
    with open("domains.json.partial", "w") as f:
        f.write(json.dumps(change["new"]))
    os.replace("domains.json.partial", "domains.json")
explorer.observe(save_domains, names="domains")
explorer
"""
RESET = 'explorer.domains = {"magnitude": [float(grid[0]), float(grid[-1])]}'


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    nb = nbformat.v4.new_notebook(
        cells=[  # under a heading: ArrowLeft in the notebook collapses it (and the explorer)
            nbformat.v4.new_markdown_cell("# Explorer"),
            nbformat.v4.new_code_cell(SETUP),
            nbformat.v4.new_code_cell(RESET),
        ]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, root / "live.ipynb")
    with jupyterlab(root) as url:
        yield url, root


def _open_and_run(p, url: str, family: str):
    """Chromium on the live notebook with every cell run, once ``family``'s chart is
    drawn: (browser, page)."""
    browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    block_outside(page, url)
    page.goto(f"{url}/lab/tree/live.ipynb")
    page.wait_for_function("window.jupyterapp && window.jupyterapp.shell", timeout=60_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    page.wait_for_timeout(2000)  # let the kernel start before running the cells
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_selector(f"section[data-family={family}] svg .mark-line path", timeout=90_000)
    return browser, page


def _first_domains(root) -> dict:
    """The kernel's explorer.domains, once the notebook's RESET cell has written them."""
    domains_file = root / "domains.json"
    deadline = time.monotonic() + 30  # the RESET cell runs after the view appears
    while not domains_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    return json.loads(domains_file.read_text())


def test_slider_reaches_the_kernel_and_the_kernel_reaches_the_slider(lab):
    url, root = lab
    with sync_playwright() as p:
        browser, page = _open_and_run(p, url, "magnitude")
        slider = "section[data-family=magnitude] input[type=range]"
        # The extension's renderer handed over to the live widget: one explorer, with a kernel.
        page.wait_for_timeout(500)
        assert page.locator(".dp-mime-explorer").count() == 1
        assert page.locator(".dp-explorer").count() == 1
        assert page.locator(".dp-explorer.dp-offline").count() == 0
        domains_file = root / "domains.json"
        first = _first_domains(root)

        lower = page.locator(slider).first
        lower.focus()
        page.keyboard.press("End")
        deadline = time.monotonic() + 20
        seen = first
        while seen == first and time.monotonic() < deadline:
            time.sleep(0.2)
            seen = json.loads(domains_file.read_text())
        lo, hi = seen["magnitude"]
        assert lo == hi == first["magnitude"][1]  # the kernel has the browser's domain

        # Widening beyond the computed grid: Python computes 10 more scales and sends them.
        assert page.locator(slider).first.get_attribute("max") == "19"
        page.locator("section[data-family=magnitude] button.dp-extend[data-side=high]").click()
        page.wait_for_function(f"document.querySelector('{slider}').max === '29'", timeout=30_000)

        # Python -> browser: run the RESET cell again; the slider returns to the start.
        page.locator(".jp-Cell").nth(2).click()
        page.keyboard.press("Shift+Enter")
        page.wait_for_function(f"document.querySelector('{slider}').value === '0'", timeout=20_000)
        browser.close()


def test_vendi_domain_to_q_infinity_and_back_keeps_kernel_and_view_in_step(lab):
    # Vendi's grid ends at q = ∞, which JSON cannot carry as a number: the lower handle is
    # sent to the end (q = ∞) and back, and the kernel must hold what the view shows each
    # time, with no error (it raised a TypeError on every move when ∞ arrived as null).
    url, root = lab
    with sync_playwright() as p:
        browser, page = _open_and_run(p, url, "vendi")
        slider = "section[data-family=vendi] input[type=range]"
        domains_file = root / "domains.json"
        _first_domains(root)

        def kernel_sees(want):
            deadline = time.monotonic() + 20
            seen = None
            while time.monotonic() < deadline:
                seen = json.loads(domains_file.read_text()).get("vendi")
                if seen == want:
                    return True
                time.sleep(0.2)
            raise AssertionError(f"the kernel holds vendi {seen}, the view shows {want}")

        lower = page.locator(slider).first
        # Arrow keys move the slider, not the notebook (JupyterLab took them: ArrowUp went
        # to the previous cell, ArrowLeft collapsed a heading).
        active = "window.jupyterapp.shell.currentWidget.content.activeCellIndex"
        lower.focus()  # focus inside a cell's output makes that cell the active one
        cell_before = page.evaluate(active)
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowUp")
        assert lower.input_value() == "2"
        assert page.evaluate(active) == cell_before
        lower.focus()
        page.keyboard.press("End")
        kernel_sees([float("inf"), float("inf")])
        lower.focus()
        page.keyboard.press("Home")
        kernel_sees([0.0, float("inf")])
        # The view kept its upper handle at the end (q = ∞), never snapped onto the lower.
        upper = page.locator(slider).nth(1)
        assert upper.input_value() == upper.get_attribute("max")
        errors = page.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
        )
        assert errors.count() == 0, errors.all_inner_texts()
        browser.close()


def test_range_handles_take_the_keys_inside_jupyterlab(lab):
    # A handle of the one two-handled control, focused inside the live explorer: Arrow keys,
    # Home and End move the domain (the label, and explorer.domains in the kernel), and the
    # notebook acts on none of them (the widget marks the focused control
    # data-lm-suppress-shortcuts: ArrowUp moved to the previous cell, ArrowLeft collapsed
    # the heading above and hid the explorer).
    url, root = lab
    with sync_playwright() as p:
        browser, page = _open_and_run(p, url, "circles")
        section = "section[data-family=circles]"
        domains_file = root / "domains.json"
        _first_domains(root)
        code = 'import json; print(json.dumps(tree["line/euclidean"].tau.values.tolist()))'
        tau = json.loads(
            page.evaluate(  # the grid as the kernel holds it, from the kernel
                """async (code) => {
                  const nb = window.jupyterapp.shell.currentWidget;
                  const future = nb.sessionContext.session.kernel.requestExecute({ code });
                  let out = '';
                  future.onIOPub = (msg) => {
                    if (msg.header.msg_type === 'stream') out += msg.content.text;
                  };
                  await future.done;
                  return out;
                }""",
                code,
            )
        )
        n = len(tau)
        label = page.locator(f"{section} .dp-range-label")
        lower, upper = page.locator(f"{section} .dp-range input[type=range]").all()

        def three(x):
            return f"{float(f'{x:.3g}'):g}"

        def kernel_sees(lo, hi):
            want = [tau[lo], tau[hi]]
            deadline = time.monotonic() + 20
            seen = None
            while time.monotonic() < deadline:
                seen = json.loads(domains_file.read_text()).get("circles")
                if seen == want:
                    return
                time.sleep(0.2)
            raise AssertionError(f"the kernel holds circles {seen}, the view shows {want}")

        def shows(lo, hi):
            assert label.inner_text() == f"compare over τ ∈ [{three(tau[lo])}, {three(tau[hi])}]"
            kernel_sees(lo, hi)

        active = "window.jupyterapp.shell.currentWidget.content.activeCellIndex"
        collapsed = (  # a heading folded by the notebook (the explorer's cell hidden under it)
            "window.jupyterapp.shell.currentWidget.content.widgets"
            ".some((w) => w.headingCollapsed || w.isHidden)"
        )
        lower.focus()  # focus inside a cell's output makes that cell the active one
        cell_before = page.evaluate(active)
        assert cell_before == 1
        for key, lo, hi in (("ArrowRight", 1, n - 1), ("ArrowRight", 2, n - 1),
                            ("ArrowLeft", 1, n - 1), ("End", n - 1, n - 1),
                            ("Home", 0, n - 1)):  # fmt: skip
            page.keyboard.press(key)
            shows(lo, hi)
            assert page.evaluate(active) == cell_before
            assert not page.evaluate(collapsed)
            assert page.locator(f"{section} svg").is_visible()
        upper.focus()
        for key, hi in (("ArrowLeft", n - 2), ("Home", 0), ("End", n - 1)):
            page.keyboard.press(key)
            shows(0, hi)
            assert page.evaluate(active) == cell_before
            assert not page.evaluate(collapsed)
        assert page.evaluate("document.activeElement.dataset.end") == "upper"
        # The check can fail: the same key on the heading cell, in command mode, collapses it.
        page.locator(".jp-Cell").nth(0).click()
        page.keyboard.press("Escape")
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(collapsed, timeout=5_000)
        assert not page.locator(f"{section} svg").is_visible()
        browser.close()
