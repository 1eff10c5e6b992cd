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
    #: What the samples support (verdict rule step 8): a verdict, "not distinguishable"
    #: or "no uncertainty"
    finding: str = "no uncertainty"
    n_needed: float = math.nan  # samples per set that would resolve a lead not yet supported
    needed_at: float = math.nan  # ...read at this parameter
    lead_at: float = math.nan  # a - b there (samples, or relative)
    noise_at: float = math.nan  # the family-wise band's half-width there
    #: +1 when a is the side that leads, -1 when b is (NaN: read the sign of lead_at)
    lead_side: float = math.nan
    #: Step 9, for a pair not distinguishable over the whole domain: +1 when a is
    #: confidently ahead on part of it, -1 when b is (NaN: neither), and those parts as
    #: (first, last) parameters of each run of grid points
    part_side: float = math.nan
    parts: Sequence[tuple[float, float]] = field(default_factory=tuple)


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
    bounded: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """How verdicts were read: each family's (name, margin, unit), and the (name, method)
    of families whose values are large-n bounds or estimates."""
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
            f"Values known within bounds ({kinds}): a verdict there holds only where the bounds "
            "separate; elsewhere it says the bounds overlap."
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


CLAIMS = ("dominates", "dominated", "crosses")


def has_part(r: Reading) -> bool:
    """Whether a pair not distinguishable over the whole domain is ordered on part of it."""
    return r.finding == "not distinguishable" and math.isfinite(r.part_side) and bool(r.parts)


def span_text(symbol: str, lo: float, hi: float) -> str:
    """One run of a partial finding: "q ≥ 0.1", "0.1 ≤ q ≤ 2", "q ≤ 2" or "q ≈ 0.5"
    (no brackets or commas: the text lands in Markdown tables and comma lists)."""
    if lo == hi:
        return f"{symbol} ≈ {fmt_g(lo)}"
    if math.isinf(hi) and hi > 0:
        return f"{symbol} ≥ {fmt_g(lo)}"
    if lo == 0:
        return f"{symbol} ≤ {fmt_g(hi)}"
    return f"{fmt_g(lo)} ≤ {symbol} ≤ {fmt_g(hi)}"


#: A partial finding of more runs is written as their extent: "on 5 parts of 0.7 ≤ τ ≤ 0.9".
LISTED_PARTS = 2


def parts_text(r: Reading) -> str:
    """Where a partial finding holds: "for" its runs, joined by "and", or "on n parts of"
    their extent when there are more than LISTED_PARTS."""
    if len(r.parts) > LISTED_PARTS:
        extent = span_text(r.symbol, r.parts[0][0], r.parts[-1][1])
        return f"on {len(r.parts)} parts of {extent}"
    return "for " + " and ".join(span_text(r.symbol, lo, hi) for lo, hi in r.parts)


def part_claim(a: str, b: str, r: Reading, family: bool = False) -> str:
    """The partial finding from the side that leads: "a ≻ b for q ≥ 0.1" (with ``family``:
    "a ≻ b in Vendi score for q ≥ 0.1")."""
    first, second = (a, b) if r.part_side > 0 else (b, a)
    return f"{first} ≻ {second}{f' in {r.family}' if family else ''} {parts_text(r)}"


def finding_intro(level: float, without: Sequence[tuple[str, str]], banded: int) -> list[str]:
    """The first lines of a condition: what its findings hold with, or that none is
    supported; ``without`` lists (family, why) for families with no uncertainty."""
    if banded == 0:
        why = "; ".join(sorted({how for _, how in without})) or "no replicates"
        # The default's own reasons say what to change; only a switched-off one needs this.
        advice = (
            "; profile with n_boot='auto' (the default) for findings" if "n_boot=0" in why else ""
        )
        return [
            f"**No verdict is supported**: these profiles carry no sampling uncertainty "
            f"({why}). The verdicts below describe these samples only, not the sources "
            f"they were drawn from{advice}."
        ]
    lines = [
        f"Findings hold with {percent(level)} confidence for every pair, point and family "
        "at once; any other difference is not distinguishable at this sample size."
    ]
    for name, how in without:
        lines.append(f"No finding in {name}: no sampling uncertainty ({how}).")
    return lines


def _claim_text(a: str, b: str, r: Reading) -> str:
    if r.finding == "crosses":
        where = ", ".join(f"{r.symbol} ≈ {fmt_g(x)}" for x in r.crossings if not math.isnan(x))
        return f"{a} and {b} cross in {r.family}" + (f" at {where}" if where else "")
    first, second = (a, b) if r.finding == "dominates" else (b, a)
    return f"{first} ≻ {second} in {r.family}"


