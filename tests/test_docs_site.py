"""The documentation site builds strictly and every page works offline in Chromium.

The site is built once per module from a copy of the repository's docs/ (with the
notebooks the suite executed once, ``executed_notebooks``), by the same script a user
runs, ``python docs/build.py``. Then, in Debian's Chromium with every request that does
not go to the loopback server aborted: no page logs a console error or asks for anything
outside, every explorer on every page mounts, sliders move and the explorer follows,
and the explorer's text stays readable on the light and the dark theme. A strict build
is shown able to fail (a broken reference), and the built inventory holds every public
name the API reference test lists.
"""

import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from .browser import LOCAL_FILE, block_outside, serve, settled
from .conftest import docs_build
from .test_api_reference import public_names

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory, executed_notebooks):
    """(the copied repository, the built html folder, the build's exit code and output)."""
    failed = {k: v for k, v in executed_notebooks.items() if isinstance(v, Exception)}
    if failed:
        pytest.fail(f"notebooks did not run, so the site cannot be built: {sorted(failed)}")
    repo = tmp_path_factory.mktemp("docs-repo")
    shutil.copytree(
        ROOT / "docs",
        repo / "docs",
        ignore=shutil.ignore_patterns("_build", "*.ipynb", "generated", "__pycache__"),
    )
    shutil.copy(ROOT / "CHANGELOG.md", repo / "CHANGELOG.md")
    shutil.copytree(ROOT / "notebooks", repo / "notebooks")
    executed = tmp_path_factory.mktemp("executed")
    for name, path in executed_notebooks.items():
        shutil.copy(path, executed / name)
    out = repo / "docs" / "_build" / "html"
    done = subprocess.run(
        [sys.executable, str(repo / "docs" / "build.py"), "--executed", str(executed)],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    return repo, out, done


def test_the_site_builds_strictly(site):
    _, out, done = site
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-8000:]
    assert (out / "index.html").exists() and (out / "api" / "index.html").exists()
    for notebook in docs_build().NOTEBOOKS:
        assert (out / "examples" / f"{notebook.stem}.html").exists()


def test_a_broken_reference_fails_the_build(site):
    repo, _, _ = site
    page = repo / "docs" / "broken.md"
    page.write_text("# Broken\n\nSee {func}`diversity_profiles.no_such_function`.\n")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-n", "-q",
             "-d", str(repo / "docs" / "_build" / "doctrees"), str(repo / "docs"),
             str(repo / "broken-html")],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
    finally:
        page.unlink()
    assert done.returncode != 0
    assert "diversity_profiles.no_such_function" in done.stderr


def inventory(out: Path) -> dict[str, str]:
    """objects.inv read as Sphinx writes it: four header lines, then zlib-compressed lines
    ``name domain:role priority uri display``."""
    raw = (out / "objects.inv").read_bytes()
    body = zlib.decompress(raw.split(b"\n", 4)[4]).decode("utf-8")
    entries = {}
    for line in body.splitlines():
        match = re.match(r"(\S+)\s+(\S+:\S+)\s+(-?\d+)\s+(\S+)", line)
        if match:
            entries[match.group(1)] = match.group(2)
    return entries


def test_every_public_name_is_in_the_built_reference(site):
    _, out, done = site
    assert done.returncode == 0
    entries = inventory(out)
    missing = [
        name
        for name in public_names()
        if f"diversity_profiles.{name}" not in entries and f"xarray.{name}" not in entries
    ]
    assert missing == []
    assert re.search(r'id="cli-compute"', (out / "cli.html").read_text())


