"""Write docs/explain_panels.png: the explorer's "Why does it say that?" panels on digits.

Run from the repository root after ``npm run build`` (needs Debian's chromium):
``python scripts/explain_screenshot.py``. The page is the test page of
tests/browser.py (the real bundle, the widget's real state), with no network.
"""

from __future__ import annotations

import io
import sys
import tempfile
from pathlib import Path

import numpy as np
import xarray as xr
from PIL import Image
from playwright.sync_api import sync_playwright
from sklearn.datasets import load_digits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import CHROMIUM, LAUNCH_ARGS, block_outside, serve, write_page  # noqa: E402

import diversity_profiles as dp  # noqa: E402
from diversity_profiles.display._explorer import ProfileExplorer  # noqa: E402


def main() -> int:
    digits = load_digits()
    rng = np.random.default_rng(0)
    index = {
        "all ten": rng.choice(len(digits.target), 150, replace=False),
        "0-4 only": rng.choice(np.flatnonzero(digits.target < 5), 150, replace=False),
    }
    sets = {k: digits.data[i] / 16.0 for k, i in index.items()}
    tree = dp.profiles(
        sets,
        representation="pixels",
        distance="euclidean",
        families=["vendi", "magnitude", "circles", "richness"],
        n_points=20,
    )
    out = dp.explain(
        tree,
        sets,
        samples={k: digits.images[i] for k, i in index.items()},
        categories={k: digits.target[i].astype(str) for k, i in index.items()},
    )
    conv = dp.convergence(
        sets,
        sizes=[10, 25, 50, 150],
        like=tree,
        families=["vendi"],
        repeats=3,
        show_progress=False,
    )
    out["pixels/euclidean/convergence"] = xr.DataTree(conv)
    tau = out["pixels/euclidean/samples/set_0"]["circles_member"].attrs["tau"]
    shots = []
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as p:
        write_page(
            Path(folder),
            ROOT / "src/diversity_profiles/static/widget.js",
            ProfileExplorer(out).get_state(),
        )
        with serve(Path(folder)) as url:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            page = browser.new_page(viewport={"width": 1250, "height": 1400})
            block_outside(page, url)
            page.goto(f"{url}/index.html")
            page.wait_for_function("window.__ready === true")
            page.wait_for_selector("section[data-family=circles] svg .mark-line path")
            # Click the Circles chart at the stored tau (the witness shown is that packing).
            axis = "section[data-family=circles] svg g.role-axis[aria-label^='X-axis']"
            labels = page.locator(f"{axis} .role-axis-label text").all()
            pairs = [(float(t.text_content()), t.bounding_box()) for t in labels]
            k = max(i for i, (v, _) in enumerate(pairs[:-1]) if v <= tau)
            (v0, b0), (v1, b1) = pairs[k], pairs[k + 1]
            c0, c1 = b0["x"] + b0["width"] / 2, b1["x"] + b1["width"] / 2
            x = c0 + (tau - v0) / (v1 - v0) * (c1 - c0)
            page.mouse.click(x, b0["y"] - 40)
            page.wait_for_selector(".dp-explain .dp-witness[data-family=circles]")
            page.wait_for_timeout(300)
            shots.append(page.locator(".dp-explain").screenshot())
            page.click(".dp-explain button[data-tab=distances]")
            page.wait_for_timeout(800)
            shots.append(
                page.locator(".dp-explain [role=tabpanel][data-tab=distances]").screenshot()
            )
            browser.close()
    images = [Image.open(io.BytesIO(s)).convert("RGB") for s in shots]
    width = max(im.width for im in images)
    canvas = Image.new("RGB", (width, sum(im.height for im in images)), "white")
    y = 0
    for im in images:
        canvas.paste(im, (0, y))
        y += im.height
    target = ROOT / "docs" / "explain_panels.png"
    canvas.save(target, optimize=True)
    print(f"wrote {target.relative_to(ROOT)} ({target.stat().st_size // 1024} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
