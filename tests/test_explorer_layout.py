"""The explorer's charts and layout in Debian's Chromium (issue 23): hover tooltips at the
nearest grid point rounded to 3 significant figures, x axes fitted to the data, labelled
domain shading, a grid of panels that fills the output at 1440 and 900 px, and a loading
placeholder until the first charts are drawn. Every expected value is read from the tree
here, not from the view.
"""

import math
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import sync_playwright

import diversity_profiles as dp
from diversity_profiles.display._explorer import ProfileExplorer

from .browser import CHROMIUM, LAUNCH_ARGS, block_outside, serve, write_page
from .conftest import XSS

BUNDLE = Path(dp.__file__).parent / "static" / "widget.js"
CONDITION = "x/euclidean"


@pytest.fixture(scope="module")
def tree():
    rng = np.random.default_rng(5)
    sets = {f"k={k}": rng.normal(size=(25, 3)) * (1 + k / 4) for k in range(5)}
    sets[XSS] = rng.normal(size=(20, 3)) * 0.7
    return dp.profiles(sets, representation="x", distance="euclidean", n_points=12)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def served(tree, tmp_path_factory):
    folder = tmp_path_factory.mktemp("layout_page")
    write_page(folder, BUNDLE, ProfileExplorer(tree).get_state())
    with serve(folder) as url:
        yield url


def open_page(browser, url, width):
    page = browser.new_page(viewport={"width": width, "height": 1000})
    blocked = block_outside(page, url)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{url}/index.html")
    page.wait_for_function("window.__ready === true")
    page.wait_for_selector("section[data-family=circles] svg .mark-line path")
    return page, blocked, errors


@pytest.fixture(scope="module")
def page(browser, served):
    page, blocked, errors = open_page(browser, served, 1440)
    yield page, blocked, errors
    page.close()


def x_ticks(pg, family):
    """(value, pixel centre) of a chart's labelled x ticks."""
    labels = pg.locator(
        f"section[data-family={family}] svg g.role-axis[aria-label^='X-axis'] .role-axis-label text"
    ).all()
    out = []
    for t in labels:
        text = (t.text_content() or "").replace("−", "-")
        if text:
            box = t.bounding_box()
            out.append((float(text), box["x"] + box["width"] / 2, box["y"]))
    return out


def pixel_of(pg, family, x, log):
    """The page pixel where a chart's x axis reads ``x`` (between two labelled ticks)."""
    ticks = x_ticks(pg, family)
    f = np.log if log else (lambda v: v)
    values = [v for v, _, _ in ticks]
    k = min(max(int(np.searchsorted(values, x)) - 1, 0), len(values) - 2)
    (v0, c0, y0), (v1, c1, _) = ticks[k], ticks[k + 1]
    return c0 + (f(x) - f(v0)) / (f(v1) - f(v0)) * (c1 - c0), y0


def three(v: float) -> float:
    return float(f"{v:.3g}")


def test_hover_shows_every_set_at_the_nearest_grid_point_to_3_figures(page, tree):
    pg, blocked, errors = page
    ds = tree[CONDITION].to_dataset()
    t = ds.t.values
    i = len(t) // 2
    px, label_y = pixel_of(pg, "magnitude", t[i], log=True)
    # Off the grid point by a third of the way to the next one, and far from any line.
    nxt, _ = pixel_of(pg, "magnitude", t[i + 1], log=True)
    pg.mouse.move(px + (nxt - px) / 3, label_y - 30)
    tip = pg.locator("#vg-tooltip-element")
    tip.wait_for(state="visible")
    lines = [line.strip() for line in tip.inner_text().splitlines() if line.strip()]
    assert lines[0] == f"magnitude at t = {three(t[i]):g}"
    rows = dict(zip(lines[1::2], lines[2::2], strict=True))
    assert list(rows) == list(ds.set.values)  # every set, the hostile label as text
    for k, name in enumerate(ds.set.values):
        value, _, band = rows[name].partition(" [")
        assert float(value) == three(ds.magnitude.values[k, i])
        digits = value.replace("-", "").replace(".", "").lstrip("0")
        assert len(digits) <= 3
        lo, hi = (float(v) for v in band.rstrip("]").split(", "))
        assert lo == three(ds.magnitude_ci_lower.values[k, i])
        assert hi == three(ds.magnitude_ci_upper.values[k, i])
    assert tip.locator("img, script").count() == 0
    # The display names: the family's long name and the parameter's axis title.
    title = pg.locator("section[data-family=circles] svg .role-title-text").first.text_content()
    assert title == "number of circles"
    pg.mouse.move(0, 0)
    assert errors == [] and blocked == []
