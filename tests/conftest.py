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
