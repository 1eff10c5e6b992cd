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


def _fmt(x: float) -> str:
    return "∞" if np.isinf(x) else f"{x:.3g}"


def _family(name: str, esc: Text) -> str:
    """Our family names as they are; anything else (a crafted file) escaped."""
    return name if name in FAMILIES else esc(name)


def _crossing_text(res, a: str, b: str, family: str, esc: Text) -> str:
    locs = res.crossings.sel(set_a=a, set_b=b, family=family).values
    locs = locs[~np.isnan(locs)]
    symbol = FAMILIES[family].display()["symbol"]
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
    over = "over each whole domain" if res.attrs.get("band") == "simultaneous" else "pointwise"
    return f"with {level:.0%} confidence {over} ({esc(a)} vs {esc(b)}): " + ", ".join(parts)


def _amount(lead: float, unit: str) -> str:
    if unit == "n":
        return f"≤ {lead:.3g} sample{'' if lead == 1 else 's'}"
    pct = lead * 100
    return "< 0.01%" if pct < 0.01 else f"≤ {float(f'{pct:.2g}'):g}%"


def _margin_notes(res, a: str, b: str, esc: Text) -> list[str]:
    """The leads a dominance dismissed as negligible (verdict.py, step 5)."""
    if "minor_lead" not in res:
        return []
    notes = []
    for f in res.family.values.tolist():
        v = str(res.verdict.sel(set_a=a, set_b=b, family=f).values)
        lead = float(res.minor_lead.sel(set_a=a, set_b=b, family=f))
        if v not in ("dominates", "dominated") or not np.isfinite(lead):
            continue
        share = float(res.minor_share.sel(set_a=a, set_b=b, family=f))
        loser = b if v == "dominates" else a
        unit = res.attrs.get(f"margin_unit_{f}", "relative")
        where = "" if FAMILIES[f].parameter is None else f" on {share:.0%} of the domain"
        if FAMILIES[f].parameter is not None and 0 < share < 0.005:
            where = " on < 1% of the domain"
        notes.append(f"{esc(loser)} ahead by {_amount(lead, unit)}{where} in {_family(f, esc)}")
    return [f"within the margin: {'; '.join(notes)}"] if notes else []


def _rule_lines(res, esc: Text) -> list[str]:
    """How the verdicts were read: the margins, and whether any holds with confidence."""
    attrs = res.attrs
    if "min_share" not in attrs:
        return []
    parts = []
    for f in res.family.values.tolist():
        margin, unit = attrs.get(f"margin_{f}"), attrs.get(f"margin_unit_{f}")
        if margin is not None:
            unit_text = " × n samples" if unit == "n" else " relative"
            parts.append(f"{_family(f, esc)} {float(margin):g}{unit_text}")
    lines = [
        "Margins (leads within them, or on less than "
        f"{attrs['min_share']:.0%} of the domain, are negligible): " + ", ".join(parts) + "."
    ]
    if "verdict_ci" in res and (res.verdict_ci.values == "no band").all():
        lines.append(
            "No verdict here holds with confidence: the profiles have no replicates "
            "(profile with n_boot > 0 for bands)."
        )
    return lines


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
    lines += _rule_lines(res, esc)
    lines.append("")
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            lines += [f"- {line}" for line in _pair_lines(res, a, b, esc)]
            lines += [f"  - {note}" for note in _margin_notes(res, a, b, esc)]
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
    from .layout import comparison_paths

    esc, code = (markdown_text, markdown_code) if markdown else (str, _plain_code)
    parts = [
        summarize_condition(comparison[p].to_dataset(), p, esc=esc, code=code)
        for p in comparison_paths(comparison)
    ]
    return "\n\n".join(parts) + "\n"
