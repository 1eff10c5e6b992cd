"""One static pipeline (display/_static.py) behind the explorer's display and the report.

A display compares once: the chart's crossings, the summary and the payload come from
one :func:`compare`, and the notebook display and the HTML report carry the same outputs.
"""

import dataclasses
import html

import pytest

import diversity_profiles as dp
from diversity_profiles.comparison import _compare
from diversity_profiles.display import _static
from diversity_profiles.display._constants import MIME_TYPE
from diversity_profiles.display._explorer import ProfileExplorer, static_fallbacks
from diversity_profiles.display._static import StaticView, static_view

from .conftest import XSS


@pytest.fixture
def compares(monkeypatch):
    """Counts every compare run: the static module's own and any other caller's."""
    calls = []

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    real = _compare.compare
    monkeypatch.setattr(_static, "compare", counting)
    monkeypatch.setattr(_compare, "compare", counting)  # plot_profiles imports it at call time
    return calls


def _data(bundle):
    return bundle[0] if isinstance(bundle, tuple) else bundle


def test_one_explorer_display_runs_compare_once(paper_tree, compares):
    explorer = ProfileExplorer(paper_tree)
    assert compares == []  # building the widget compares nothing
    data = _data(explorer._repr_mimebundle_())
    assert len(compares) == 1
    assert {MIME_TYPE, "image/svg+xml", "text/markdown"} <= set(data)


def test_one_report_runs_compare_once(paper_tree, compares, tmp_path):
    dp.report(paper_tree, tmp_path / "report.html")
    assert len(compares) == 1


def test_display_and_report_carry_the_same_static_view(paper_tree, tmp_path):
    condition = "line/euclidean"
    view = static_view(paper_tree, condition, conditions=[condition])
    assert view.condition == condition and list(view.payload["conditions"]) == [condition]
    data = _data(ProfileExplorer(paper_tree)._repr_mimebundle_())
    assert data["image/svg+xml"] == view.svg and data["text/markdown"] == view.markdown
    assert data[MIME_TYPE] == view.payload  # one condition here: the same payload
    assert static_fallbacks(paper_tree) == view.fallbacks()
    page = dp.report(paper_tree, tmp_path / "report.html").read_text("utf-8")
    assert view.svg in page and html.escape(view.text) in page


def test_the_view_is_frozen_and_the_bundle_keeps_its_order(paper_tree):
    view = static_view(paper_tree)
    assert isinstance(view, StaticView)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.svg = ""  # type: ignore[misc]
    assert list(view.mimebundle()) == [MIME_TYPE, "image/svg+xml", "text/markdown"]
    # Markdown escapes the label; the plain text (shown HTML-escaped by the report) keeps it.
    assert "&lt;img" in view.markdown and XSS in view.text and XSS not in view.markdown