def finding_line(a: str, b: str, readings: Sequence[Reading]) -> str:
    """The one line that says what the samples support about a and b."""
    claims = [r for r in readings if r.finding in CLAIMS]
    partial = [r for r in readings if has_part(r)]
    tied = [r.family for r in readings if r.finding == "tied"]
    open_ = [r.family for r in readings if r.finding == "not distinguishable" and not has_part(r)]
    ahead = [r.family for r in claims if r.finding == "dominates"]
    behind = [r.family for r in claims if r.finding == "dominated"]
    crossed = [r for r in claims if r.finding == "crosses"]
    parts = []
    if claims or partial:
        if ahead:
            parts.append(f"{a} ≻ {b} in {', '.join(ahead)}")
        if behind:
            parts.append(f"{b} ≻ {a} in {', '.join(behind)}")
        parts += [_claim_text(a, b, r) for r in crossed]
        parts += [f"{part_claim(a, b, r, True)} (not distinguishable elsewhere)" for r in partial]
        if open_:
            parts.append(f"not distinguishable in {', '.join(open_)}")
    elif open_:
        parts.append(f"{a} and {b} are not distinguishable at this sample size")
    if tied:
        parts.append(f"equal within the margin in {', '.join(tied)}")
    if not parts:
        return f"no finding on {a} vs {b}: no sampling uncertainty"
    a_side = bool(ahead) or any(r.part_side > 0 for r in partial)
    b_side = bool(behind) or any(r.part_side < 0 for r in partial)
    disagree = a_side + b_side + bool(crossed) > 1
    return (f"families disagree on {a} vs {b}: " if disagree else "") + "; ".join(parts)


def amount_at(x: float, unit: str) -> str:
    """A lead or noise as "2.1%" or "3 samples" (its sign dropped)."""
    x = abs(x)
    if unit == "n":
        return f"{fmt_g(x)} sample{'' if x == 1 else 's'}"
    return f"{fmt_g(float(fmt_g(x * 100, 2)), 6)}%"  # two digits, never "1e+02%"


def needed_note(a: str, b: str, readings: Sequence[Reading]) -> str | None:
    """For leads not yet supported: how big they are, the noise, and about how many
    samples per set would resolve them if they are real."""
    notes = []
    for r in readings:
        if r.finding != "not distinguishable" or not math.isfinite(r.n_needed):
            continue
        side = r.lead_side if math.isfinite(r.lead_side) else (1.0 if r.lead_at > 0 else -1.0)
        leader, other = (a, b) if side > 0 else (b, a)
        where = "" if r.scale_free else f" at {r.symbol} ≈ {fmt_g(r.needed_at)}"
        # The need is read where it binds, which can be where the leader is level or behind.
        if side * r.lead_at > 0:
            gap = f"{leader} leads by {amount_at(r.lead_at, r.unit)}{where}"
        elif r.lead_at == 0:
            gap = f"{leader} leads elsewhere; level{where}"
        else:
            gap = (
                f"{leader} leads elsewhere; {other} ahead by {amount_at(r.lead_at, r.unit)}{where}"
            )
        notes.append(
            f"{r.family}: {gap} (noise ±{amount_at(r.noise_at, r.unit)}); about "
            f"{int(r.n_needed):,} samples per set would resolve it"
        )
    return "not yet supported — " + "; ".join(notes) if notes else None


def pair_block(a: str, b: str, readings: Sequence[Reading]) -> list[str]:
    """The Markdown list item of one pair: what the samples support, then the notes under
    it (leads not yet supported, and these samples' point verdicts)."""
    lines = [f"- {finding_line(a, b, readings)}"]
    need = needed_note(a, b, readings)
    if need:
        lines.append(f"  - {need}")
    lines.append(f"  - these samples (no confidence): {pair_line(a, b, readings)}")
    note = margin_note(a, b, readings)
    if note:
        lines.append(f"  - {note}")
    return lines


def permutation_note(tested: Sequence[tuple[str, float]], n_permutations: int) -> str | None:
    """The permutation test's Holm-adjusted p-value of each family tested on the pair."""
    if not tested:
        return None
    parts = [f"{name} p = {fmt_g(p, 2)}" for name, p in tested]
    return f"permutation test ({n_permutations} relabellings, Holm-adjusted): " + ", ".join(parts)


#: The summary names each pair's permutation p-values up to this many pairs (else counts).
PERMUTATION_PAIRS = 3