def html_pages(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*.html") if "_static" not in p.parts)


def test_no_page_names_an_outside_resource(site):
    # Links to other sites are fine; nothing the page loads (src=, stylesheets) may be.
    _, out, _ = site
    for page in html_pages(out):
        text = page.read_text(encoding="utf-8")
        loads = re.findall(
            r'<(?:script|img|iframe|link)\b[^>]*\b(?:src|href)="(https?:[^"]*)"', text
        )
        assert loads == [], f"{page.relative_to(out)} loads {loads[:3]}"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_works_offline_and_every_explorer_mounts(site, browser, scheme):
    _, out, done = site
    assert done.returncode == 0
    pages = html_pages(out)
    with serve(out) as base:
        context = browser.new_context(color_scheme=scheme)  # the theme follows it ("auto")
        page = context.new_page()
        outside = block_outside(page, base)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        mounted = 0
        for path in pages:
            page.goto(f"{base}/{path.relative_to(out).as_posix()}")
            explorers = page.locator(".dp-docs-explorer").count()
            if explorers:
                page.wait_for_function("window.__dpDocsReady === true", timeout=60_000)
                live = page.locator(".dp-docs-explorer.dp-mounted .dp-explorer").count()
                assert live == explorers, f"{path.name}: {live} of {explorers} explorers mounted"
                mounted += live
                contrast, light_text = page.evaluate(CONTRAST, ".dp-docs-explorer .dp-explorer")
                assert contrast >= 4.5, f"{path.name} ({scheme}): text contrast {contrast:.2f}"
                # It follows the page's theme: light text on the dark one, dark on the light.
                assert light_text == (scheme == "dark"), f"{path.name}: not on the {scheme} theme"
            assert page.evaluate("document.documentElement.dataset.theme") == scheme
        assert errors == [], errors[:5]
        assert outside == []
        assert mounted >= 6  # the notebooks show seven explorers in all
        context.close()


#: The contrast ratio (WCAG) of an element's text against what is painted behind it, and
#: whether the text is the lighter of the two.
CONTRAST = """(selector) => {
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const element = document.querySelector(selector);
  let behind = element;  // the first ancestor that paints a background
  const clear = (e) =>
    ["rgba(0, 0, 0, 0)", "transparent"].includes(getComputedStyle(e).backgroundColor);
  while (behind && clear(behind)) {
    behind = behind.parentElement;
  }
  const fg = lum(rgb(getComputedStyle(element).color));
  const bg = lum(rgb(getComputedStyle(behind || document.body).backgroundColor));
  return [(Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05), fg > bg];
}"""


def test_an_explorer_on_a_page_follows_its_sliders(site, browser):
    _, out, _ = site
    with serve(out) as base:
        page = browser.new_page()
        outside = block_outside(page, base)
        page.goto(f"{base}/examples/01_quickstart.html")
        page.wait_for_function("window.__dpDocsReady === true", timeout=60_000)
        explorer = page.locator(".dp-docs-explorer.dp-mounted").first
        section = explorer.locator("section[data-family=magnitude]")
        # The quickstart's sets are the profiles paper's A and B: their magnitude curves
        # cross, and at the largest scales alone A is ahead (as the report test finds).
        cell = section.locator("table tr:nth-child(2) td:nth-child(3)")
        assert cell.get_attribute("data-point") == "crosses"
        before = section.inner_text()
        section.locator("input[type=range]").first.focus()
        page.keyboard.press("End")  # the lower end of the domain to its top
        settled(page)
        assert cell.get_attribute("data-point") == "dominates"  # the verdict follows
        assert section.inner_text() != before  # and so do the domain and the chart
        assert outside == []
        page.close()


def test_a_page_opened_from_disk_runs_its_explorers(site, browser):
    _, out, _ = site
    page = browser.new_page()
    outside = block_outside(page, LOCAL_FILE)
    page.goto((out / "examples" / "02_mode_dropping.html").as_uri())
    page.wait_for_function("window.__dpDocsReady === true", timeout=60_000)
    count = page.locator(".dp-docs-explorer").count()
    assert count > 0
    assert page.locator(".dp-docs-explorer.dp-mounted .dp-explorer").count() == count
    assert outside == []
    page.close()
