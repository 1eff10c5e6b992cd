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

import diversity_profiles as dp
from diversity_profiles.display._explorer import ProfileExplorer

from .browser import block_outside, serve, write_page
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
    return out[1:-1]  # the end labels are flush with the axis ends, not centred on their ticks


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


def axis_ends(pg, family, log):
    """The values the x axis reads at its two ends, from its labelled ticks."""
    line = pg.locator(
        f"section[data-family={family}] svg g.role-axis[aria-label^='X-axis'] .role-axis-domain line"  # noqa: E501
    ).bounding_box()
    ticks = x_ticks(pg, family)
    (v0, c0, _), (v1, c1, _) = ticks[0], ticks[-1]
    f, g = (np.log, np.exp) if log else ((lambda v: v), (lambda v: v))

    def value(px):
        return float(g(f(v0) + (px - c0) / (c1 - c0) * (f(v1) - f(v0))))

    return value(line["x"]), value(line["x"] + line["width"])


@pytest.mark.parametrize(
    ("family", "param", "log"),
    [("magnitude", "t", True), ("circles", "tau", False), ("energy", "s", True)],
)
def test_x_axes_span_the_data_and_no_more(page, tree, family, param, log):
    pg, _, _ = page
    grid = tree[CONDITION].to_dataset()[param].values
    drawn = grid[np.isfinite(grid) & ((grid > 0) if log else True)]
    lo, hi = axis_ends(pg, family, log)
    span = math.log(drawn.max() / drawn.min()) if log else drawn.max() - drawn.min()
    # Within 1% of the span (pixel rounding of the tick labels), not a "nice" padding.
    gap = (lambda a, b: abs(math.log(a / b))) if log else (lambda a, b: abs(a - b))
    assert gap(lo, drawn.min()) < 0.01 * span and gap(hi, drawn.max()) < 0.01 * span, (lo, hi)


def test_the_compared_domain_is_labelled_and_follows_the_slider(page, tree):
    pg, _, errors = page
    tau = tree[CONDITION].to_dataset().tau.values
    panel = "section[data-family=circles]"

    def label():
        return pg.locator(f"{panel} svg .mark-text.role-mark text").first.text_content()

    assert label() == f"compared: τ ∈ [{three(tau[0]):g}, {three(tau[-1]):g}]"
    slider = pg.locator(f"{panel} input[type=range]").first
    slider.focus()
    pg.keyboard.press("ArrowRight")
    pg.keyboard.press("ArrowRight")
    pg.wait_for_function(
        f"document.querySelector('{panel} svg .mark-text.role-mark text').textContent"
        f".includes('[{three(tau[2]):g},')"
    )
    # Inside the shading it names.
    shade = pg.locator(f"{panel} svg .layer_0_marks path").first.bounding_box()
    text = pg.locator(f"{panel} svg .mark-text.role-mark text").first.bounding_box()
    assert (
        shade["x"] - 1 <= text["x"] and text["x"] + text["width"] <= shade["x"] + shade["width"] + 1
    )
    pg.keyboard.press("Home")
    vendi = pg.locator("section[data-family=vendi] svg .mark-text.role-mark text").first
    assert vendi.text_content() == "compared: q ∈ [0, ∞]"
    assert errors == []


ROWS = """() => {
  const grid = document.querySelector('.dp-grid').getBoundingClientRect();
  const rows = new Map();
  for (const s of document.querySelectorAll('.dp-grid > section.dp-panel')) {
    const r = s.getBoundingClientRect();
    const key = Math.round(r.top);
    rows.set(key, [...(rows.get(key) || []), {
      family: s.dataset.family, left: r.left, width: r.width, right: r.right,
      chart: s.querySelector('svg')?.getBoundingClientRect().width ?? null,
      // The matrix inside the panel, or reachable by scrolling the panel sideways.
      matrix: s.querySelector('table').getBoundingClientRect().right <= r.right + 0.5
        || (['auto', 'scroll'].includes(getComputedStyle(s).overflowX)
            && s.scrollWidth >= s.querySelector('table').offsetWidth) }]);
  }
  return { width: grid.width, left: grid.left, rows: [...rows.values()] };
}"""