def permutation_line(
    pairs: Sequence[tuple[str, str, Sequence[tuple[str, float]]]], n_permutations: int, alpha: float
) -> str:
    """The permutation tests of a condition in one paragraph: per pair (a, b, [(family,
    Holm-adjusted p)]), the families whose samples differ at ``alpha``, and the rest.

    >>> line = permutation_line([("A", "B", [("Vendi", 0.01), ("richness", 1.0)])], 199, 0.05)
    >>> line.split("): ", 1)[1]
    'A and B differ in Vendi (p = 0.01); no difference shown in richness (p = 1).'
    """
    head = (
        f"Permutation test ({n_permutations} relabellings per pair; exact p-values, "
        "Holm-adjusted over every pair and family): "
    )
    if len(pairs) > PERMUTATION_PAIRS:
        differ = sum(any(p <= alpha for _, p in tested) for _, _, tested in pairs)
        return (
            head + f"{differ} of the {len(pairs)} pairs differ in some family at "
            f"p ≤ {fmt_g(alpha, 2)}; each pair's p-values: summary(comparison, every_pair=True)."
        )

    def listed(items) -> str:
        return ", ".join(f"{name} (p = {fmt_g(p, 2)})" for name, p in items)

    parts = []
    for a, b, tested in pairs:
        low = [(n, p) for n, p in tested if p <= alpha]
        high = [(n, p) for n, p in tested if p > alpha]
        if low:
            text = f"{a} and {b} differ in {listed(low)}"
            text += f"; no difference shown in {listed(high)}" if high else ""
        else:
            bare = ", ".join(f"{name} p = {fmt_g(p, 2)}" for name, p in high)
            text = f"{a} vs {b}: no difference shown ({bare})"
        parts.append(text)
    return head + "; ".join(parts) + "."


#: A headline names at most this many sets of one rank (the rest are counted).
RANKING_TIE_NAMES = 6


def findings_count_line(n_pairs: int, supported: int, per_family: Sequence[tuple[str, int]]) -> str:
    """How many of the pairs hold a finding, in all and per family with uncertainty."""
    if not per_family:
        return f"No finding on any of the {n_pairs} pairs: no family has sampling uncertainty."
    each = ", ".join(f"{family} {count}" for family, count in per_family)
    return f"{supported} of the {n_pairs} pairs hold a finding in some family ({each})."


def every_pair_note(n_pairs: int) -> str:
    """How to read every pair when the summary ranks the sets instead."""
    return (
        f"Each of the {n_pairs} pairs: summary(comparison, every_pair=True), "
        "or the comparison's variables (verdict, finding)."
    )


# The headline: one sentence per family, then the pairs that cross or are undecided. Pairs
# are given as (i, j, reading) with i < j in the sets' order; a reading is of (a=i, b=j).

#: A condition's table names at most this many pairs (the rest are counted).
TABLE_ROWS = 12


def outcome(r: Reading, banded: bool) -> str:
    """What a headline reads of one family's pair: its finding where the family has
    sampling uncertainty, else these samples' verdict."""
    return r.finding if banded else r.verdict


def _where(r: Reading) -> str:
    return ", ".join(f"{r.symbol} ≈ {fmt_g(x)}" for x in r.crossings if not math.isnan(x))


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _open_counts(kinds: Sequence[str]) -> list[str]:
    """How many pairs cross, are not distinguishable, tied or unordered by bounds."""
    parts = []
    for kind, one, many in (
        ("crosses", "pair crosses", "pairs cross"),
        ("not distinguishable", "pair not distinguishable", "pairs not distinguishable"),
        ("tied", "pair equal within the margin", "pairs equal within the margin"),
        ("bounds overlap", "pair with overlapping bounds", "pairs with overlapping bounds"),
    ):
        n = sum(k == kind for k in kinds)
        if n:
            parts.append(_plural(n, one, many))
    return parts


