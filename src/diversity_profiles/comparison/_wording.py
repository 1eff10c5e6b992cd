"""The plain-language wording of verdicts: one summariser for every place that words them.

:mod:`.summary` (Markdown and the report's text) and the browser's summary
(``js/wording.ts``, tested against fixtures generated from this module by
``tests/test_wording_js.py``) both write their lines with these functions, from plain
values: set labels, and per family a :class:`Reading` of one pair. Labels and family
names arrive already escaped for their context; nothing here escapes or looks at xarray.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reading:
    """One family's verdict on one pair of sets (a, b), as :func:`compare` reads it."""

    family: str  # its name, as it is to be written
    #: "dominates" (a ≻ b), "dominated", "crosses" or "tied", margin included; "bounds
    #: overlap" where large-n bounds cannot order the pair
    verdict: str
    symbol: str = ""  # how its parameter is written ("q", "τ"); "" when scale-free
    scale_free: bool = False
    unit: str = "relative"  # of the margin: "n" (samples) or "relative"
    crossings: Sequence[float] = field(default_factory=tuple)
    lead: float = math.nan  # the dismissed side's largest lead (NaN: none dismissed)
    share: float = 0.0  # ...and its share of the domain
    confident: str = "no band"  # the verdict that holds with confidence, if a band exists


def fmt_g(x: float, digits: int = 3) -> str:
    """``f"{x:.{digits}g}"``, with ∞ for infinities (the browser ports this exactly)."""
    return ("∞" if x > 0 else "-∞") if math.isinf(x) else f"{x:.{digits}g}"


def percent(x: float) -> str:
    """``f"{x:.0%}"``: a share as a whole percentage."""
    return f"{x:.0%}"


def amount(lead: float, unit: str) -> str:
    """How far the dismissed side led: "≤ 1 sample" or "≤ 0.4%"."""
    if unit == "n":
        return f"≤ {fmt_g(lead)} sample{'' if lead == 1 else 's'}"
    pct = lead * 100
    return "< 0.01%" if pct < 0.01 else f"≤ {fmt_g(float(fmt_g(pct, 2)), 6)}%"


def agreement(verdicts: Sequence[str]) -> str:
    """The families' reading of one pair together: tied, a_ahead, b_ahead, mixed, or
    "bounds overlap" when the families that can be ordered agree but some cannot."""
    kinds = set(verdicts)
    if "bounds overlap" in kinds:
        decided = agreement([v for v in verdicts if v != "bounds overlap"])
        return "mixed" if decided == "mixed" else "bounds overlap"
    if kinds <= {"tied"}:
        return "tied"
    if kinds <= {"dominates", "tied"}:
        return "a_ahead"
    if kinds <= {"dominated", "tied"}:
        return "b_ahead"
    return "mixed"


def rule_lines(
    margins: Sequence[tuple[str, float, str]],
    min_share: float,
    no_band: bool,
    bounded: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """How verdicts were read: each family's (name, margin, unit), the (name, method) of
    families whose values are large-n bounds or estimates, and whether none holds with
    confidence because there are no replicates."""
    parts = [
        f"{name} {fmt_g(float(margin), 6)}{' × n samples' if unit == 'n' else ' relative'}"
        for name, margin, unit in margins
    ]
    lines = [
        f"Margins (leads within them, or on less than {percent(min_share)} of the domain, "
        "are negligible): " + ", ".join(parts) + "."
    ]
    if bounded:
        methods: dict[str, list[str]] = {}
        for name, method in bounded:
            methods.setdefault(method, []).append(name)
        kinds = "; ".join(f"{method}: {', '.join(names)}" for method, names in methods.items())
        lines.append(
            f"Large-n values ({kinds}): a verdict there holds only where the bounds "
            "separate; elsewhere it says the bounds overlap."
        )
    if no_band:
        lines.append(
            "No verdict here holds with confidence: the profiles have no replicates "
            "(profile with n_boot > 0 for bands)."
        )
    return lines


def _crossing_text(a: str, b: str, r: Reading) -> str:
    where = ", ".join(f"{r.symbol} ≈ {fmt_g(x)}" for x in r.crossings if not math.isnan(x))
    return f"{a} and {b} cross in {r.family} at {where}"


def pair_line(a: str, b: str, readings: Sequence[Reading]) -> str:
    """The one line that says how a and b compare across the families."""
    tied = [r.family for r in readings if r.verdict == "tied"]
    tail = f" (tied in {', '.join(tied)})" if tied else ""
    scope = "every family" if not tied else "every family where they differ"
    together = agreement([r.verdict for r in readings])
    if together == "tied":
        return f"{a} and {b} are tied in every family"
    if together == "a_ahead":
        return f"{a} ≻ {b} on {scope}{tail}"
    if together == "b_ahead":
        return f"{b} ≻ {a} on {scope}{tail}"
    overlap = [r.family for r in readings if r.verdict == "bounds overlap"]
    parts = [f"bounds overlap in {', '.join(overlap)}"] if overlap else []
    ahead = [r.family for r in readings if r.verdict == "dominates"]
    behind = [r.family for r in readings if r.verdict == "dominated"]
    if ahead:
        parts.append(f"{a} ≻ {b} in {', '.join(ahead)}")
    if behind:
        parts.append(f"{b} ≻ {a} in {', '.join(behind)}")
    parts += [_crossing_text(a, b, r) for r in readings if r.verdict == "crosses"]
    if tied:
        parts.append(f"tied in {', '.join(tied)}")
    if together == "bounds overlap":  # what the bounds decide agrees; the rest is open
        return f"{a} vs {b}: " + "; ".join(parts)
    return f"families disagree on {a} vs {b}: " + "; ".join(parts)


def margin_note(a: str, b: str, readings: Sequence[Reading]) -> str | None:
    """The leads a dominance dismissed as negligible (verdict.py, step 5), if any."""
    notes = []
    for r in readings:
        if r.verdict not in ("dominates", "dominated") or not math.isfinite(r.lead):
            continue
        loser = b if r.verdict == "dominates" else a
        where = "" if r.scale_free else f" on {percent(r.share)} of the domain"
        if not r.scale_free and 0 < r.share < 0.005:
            where = " on < 1% of the domain"
        notes.append(f"{loser} ahead by {amount(r.lead, r.unit)}{where} in {r.family}")
    return f"within the margin: {'; '.join(notes)}" if notes else None


def confidence_line(
    a: str, b: str, readings: Sequence[Reading], ci: float, simultaneous: bool
) -> str | None:
    """Which verdicts hold with confidence, if any family has a band."""
    held = [f"{r.family}: {r.confident}" for r in readings if r.confident != "no band"]
    if not held:
        return None
    over = "over each whole domain" if simultaneous else "pointwise"
    return f"with {percent(ci)} confidence {over} ({a} vs {b}): " + ", ".join(held)


def pair_block(
    a: str, b: str, readings: Sequence[Reading], ci: float, simultaneous: bool = True
) -> list[str]:
    """The Markdown list item of one pair: its line, then the notes under it."""
    lines = [f"- {pair_line(a, b, readings)}"]
    note = margin_note(a, b, readings)
    if note:
        lines.append(f"  - {note}")
    sure = confidence_line(a, b, readings, ci, simultaneous)
    if sure:
        lines.append(f"  - {sure}")
    return lines