@pytest.mark.parametrize("width", [1440, 900, 1700])
def test_panels_fill_the_width_in_a_grid_with_charts_sized_to_them(browser, served, width):
    pg, blocked, errors = open_page(browser, served, width)
    pg.wait_for_function("[...document.querySelectorAll('section.dp-panel svg')].length === 4")
    pg.wait_for_timeout(300)  # the charts follow their panel's width on the next frame
    got = pg.evaluate(ROWS)
    assert got["width"] > 0.9 * (width - 16)  # the explorer takes the output's width
    counts = [len(row) for row in got["rows"]]
    assert sum(counts) == 6 and (len(counts) > 1 or width > 2400)
    for row in got["rows"]:
        assert sum(p["width"] for p in row) >= 0.9 * got["width"], (width, row)
        assert row[-1]["right"] <= got["left"] + got["width"] + 1
        full = [p for p in row if p is not row[-1]] or row
        assert max(p["width"] for p in full) - min(p["width"] for p in full) < 1.5  # not ragged
        for p in row:
            if p["chart"] is not None:  # each chart as wide as its panel (less the padding)
                assert p["chart"] >= p["width"] - 2 * 8 - 2 - 2, p
            assert p["matrix"], p  # the matrix is not cut off
    assert errors == [] and blocked == []
    pg.close()


def test_a_placeholder_shows_until_the_charts_are_drawn(browser, served):
    pg, _, errors = open_page(browser, served, 900)
    assert pg.locator(".dp-loading").is_hidden()
    # A fresh view: the placeholder is there before Vega has compiled any chart.
    before = pg.evaluate(
        """() => {
          window.__cleanup();
          window.__cleanup = window.__render();
          const note = document.querySelector('.dp-loading');
          return { text: note.textContent, shown: !note.hidden && note.offsetHeight > 0,
                   charts: document.querySelectorAll('section.dp-panel svg').length };
        }"""
    )
    assert before == {"text": "Drawing profiles…", "shown": True, "charts": 0}
    pg.wait_for_selector(".dp-loading", state="hidden")
    assert pg.locator("section.dp-panel svg .mark-line path").count() > 0
    assert errors == []
    pg.close()


def test_the_explanation_opens_below_the_clicked_chart_in_the_grid(tmp_path, browser):
    rng = np.random.default_rng(2)
    sets = {"A": rng.normal(size=(20, 3)), "B": rng.normal(size=(18, 3)) * 0.6}
    tree = dp.explain(dp.profiles(sets, representation="x", distance="euclidean", n_points=8), sets)
    write_page(tmp_path, BUNDLE, ProfileExplorer(tree).get_state())
    with serve(tmp_path) as url:
        pg, _, errors = open_page(browser, url, 1440)
        box = pg.locator("section[data-family=magnitude] svg").bounding_box()
        pg.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        pg.wait_for_selector(".dp-explain.dp-inline")
        got = pg.evaluate(
            """() => {
              const box = document.querySelector('.dp-explain').getBoundingClientRect();
              const grid = document.querySelector('.dp-grid').getBoundingClientRect();
              const row = [...document.querySelectorAll('section.dp-panel')]
                .map((s) => s.getBoundingClientRect())
                .filter((r) => Math.abs(r.top - document.querySelector(
                  'section[data-family=magnitude]').getBoundingClientRect().top) < 1);
              return { width: box.width, grid: grid.width, top: box.top,
                       rowBottom: Math.max(...row.map((r) => r.bottom)), inRow: row.length };
            }"""
        )
        # A full row of the grid, right under the clicked chart's row (which stays whole).
        assert got["inRow"] == 3 and abs(got["width"] - got["grid"]) < 1.5, got
        assert 0 <= got["top"] - got["rowBottom"] <= 20, got
        assert errors == []
        pg.close()