def headline_sentence(
    labels: Sequence[str], pairs: Sequence[tuple[int, int, Reading]], banded: bool
) -> str:
    """One family's reading of a condition in one sentence, always from the leader's side.

    Two sets: what the pair shows. More: the sets in order ("a ≻ b ≻ c") when every pair
    is ordered that way, else the ordered pairs when there are at most LIST_ORDERED_UP_TO
    ("a ≻ c"), else each set's count of others it is ahead of (+) and behind (−), best
    first; then how many pairs are not ordered.

    >>> r = Reading(family="v", verdict="dominated", finding="dominated")
    >>> headline_sentence(["A", "B"], [(0, 1, r)], True)
    'B ≻ A'
    """
    n = len(labels)
    wins, losses = [0] * n, [0] * n
    kinds = []
    partial = []  # step 9: pairs ordered on part of the domain, named or counted
    for i, j, r in pairs:
        kind = outcome(r, banded)
        if banded and has_part(r):
            kind = "ordered on part"
            partial.append(part_claim(labels[i], labels[j], r))
        kinds.append(kind)
        if kind == "dominates":
            wins[i], losses[j] = wins[i] + 1, losses[j] + 1
        elif kind == "dominated":
            wins[j], losses[i] = wins[j] + 1, losses[i] + 1
    tail = "" if banded else " (these samples, no confidence)"
    if len(pairs) == 1:
        i, j, r = pairs[0]
        a, b, kind = labels[i], labels[j], kinds[0]
        if partial:
            return f"{partial[0]}; not distinguishable elsewhere"
        if kind in ("dominates", "dominated"):
            first, second = (a, b) if kind == "dominates" else (b, a)
            return f"{first} ≻ {second}{tail}"
        said = {
            "crosses": f"{a} and {b} cross" + (f" at {_where(r)}" if _where(r) else ""),
            "tied": f"{a} and {b} are equal within the margin",
            "not distinguishable": f"{a} and {b} are not distinguishable at this sample size",
            "bounds overlap": f"the bounds of {a} and {b} overlap",
            "no uncertainty": f"no finding on {a} vs {b}",
        }
        return said.get(kind, f"{a} vs {b}: {kind}") + tail
    order = sorted(range(n), key=lambda k: (losses[k] - wins[k], k))
    counts = _open_counts(kinds)
    if len(partial) > LIST_ORDERED_UP_TO:
        partial = [_plural(len(partial), "pair ordered on part of the domain",
                           "pairs ordered on part of the domain")]  # fmt: skip
    # "; " between the partial findings: their "0.1 ≤ q ≤ 2" reads badly in a comma list.
    rest = partial + ([", ".join(counts)] if counts else [])
    if not any(wins):
        if partial:
            return "; ".join(rest) + tail
        nobody = "no set is ahead of another: " + ", ".join(counts) if counts else "no finding"
        return nobody + tail
    groups: list[tuple[list[int], int, int]] = []
    for k in order:
        if groups and groups[-1][1:] == (wins[k], losses[k]):
            groups[-1][0].append(k)
        else:
            groups.append(([k], wins[k], losses[k]))
    # Layers: each set ahead of every set in the layers below and of none in its own.
    rank = {k: g for g, (members, _, _) in enumerate(groups) for k in members}
    below = [sum(len(m) for m, _, _ in groups[g + 1 :]) for g in range(len(groups))]
    if all(wins[k] == below[rank[k]] for k in range(n)):
        layered = " ≻ ".join(_names([labels[k] for k in m]) for m, _, _ in groups)
        return layered + ("; " + "; ".join(rest) if rest else "") + tail
    ordered = [(i, j, kind) for (i, j, _), kind in zip(pairs, kinds, strict=True)
               if kind in ("dominates", "dominated")]  # fmt: skip
    if len(ordered) <= LIST_ORDERED_UP_TO:  # a few leads: each one, from the leader's side
        leads = [
            f"{labels[i]} ≻ {labels[j]}" if kind == "dominates" else f"{labels[j]} ≻ {labels[i]}"
            for i, j, kind in ordered
        ]
        return ", ".join(leads) + ("; " + "; ".join(rest) if rest else "") + tail
    ranked = [f"{_names([labels[k] for k in m])} (+{w} −{lost})" for m, w, lost in groups]
    return ", ".join(ranked) + ("; " + "; ".join(rest) if rest else "") + tail


#: A headline whose family orders at most this many pairs, not in layers, names each of them
#: ("a ≻ b, c ≻ d") instead of ranking every set by its counts.
LIST_ORDERED_UP_TO = 3


def _names(labels: Sequence[str]) -> str:
    """Sets of one rank: "a", "a and b", "a, b and c", or the first RANKING_TIE_NAMES
    and how many more."""
    if len(labels) > RANKING_TIE_NAMES:
        more = len(labels) - RANKING_TIE_NAMES
        return ", ".join(labels[:RANKING_TIE_NAMES]) + f" and {more} more"
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def uses_counts(sentences: Sequence[str]) -> bool:
    """Whether a headline writes the (+ −) counts, which its intro line then explains."""
    return any(" −" in s and "(+" in s for s in sentences)


HEADLINE_COUNTS = "(+n −m): ahead of n of the other sets, behind m."


