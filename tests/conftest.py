"""Fixtures shared by the browser tests."""

import pytest

import diversity_profiles as dp

from .browser import CHROMIUM, LAUNCH_ARGS

#: A set label that would run script if any view rendered labels as HTML.
XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="session")
def paper_tree():
    """The profiles paper's example, one set named with ``XSS``: richness prefers A, average
    distance the other set, magnitude and Circles cross."""
    return dp.profiles(
        {"A": [[1.0], [2.0], [3.0]], XSS: [[0.0], [4.0]]},
        representation="line",
        distance="euclidean",
        n_points=20,
    )


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, headless, driven by Playwright: one per test module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def executed_notebooks(tmp_path_factory):
    """Every notebook of notebooks/ executed once, as the docs build executes them
    (docs/build.py's ``execute``): {name: executed notebook path, or the exception it
    raised}. Shared by the notebook tests and the docs-site build, so the suite runs each
    notebook once."""
    import nbformat

    build = docs_build()
    folder = tmp_path_factory.mktemp("executed-notebooks")
    results: dict = {}
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HF_HUB_OFFLINE", "1")  # models load from local packages, never a hub
        # The large-n notebook profiles 2 x 20,000 molecules for real; the suite runs it at
        # 2 x 12,000 (still above every exact-size threshold, so the large-n path is checked).
        env.setenv("DP_NOTEBOOK_SMALL", "1")
        for notebook in build.NOTEBOOKS:
            try:
                nb = build.execute(notebook)
            except Exception as exc:  # reported by the notebook's own test
                results[notebook.name] = exc
            else:
                nbformat.write(nb, folder / notebook.name)
                results[notebook.name] = folder / notebook.name
    return results


def docs_build():
    """docs/build.py as a module (the docs are not a package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "build.py"
    spec = importlib.util.spec_from_file_location("dp_docs_build", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
