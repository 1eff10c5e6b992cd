"""Screenshots of the explorer in JupyterLab's Light and Dark themes, for the docs.

    python scripts/screenshots.py        # writes docs/explorer_light.png, docs/explorer_dark.png

Profiles scikit-learn's bundled digits (the demo's three sets: 1, 3 and 10 classes), renders
the real bundled widget in Debian's Chromium (no network: every outside request blocked)
under the theme stylesheet of the installed JupyterLab, and saves the explorer element.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402
from tests.browser import CHROMIUM, LAUNCH_ARGS, block_outside, serve, write_themed_page  # noqa: E402

import diversity_profiles as dp  # noqa: E402
from diversity_profiles.demo import digit_sets  # noqa: E402

BUNDLE = ROOT / "src" / "diversity_profiles" / "static" / "widget.js"


def main() -> None:
    tree = dp.profiles(digit_sets(), representation="pixels", distance="euclidean")
    state = dp.ProfileExplorer(tree).get_state()
    for theme in ("light", "dark"):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            write_themed_page(folder, BUNDLE, state, theme)
            with serve(folder) as url, sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                block_outside(page, url)
                page.goto(f"{url}/index.html")
                page.wait_for_function("window.__ready === true")
                page.wait_for_selector("section[data-family=vendi] svg .mark-line path")
                out = ROOT / "docs" / f"explorer_{theme}.png"
                page.locator(".dp-explorer").screenshot(path=str(out))
                browser.close()
            print(out)


if __name__ == "__main__":
    main()
