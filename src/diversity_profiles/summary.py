"""Plain-language conclusions from a comparison, with the conditions they hold under."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .escaping import markdown_code, markdown_text
from .families import FAMILIES

#: How untrusted text (labels, paths, attributes) is written: as Markdown text and
#: code spans, or (for the report's <pre>, which HTML-escapes it) as it is.
Text = Callable[[object], str]


def _plain_code(value: object) -> str:
    return f"`{value}`"


_SYMBOL = {"q": "q", "t": "t", "tau": "τ", "s": "s"}


def _fmt(x: float) -> str:
    return "∞" if np.isinf(x) else f"{x:.3g}"


def _family(name: str, esc: Text) -> str:
    """Our family names as they are; anything else (a crafted file) escaped."""
    return name if name in FAMILIES else esc(name)


def _crossing_text(res, a: str, b: str, family: str, esc: Text) -> str:
    locs = res.crossings.sel(set_a=a, set_b=b, family=family).values
    locs = locs[~np.isnan(locs)]
    symbol = _SYMBOL.get(FAMILIES[family].parameter or "", "")
    where = ", ".join(f"{symbol} ≈ {_fmt(x)}" for x in locs)
    return f"{esc(a)} and {esc(b)} cross in {_family(family, esc)} at {where}"


def _pair_lines(res, a: str, b: str, esc: Text) -> list[str]:
    verdicts = {
        str(f): str(v)
        for f, v in zip(res.family.values, res.verdict.sel(set_a=a, set_b=b).values, strict=True)
    }
    agreement = str(res.agreement.sel(set_a=a, set_b=b).values)
    crossing = [_crossing_text(res, a, b, f, esc) for f, v in verdicts.items() if v == "crosses"]
    a, b = esc(a), esc(b)
    verdicts = {_family(f, esc): v for f, v in verdicts.items()}
    tied = [f for f, v in verdicts.items() if v == "tied"]
    tail = f" (tied in {', '.join(tied)})" if tied else ""
    if agreement == "tied":
        return [f"{a} and {b} are tied in every family"]
    if agreement == "a_ahead":
        scope = "every family" if not tied else "every family where they differ"
        return [f"{a} ≻ {b} on {scope}{tail}"]
    if agreement == "b_ahead":
        scope = "every family" if not tied else "every family where they differ"
        return [f"{b} ≻ {a} on {scope}{tail}"]
    lines = []
    ahead = [f for f, v in verdicts.items() if v == "dominates"]
    behind = [f for f, v in verdicts.items() if v == "dominated"]
    if ahead:
        lines.append(f"{a} ≻ {b} in {', '.join(ahead)}")
    if behind:
        lines.append(f"{b} ≻ {a} in {', '.join(behind)}")
    lines += crossing
    if tied:
        lines.append(f"tied in {', '.join(tied)}")
    return [f"families disagree on {a} vs {b}: " + "; ".join(lines)]


def _confidence_line(res, a: str, b: str, esc: Text) -> str | None:
    """Which verdicts survive the bootstrap band, if there is one."""
    if "verdict_ci" not in res:
        return None
    ci = res.verdict_ci.sel(set_a=a, set_b=b)
    held = {
        str(f): str(v)
        for f, v in zip(res.family.values, ci.values, strict=True)
        if str(v) != "no band"
    }
    if not held:
        return None
    level = res.attrs.get("ci", 0.95)
    parts = [f"{_family(f, esc)}: {esc(v)}" for f, v in held.items()]
    return f"with {level:.0%} confidence ({esc(a)} vs {esc(b)}): " + ", ".join(parts)


def summarize_condition(
    res, path: str, *, esc: Text = markdown_text, code: Text = markdown_code
) -> str:
    """Markdown for one condition of a comparison result.

    Every label, path and attribute is untrusted: ``esc`` writes it as text and
    ``code`` as a code span (Markdown-escaped by default, so that it renders as
    the text it is).
    """
    attrs = res.attrs
    labels = [str(s) for s in res.set_a.values]
    head = f"### {esc(path)}"
    details = [
        f"representation {code(attrs.get('representation', '?'))}",
        f"distance {code(attrs.get('distance', '?'))}",
    ]
    if attrs.get("kernel", "none") != "none":
        kernel = esc(attrs["kernel"])
        if "bandwidth" in attrs:
            kernel += f" (bandwidth {attrs['bandwidth']:.3g})"
        details.append(f"Vendi kernel: {kernel}")
    narrowed = [
        f"{esc(k[7:])} on {esc(v)}"
        for k, v in attrs.items()
        if k.startswith("domain_") and "narrowed" in str(v)
    ]
    if narrowed:
        details.append("domains narrowed: " + "; ".join(narrowed))
    lines = [head, "", "Condition: " + ", ".join(details) + "."]
    if "n_samples" in res:
        sizes = dict(zip(labels, res.n_samples.values.tolist(), strict=True))
        lines.append("Sample sizes: " + ", ".join(f"{esc(k)} {v}" for k, v in sizes.items()) + ".")
        if "common_n" in attrs:
            lines.append(
                f"Every family is the mean over {esc(attrs.get('n_subsamples'))} subsamples of "
                f"{esc(attrs['common_n'])} samples per set, so sizes do not bias the verdicts."
            )
        elif len(set(sizes.values())) > 1:
            lines.append("")
            lines.append(
                "> **Warning:** the sets differ in size and every family depends on n; "
                "profile them with `common_n='min'` before reading these verdicts as "
                "differences between the generators."
            )
    lines.append("")
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            lines += [f"- {line}" for line in _pair_lines(res, a, b, esc)]
            confidence = _confidence_line(res, a, b, esc)
            if confidence:
                lines.append(f"  - {confidence}")
    return "\n".join(lines)


def summary(comparison, *, markdown: bool = True) -> str:
    """Markdown summary of a comparison tree (the result of :func:`compare`).

    Labels and attributes are escaped so that a Markdown renderer shows them as
    text; ``markdown=False`` writes them as they are (plain text, for a page that
    escapes it itself).
    """
    from .accessor import comparison_paths

    esc, code = (markdown_text, markdown_code) if markdown else (str, _plain_code)
    parts = [
        summarize_condition(comparison[p].to_dataset(), p, esc=esc, code=code)
        for p in comparison_paths(comparison)
    ]
    return "\n\n".join(parts) + "\n"
