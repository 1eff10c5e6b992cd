"""The explorer's speed in a real browser (Debian's Chromium, headless, via Playwright).

- first render of 10 sets × 4 families × 200 points (target < 1 s): from the call
  of ``render`` until every chart has drawn its SVG (also reported: from the page's
  DOMContentLoaded, which adds loading the 0.87 MB bundle and the state);
- a slider move until the verdicts are updated (target < 50 ms): the input
  handler recomputes every family's dominance matrix and the summary
  synchronously, so the time around ``dispatchEvent`` is the whole update.

Run: ``python benchmarks/widget.py`` (needs ``pip install -e ".[test]"`` and chromium);
prints JSON and writes ``benchmarks/widget_results.json``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import xarray as xr
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import CHROMIUM, LAUNCH_ARGS, block_outside, serve, write_page  # noqa: E402

import diversity_profiles as dp  # noqa: E402
from diversity_profiles.display._explorer import ProfileExplorer  # noqa: E402


def tree(n_sets=10, n_points=200, seed=0):
    """Ten sets' curves on four parameterised families (smooth, crossing curves)."""
    rng = np.random.default_rng(seed)
    labels = [f"set {i}" for i in range(n_sets)]
    data, coords = {}, {"set": labels}
    for name in ("vendi", "magnitude", "circles", "energy"):
        fam = dp.FAMILIES[name]
        grid = np.geomspace(0.1, 10, n_points)
        coords[fam.parameter] = grid
        curves = rng.random((n_sets, 1)) * 5 + rng.random((n_sets, 1)) * np.log(grid)
        data[name] = (("set", fam.parameter), curves, {"family": name})
    ds = xr.Dataset(data, coords=coords, attrs={"representation": "r", "distance": "d"})
    return xr.DataTree.from_dict({"r/d": ds})


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    write_page(
        folder,
        Path(dp.__file__).parent / "static" / "widget.js",
        ProfileExplorer(tree()).get_state(),
    )
    results = []
    with serve(folder) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        for _ in range(3):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            block_outside(page, url)
            page.goto(f"{url}/index.html")
            page.wait_for_function("window.__ready === true")
            page.wait_for_function(
                "[...document.querySelectorAll('section.dp-panel')]"
                ".filter((s) => s.querySelector('svg g.mark-line')).length === 4",
                polling=5,
            )
            drawn = page.evaluate("performance.now()")
            first = drawn - page.evaluate("window.__t0")
            with_load = drawn - page.evaluate(
                "performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"
            )
            render_ms = page.evaluate("window.__renderMs")
            slider = page.evaluate("""() => {
                const input = document.querySelector('section[data-family=magnitude] input');
                const times = [];
                for (let k = 1; k <= 50; k++) {
                  input.value = String(k);
                  const t0 = performance.now();
                  input.dispatchEvent(new Event('input'));
                  times.push(performance.now() - t0);
                }
                times.sort((a, b) => a - b);
                return { median: times[25], max: times[49] };
            }""")
            results.append(
                {
                    "render_call_ms": render_ms,
                    "until_drawn_ms": first,
                    "page_load_to_drawn_ms": with_load,
                    "slider_median_ms": slider["median"],
                    "slider_max_ms": slider["max"],
                }
            )
            page.close()
        browser.close()
    best = {k: round(min(r[k] for r in results), 1) for k in results[0]}
    report = {
        "what": "10 sets x 4 families x 200 points, headless Debian chromium",
        "best_of_3": best,
        "targets": {"first render": "< 1000 ms", "slider to verdicts": "< 50 ms"},
        "pass": best["until_drawn_ms"] < 1000 and best["slider_median_ms"] < 50,
        "load": os.getloadavg()[0],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    print(json.dumps(report, indent=2))
    Path(__file__).with_name("widget_results.json").write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
