"""The summary leads with a headline: one sentence per family, then a table of exactly the
pairs that cross or are undecided, labels escaped in every cell, each pair's detail folded."""

from html.parser import HTMLParser

import numpy as np
import pytest
import xarray as xr

import diversity_profiles as dp
from diversity_profiles.comparison._summary import summary
from diversity_profiles.pipeline import FAMILIES, comparison_paths

from .test_labels_as_text import CLOSE, RENDERERS

#: A '|' would split a table cell; CLOSE would end a script; '<b>' would be markup.
LABELS = ["a | b", CLOSE, "<b>C</b>"]
OPEN = ("crosses", "not distinguishable", "bounds overlap")


@pytest.fixture(scope="module")
def comparison():
    rng = np.random.default_rng(3)
    sets = {
        "x": rng.normal(size=(40, 2)),
        "y": 1.6 * rng.normal(size=(40, 2)),
        "z": 1.1 * rng.normal(size=(40, 2)) + 0.3,
    }
    tree = dp.profiles(sets, representation="r", distance="euclidean", n_points=12)
    path = next(iter(tree.dp.conditions))
    # dp.profiles refuses '/' in a label; a tree opened with xarray itself can hold one.
    node = tree[path].to_dataset().assign_coords(set=LABELS)
    return dp.compare(xr.DataTree.from_dict({path: node}))


def _condition(comparison):
    (path,) = comparison_paths(comparison)
    return comparison[path].to_dataset()


def _open_pairs(res) -> set[tuple[str, str]]:
    """The pairs (a before b) that some family leaves open, read from the variables: the
    finding where the family has sampling uncertainty, else these samples' verdict."""
    out = set()
    for f in res.family.values:
        banded = bool((res.finding.sel(family=f).values != "no uncertainty").any())
        what = (res.finding if banded else res.verdict).sel(family=f)
        for i, a in enumerate(LABELS):
            for b in LABELS[i + 1 :]:
                if str(what.sel(set_a=a, set_b=b).values) in OPEN:
                    out.add((a, b))
    return out


class _Rows(HTMLParser):
    """Each table row's cells as text, and every tag seen."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.tags: list[str] = []
        self._cell = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.rows[-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def test_one_sentence_per_family_under_its_display_name(comparison):
    res = _condition(comparison)
    for markdown in (True, False):
        text = summary(comparison, markdown=markdown)
        lines = text.splitlines()
        start = next(k for k, line in enumerate(lines) if line.startswith("- "))
        sentences = []
        for line in lines[start:]:
            if not line.startswith("- "):
                break
            sentences.append(line)
        names = [FAMILIES[str(f)].long_name for f in res.family.values]
        assert len(sentences) == len(names)
        for line, name in zip(sentences, names, strict=True):
            shown = f"**{dp.core.markdown_text(name)}**" if markdown else name
            assert line.startswith(f"- {shown}: ") and line.endswith(".")
            assert line.count(". ") == 0  # one sentence
        # Display names in prose, never the variables' names.
        assert "average_distance" not in text and "vendi:" not in text
        # What the findings hold with comes before the headline; the facts after it.
        assert lines.index(sentences[0]) < next(
            k for k, line in enumerate(lines) if line.startswith("Condition: ")
        )


def test_the_table_holds_exactly_the_open_pairs_with_labels_as_text(comparison):
    res = _condition(comparison)
    want = {f"{a} vs {b}" for a, b in _open_pairs(res)}
    assert want  # the fixture has pairs that cross or are undecided
    text = summary(comparison)
    for name, render in RENDERERS.items():
        parsed = _Rows(render(text))
        assert "script" not in parsed.tags and "b" not in parsed.tags, name
        head, *rows = parsed.rows
        assert head[:2] == ["pair", "cross in"], name
        assert all(len(row) == 3 for row in rows), (name, rows)  # no '|' split a cell
        assert {row[0] for row in rows} == want, name
        assert "details" in parsed.tags and "summary" in parsed.tags, name
    # Plain text (the terminal, the report's <pre>): one line per open pair, no markup.
    plain = summary(comparison, markdown=False)
    assert "<details>" not in plain and "|---" not in plain
    assert {line.split(": ")[0] for line in plain.splitlines() if " vs " in line.split(": ")[0]
            and ("cross in" in line or "not distinguishable in" in line)} >= want  # fmt: skip


def test_without_uncertainty_the_summary_still_says_no_verdict_is_supported():
    rng = np.random.default_rng(0)
    sets = {"A": rng.normal(size=(20, 2)), "B": 2 * rng.normal(size=(20, 2))}
    tree = dp.profiles(sets, representation="r", distance="euclidean", n_points=8, n_boot=0)
    lines = summary(tree.dp.compare()).splitlines()
    assert lines[2].startswith("**No verdict is supported**")
    assert lines[4].startswith("- **Vendi score**: ")
    assert "(these samples, no confidence)" in lines[4]
