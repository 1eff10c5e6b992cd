"""Labels reach every HTML and Markdown output as text: never markup, never script.

Markdown is rendered by real renderers (markdown-it-py: CommonMark as JupyterLab's
marked and GitHub follow it; mistune: what nbconvert uses) and the HTML parsed
with the standard library; every HTML page we write is opened in Debian's
Chromium, where a label that escaped would raise a dialog or stop the page.
"""

import json
import re
import time
from html.parser import HTMLParser

import markdown_it
import mistune
import pytest
import xarray as xr
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from playwright.sync_api import sync_playwright

import diversity_profiles as dp
from diversity_profiles.core._escaping import (
    display_labels,
    markdown_code,
    markdown_text,
    script_json,
)
from diversity_profiles.display._explorer import static_fallbacks
from diversity_profiles.display._notebook import tree_mimebundle

from .browser import CHROMIUM, LAUNCH_ARGS
from .conftest import XSS

#: Each of these, unescaped, runs script or breaks the page it lands in.
COMMENT = "<!--<script>"
CLOSE = "</script><script>alert(1)</script>"
#: A representation name whose backticks would close a code span early.
TICKS = "r`<img src=x onerror=alert(2)>``x`"

NASTY = [
    XSS,
    COMMENT,
    CLOSE,
    "**bold** _it_ [link](javascript:alert(1)) ![i](x) `code` ~~s~~ $x$",
    "# heading",
    "1. item",
    "- item",
    "> quote",
    "a | b | c",
    "back\\slash \\<b>",
    "&amp; &lt;b&gt; &#60;",
    "line\nbreak\n\n<img src=x onerror=alert(3)>",
    "<https://example.org>",
    TICKS,
    "`",
    "``a``",
    " spaced ",
]

RENDERERS = {
    "markdown-it": markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render,
    # Raw HTML passes through, as in nbconvert (escape=True would also escape entities).
    "mistune": mistune.create_markdown(escape=False, plugins=["table", "strikethrough"]),
    "nbconvert": markdown2html_mistune,
}