def open_row(
    a: str, b: str, families: Sequence[tuple[str, Reading, bool]]
) -> tuple[str, str, str] | None:
    """One table row: the pair "a vs b", the families where they cross (and where), and
    those where they are not distinguishable (and the samples per set that would resolve
    it) or the bounds overlap; None when every family orders or ties them."""
    crossed, open_ = [], []
    for family, r, banded in families:
        kind = outcome(r, banded)
        if kind == "crosses":
            where = _where(r)
            crossed.append(f"{family} ({where})" if where else family)
        elif kind == "not distinguishable":
            notes = [part_claim(a, b, r)] if banded and has_part(r) else []
            if math.isfinite(r.n_needed):
                notes.append(f"≈ {int(r.n_needed):,}")
            elif r.verdict == "bounds overlap":
                # no sample size where the large-n bounds alone leave the pair open
                notes.append("bounds overlap")
            open_.append(family + (f" ({'; '.join(notes)})" if notes else ""))
        elif kind == "bounds overlap":
            open_.append(f"{family} (bounds overlap)")
    if not crossed and not open_:
        return None
    return (f"{a} vs {b}", ", ".join(crossed) or "–", ", ".join(open_) or "–")


TABLE_HEAD = ("pair", "cross in", "not distinguishable in (≈ samples per set to resolve)")


#: The plain-text table's words before each cell.
PLAIN_HEAD = ("cross in", "not distinguishable in")


def table_lines(rows: Sequence[tuple[str, str, str]], markdown: bool) -> list[str]:
    """The pairs that cross or are undecided, at most TABLE_ROWS of them: a Markdown
    table, or in plain text one line per pair."""
    if not rows:
        return []
    shown, more = rows[:TABLE_ROWS], len(rows) - TABLE_ROWS
    if markdown:
        lines = ["| " + " | ".join(TABLE_HEAD) + " |", "|---|---|---|"]
        lines += ["| " + " | ".join(row) + " |" for row in shown]
    else:
        lines = [
            f"{pair}: " + "; ".join(
                f"{head} {cell}" for head, cell in zip(PLAIN_HEAD, rest, strict=True)
                if cell != "–"
            )
            for pair, *rest in shown
        ]  # fmt: skip
    if more > 0:
        lines.append("")
        lines.append(f"…and {_plural(more, 'more pair', 'more pairs')} (each pair below).")
    return lines


def table_intro(n_rows: int, n_pairs: int) -> str:
    """The line before the table."""
    if n_pairs == 0:
        return "No pair to compare: the condition holds one set."
    if n_pairs == 1:
        return (
            "The pair crosses or is not distinguishable in some family:"
            if n_rows
            else ("Every family orders or ties the pair.")
        )
    if n_rows == 0:
        return f"Every family orders or ties each of the {_plural(n_pairs, 'pair', 'pairs')}."
    return (
        f"{n_rows} of the {_plural(n_pairs, 'pair', 'pairs')} cross or are not "
        "distinguishable in some family:"
    )


def headline_lines(
    labels: Sequence[str],
    families: Sequence[str],
    pairs: Sequence[tuple[int, int, Sequence[Reading]]],
    markdown: bool,
) -> list[str]:
    """A condition's headline: one sentence per family (its findings where it has sampling
    uncertainty, else these samples' verdicts), then the table of the pairs that cross or
    are not distinguishable. ``pairs`` lists (i, j, readings) with i < j, one reading per
    family in ``families``' order; labels and names arrive escaped for their context.

    >>> r = Reading(family="Vendi score", verdict="dominates", finding="dominates")
    >>> headline_lines(["A", "B"], ["Vendi score"], [(0, 1, [r])], False)
    ['- Vendi score: A ≻ B.', '', 'Every family orders or ties the pair.']
    """
    banded = [
        any(r[k].finding != "no uncertainty" for _, _, r in pairs) for k in range(len(families))
    ]
    lines = []
    for k, name in enumerate(families):
        said = headline_sentence(labels, [(i, j, r[k]) for i, j, r in pairs], banded[k])
        lines.append(f"- **{name}**: {said}." if markdown else f"- {name}: {said}.")
    if uses_counts(lines):
        lines += ["", HEADLINE_COUNTS]
    rows = []
    for i, j, r in pairs:
        row = open_row(labels[i], labels[j], [(x.family, x, banded[k]) for k, x in enumerate(r)])
        if row:
            rows.append(row)
    lines += ["", table_intro(len(rows), len(pairs))]
    if rows:
        lines += ["", *table_lines(rows, markdown)]
    return lines


def details_title(n_pairs: int) -> str:
    """The disclosure's title over every pair's detail."""
    return f"Each pair in detail ({_plural(n_pairs, 'pair', 'pairs')})"