class _Parsed(HTMLParser):
    """Tags, attributes and text of an HTML fragment."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list]] = []
        self.text = ""
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text += data


@pytest.mark.parametrize("render", RENDERERS.values(), ids=RENDERERS.keys())
@pytest.mark.parametrize("label", NASTY)
def test_markdown_text_renders_as_exactly_the_label(render, label):
    parsed = _Parsed(render(f"x{markdown_text(label)}x"))
    assert [tag for tag, _ in parsed.tags] == ["p"]
    assert parsed.text.strip() == f"x{label}x"


@pytest.mark.parametrize("render", RENDERERS.values(), ids=RENDERERS.keys())
@pytest.mark.parametrize("label", NASTY)
def test_markdown_code_is_one_code_span_whatever_backticks_it_holds(render, label):
    parsed = _Parsed(render(f"x {markdown_code(label)} x"))
    assert [tag for tag, _ in parsed.tags] == ["p", "code"]
    # A code span is one line: CommonMark turns its line breaks into spaces.
    assert parsed.text.strip() == f"x {label.replace(chr(10), ' ')} x"


def test_script_json_cannot_end_or_derail_a_script_element():
    value = {"sets": [COMMENT, CLOSE, XSS, "a & b", "\u2028\u2029"]}
    text = script_json(value)
    assert not any(c in text for c in "<>&\u2028\u2029")
    assert json.loads(text) == value


def test_display_labels_are_short_distinct_and_leave_short_labels_alone():
    long_a, long_b = "a" * 30_000, "a" * 30_001
    shown = display_labels(["A", long_a, long_b, "a" * 59 + "…"], width=60)
    assert shown[0] == "A" and shown[3] == "a" * 59 + "…"
    assert len(set(shown)) == 4 and all(len(s) <= 60 for s in shown)
    assert shown[1].startswith("a" * 50) and shown[2].startswith("a" * 50)


@pytest.fixture(scope="module")
def hostile_profiles():
    """Sets named with hostile strings, and a representation with backticks."""
    return dp.profiles(
        {COMMENT: [[1.0], [2.0], [3.0]], "B": [[0.0], [4.0]], XSS: [[0.5], [1.0], [3.5]]},
        representation=TICKS,
        distance="euclidean",
        n_points=12,
    )


@pytest.fixture(scope="module")
def hostile(hostile_profiles):
    """The same with ``CLOSE`` for "B": dp.profiles and dp.open_profiles refuse '/' in a
    label, but a tree opened with xarray itself can hold one."""
    tree = hostile_profiles
    path = next(iter(tree.dp.conditions))
    node = tree[path].to_dataset().assign_coords(set=[COMMENT, CLOSE, XSS])
    return xr.DataTree.from_dict({path: node})


#: Every element a rendered summary may hold: Markdown's, the headline's table, and the
#: disclosure (<details><summary>) the summary itself writes around each pair's detail.
ALLOWED = {"h3", "p", "code", "ul", "li", "blockquote", "strong"}
ALLOWED |= {"table", "thead", "tbody", "tr", "th", "td", "details", "summary"}


def _anchor(tag: str, attrs: list) -> bool:
    attrs = dict(attrs)
    return tag == "a" and attrs.get("class") == "anchor-link" and attrs["href"].startswith("#")


def _markdown_outputs(tree, stored, folder):
    """Every Markdown we produce for a tree: summary, explorer and comparison displays (the
    CLI's summary is plain text for a terminal: tests/test_files.py checks its escapes)."""
    return {
        "tree.dp.summary()": tree.dp.summary(),
        "explorer text/markdown": static_fallbacks(tree)["text/markdown"],
        "comparison display": tree_mimebundle(tree.dp.compare())["text/markdown"],
    }


def test_every_markdown_producer_writes_labels_as_text(hostile, hostile_profiles, tmp_path):
    for where, text in _markdown_outputs(hostile, hostile_profiles, tmp_path).items():
        for name, render in RENDERERS.items():
            parsed = _Parsed(render(text))
            # nbconvert gives headings an id and a '¶' link to it; nothing else has attributes.
            tags = [t for t in parsed.tags if not _anchor(*t)]
            assert {tag for tag, _ in tags} <= ALLOWED
            assert not any(attrs for tag, attrs in tags if tag != "h3"), (where, name)
            assert all(key == "id" for tag, attrs in tags if tag == "h3" for key, _ in attrs)
            for label in (COMMENT, XSS) if where == "CLI summary" else (COMMENT, CLOSE, XSS):
                assert label in parsed.text, (where, name, label)
            # The raw HTML is only the summary's own disclosure, whose title is our text.
            if "details" in {tag for tag, _ in tags}:
                assert "<details><summary>Each pair in detail (" in text, (where, name)
            condition = next(x for x in text.split("\n") if x.startswith("Condition: "))
            codes = _Parsed(render(condition)).text
            assert f"representation {TICKS}, distance euclidean," in codes, (where, name)


def test_chart_html_keeps_every_label_inside_its_script_even_after_restyling(hostile):
    chart = hostile.dp.plot().properties(title="restyled").configure_axis(grid=False)
    for page in (chart.to_html(), chart.to_html(inline=True)):
        assert CLOSE not in page and COMMENT not in page and XSS not in page
        # ... and the spec there still holds them whole, as JSON escapes.
        spec = json.loads(re.search(r"(?:var|const) spec = (\{.*?\});\n", page).group(1))
        assert all(label in json.dumps(spec, ensure_ascii=False) for label in (COMMENT, CLOSE, XSS))


@pytest.mark.parametrize("renderer", ["colab", "kaggle"])
def test_notebook_display_keeps_labels_inside_the_script(hostile, renderer):
    import altair as alt

    chart = hostile.dp.plot()
    with alt.renderers.enable(renderer):  # HTML renderers a user may enable
        page = chart._repr_mimebundle_()["text/html"]
    assert CLOSE not in page and COMMENT not in page and XSS not in page
    assert "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)" in page


def test_a_30000_character_label_is_drawn_cut_and_kept_whole_in_the_data(tmp_path):
    label = "y" * 30_000
    tree = dp.profiles(
        {"A": [[1.0], [2.0], [3.0]], label: [[0.0], [4.0]]},
        representation="line",
        distance="euclidean",
        n_points=12,
    )
    chart = tree.dp.plot()
    spec = json.dumps(chart.to_dict())
    assert label in spec  # the data (and the tooltips) keep it whole
    start = time.perf_counter()
    fallbacks = static_fallbacks(tree)
    dp.report(tree, tmp_path / "long.html")
    # Drawing the whole label took ~40 s; cut, it is well under a second (a loose guard).
    assert time.perf_counter() - start < 20
    texts = [t for t in _svg_texts(fallbacks["image/svg+xml"]) if t.startswith("yyy")]
    assert texts and all(len(t) <= 60 for t in texts)
    assert label in fallbacks["text/markdown"]


def _svg_texts(svg: str) -> list[str]:
    class Texts(HTMLParser):
        def __init__(self):
            super().__init__()
            self.inside, self.found = False, []

        def handle_starttag(self, tag, attrs):
            self.inside = tag == "text"
            if self.inside:
                self.found.append("")

        def handle_endtag(self, tag):
            self.inside = False

        def handle_data(self, data):
            if self.inside:
                self.found[-1] += data

    parser = Texts()
    parser.feed(svg)
    return parser.found


def _offline_page(browser, path):
    """A page opened on ``path`` with nothing outside the file reachable; what it raised."""
    page = browser.new_page()
    dialogs: list[str] = []
    errors: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    local = ("file:", "blob:", "data:")
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(local) else r.abort())
    page.goto(path.as_uri())
    return page, dialogs, errors


def test_every_html_page_shows_hostile_labels_as_text_in_chromium(hostile, tmp_path):
    labels = (COMMENT, CLOSE, XSS)
    dp.report(hostile, tmp_path / "report.html")
    hostile.dp.plot().save(tmp_path / "chart.html")  # Altair's page, as users save it
    hostile.dp.plot().save(tmp_path / "inline.html", inline=True)  # draws with no network
    summary = RENDERERS["markdown-it"](hostile.dp.summary())
    (tmp_path / "summary.html").write_text(f"<!doctype html><meta charset=utf-8>{summary}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        for name in ("report", "chart", "inline", "summary"):
            page, dialogs, errors = _offline_page(browser, tmp_path / f"{name}.html")
            if name == "report":
                page.wait_for_function("window.__dpReady === true", timeout=30_000)
                page.wait_for_selector("#explorer section svg .mark-line path")
                assert all(s in page.locator("#explorer").inner_text() for s in labels)
                # The text summary is folded (a closed <details>): its text, not its markup.
                page.locator("details.dp-text summary").click()
                assert all(s in page.locator("pre").inner_text() for s in labels)
            elif name == "inline":
                page.wait_for_selector("#vis svg .mark-line path", timeout=30_000)
                legend = page.locator("#vis svg .role-legend").first.text_content()
                assert all(s in legend for s in labels)
            elif name == "chart":
                # Vega is not loaded (the CDN is blocked), but the page's own script ran to
                # its call of vegaEmbed: no label ended it early or added another.
                assert page.locator("script").count() == 4
                assert len(errors) == 4 and "vegaEmbed is not defined" in errors[-1], errors
                errors.clear()
            else:
                assert all(s in page.locator("body").inner_text() for s in labels)
            page.wait_for_timeout(300)  # an onerror handler would have fired by now
            assert page.locator("img").count() == 0, name
            assert dialogs == [], name
            assert errors == [], (name, errors)
            page.close()
        browser.close()


def test_a_crafted_file_cannot_put_markup_in_the_summary(tmp_path):
    tree = dp.profiles(
        {"A": [[1.0], [2.0], [3.0]], "B": [[0.0], [4.0]]},
        representation="line",
        distance="euclidean",
        n_points=12,
    )
    node = tree["line/euclidean"].to_dataset()
    node.attrs["distance"] = f"e`{XSS}"
    node.attrs["kernel"] = XSS
    crafted = xr.DataTree.from_dict({"line/euclidean": node})
    html = RENDERERS["mistune"](crafted.dp.summary())
    assert "<img" not in html and not any(a for _, a in _Parsed(html).tags)
    assert f"distance e`{XSS}, Vendi kernel: {XSS} " in _Parsed(html).text


def test_a_plain_summary_writes_labels_as_they_are():
    label = "set_[1]*`x`"
    tree = dp.profiles(
        {label: [[1.0], [2.0], [3.0]], "B": [[0.0], [4.0]]},
        representation="line",
        distance="euclidean",
        n_points=12,
    )
    plain = tree.dp.summary(markdown=False)
    assert f"{label} and B" in plain or f"B and {label}" in plain
    assert "\\[" not in plain and "\\*" not in plain  # no Markdown escapes in plain text
    assert "\\[" in tree.dp.summary()  # ...which the Markdown summary does need
