"""Plain-language conclusions from a comparison, with the conditions they hold under."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import markdown_code, markdown_text
from ..pipeline import FAMILIES
from . import _wording as wording
from ._wording import Reading, finding_intro

#: How untrusted text (labels, paths, attributes) is written: as Markdown text and
#: code spans, or (for the report's <pre>, which HTML-escapes it) as it is.
Text = Callable[[object], str]


def _plain_code(value: object) -> str:
    return f"`{value}`"


def _family(name: str, esc: Text) -> str:
    """How a family is named in prose: our families by their display names ("average
    pairwise distance", escaped: they hold Markdown's "(" and "-"), anything else (a
    crafted file) escaped as it is."""
    fam = FAMILIES.get(name)
    return esc(fam.long_name if fam is not None else name)


class _Table:
    """A comparison Dataset's per-pair variables as numpy arrays (set_a, set_b, family, ...),
    read once: selecting each pair from xarray cost about 40 ms, 200 s for 100 sets."""

    def __init__(self, res) -> None:
        self.res = res
        self.index = {str(s): k for k, s in enumerate(res.set_a.values)}
        self.families = [str(f) for f in res.family.values]
        self.arrays = {}
        for var in ("verdict", "crossings", "minor_lead", "minor_share", "verdict_ci", "finding",
                    "p_holm", "part_side", "part_from", "part_to",
                    *NEEDED.values()):  # fmt: skip
            if var in res:
                da = res[var]
                order = ("set_a", "set_b", "family")
                self.arrays[var] = da.transpose(*order, ...).values

    def get(self, var: str, a: str, b: str):
        """The variable's values for the pair (a, b): one per family (and crossing)."""
        return self.arrays[var][self.index[a], self.index[b]]


def _readings(table, a: str, b: str, esc: Text) -> list[Reading]:
    """Each family's reading of the pair (a, b), from a comparison Dataset (or its table)."""
    if not isinstance(table, _Table):
        table = _Table(table)
    have = table.arrays
    row = {var: table.get(var, a, b) for var in have}
    out = []
    for k, f in enumerate(table.families):
        fam = FAMILIES.get(f)
        locs = row["crossings"][k] if "crossings" in have else []
        out.append(
            Reading(
                family=_family(f, esc),
                verdict=str(row["verdict"][k]),
                symbol=fam.display()["symbol"] if fam is not None else "",
                scale_free=fam is None or fam.parameter is None,
                unit=str(table.res.attrs.get(f"margin_unit_{f}", "relative")),
                crossings=[float(x) for x in np.atleast_1d(locs)],
                lead=float(row["minor_lead"][k]) if "minor_lead" in have else np.nan,
                share=float(row["minor_share"][k]) if "minor_share" in have else 0.0,
                confident=esc(str(row["verdict_ci"][k])) if "verdict_ci" in have else "no band",
                finding=esc(str(row["finding"][k])) if "finding" in have else "no uncertainty",
                **_needed_of(row, have, k),
                **_parts_of(row, have, k),
            )
        )
    return out


def _needed_of(row, have, k: int) -> dict[str, Any]:
    """The fields of a lead not yet supported (those the comparison stores)."""
    return {key: float(row[var][k]) for key, var in NEEDED.items() if var in have}


def _parts_of(row, have, k: int) -> dict[str, Any]:
    """Step 9's side and runs of one family's pair (none in a comparison from before
    them; a file's values are untrusted: a side is its sign, a run needs both ends)."""
    if not {"part_side", "part_from", "part_to"} <= set(have):
        return {}
    side = float(row["part_side"][k])
    if not np.isfinite(side) or side == 0:
        return {}
    ends = zip(np.atleast_1d(row["part_from"][k]), np.atleast_1d(row["part_to"][k]), strict=False)
    runs = tuple((float(lo), float(hi)) for lo, hi in ends if not (np.isnan(lo) or np.isnan(hi)))
    return {"part_side": float(np.sign(side)), "parts": runs} if runs else {}


#: Reading field -> comparison variable, for leads not yet supported.
NEEDED = {
    "n_needed": "n_needed",
    "needed_at": "n_needed_at",
    "lead_at": "lead_at",
    "noise_at": "noise_at",
    "lead_side": "lead_side",
}


def _finding_lines(res, esc: Text) -> list[str]:
    """What the findings hold with, or that none is supported and why."""
    fams = res.family.values.tolist()
    if "finding" not in res:  # a comparison from before findings: say so, claim nothing
        return finding_intro(0.95, [(esc(f), "a comparison made before findings") for f in fams], 0)
    without = []
    for k, f in enumerate(fams):
        if bool((res.finding.isel(family=k).values == "no uncertainty").any()):
            how = str(res.attrs.get(f"uncertainty_{f}", "no replicates"))
            without.append((_family(f, esc), esc(how.removeprefix("none: ") or "no replicates")))
    banded = int(res.attrs.get("finding_families", len(fams) - len(without)))
    return finding_intro(float(res.attrs.get("finding_level", 0.95)), without, banded)


def _tested(table: _Table, a: str, b: str, esc: Text) -> list[tuple[str, float]]:
    """(family as written, Holm-adjusted p) for each family the permutation test covered
    on the pair (a, b); empty when the comparison holds no test."""
    if "p_holm" not in table.arrays:
        return []
    row = table.get("p_holm", a, b)
    return [
        (_family(f, esc), float(p))
        for f, p in zip(table.families, row, strict=True)
        if np.isfinite(p)
    ]


def _permutation_note(table: _Table, a: str, b: str, esc: Text) -> str | None:
    """The permutation test's p-values for the pair, when compare was given one."""
    tested = _tested(table, a, b, esc)
    return wording.permutation_note(tested, int(table.res.attrs.get("n_permutations", 0)))


def _permutation_lines(table: _Table, labels: list[str], esc: Text) -> list[str]:
    """The permutation tests' reading after the headline, when the comparison holds them:
    each pair's families that differ at the findings' level, up to a few pairs."""
    if "p_holm" not in table.arrays:
        return []
    alpha = 1.0 - float(table.res.attrs.get("finding_level", 0.95))
    pairs = []
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            tested = _tested(table, a, b, esc)
            if tested:
                pairs.append((esc(a), esc(b), tested))
    if not pairs:
        return []
    R = int(table.res.attrs.get("n_permutations", 0))
    return ["", wording.permutation_line(pairs, R, alpha)]


def _rule_lines(res, esc: Text) -> list[str]:
    """How the verdicts were read: the margins, and whether any holds with confidence."""
    attrs = res.attrs
    if "min_share" not in attrs:
        return []
    margins = [
        (_family(f, esc), float(attrs[f"margin_{f}"]), str(attrs.get(f"margin_unit_{f}")))
        for f in res.family.values.tolist()
        if attrs.get(f"margin_{f}") is not None
    ]
    bounded = [
        (_family(f, esc), esc(str(attrs[f"method_{f}"])))
        for f in res.family.values.tolist()
        if str(attrs.get(f"method_{f}", "exact")) != "exact"
    ]
    return wording.rule_lines(margins, float(attrs["min_share"]), bounded)


def summarize_condition(
    res,
    path: str,
    *,
    esc: Text = markdown_text,
    code: Text = markdown_code,
    every_pair: bool | None = None,
) -> str:
    """Markdown for one condition of a comparison result.

    Every label, path and attribute is untrusted: ``esc`` writes it as text and
    ``code`` as a code span (Markdown-escaped by default, so that it renders as
    the text it is). ``every_pair``: write each pair (True), a ranking per family and
    the count of findings (False), or the pairs up to ``PAIRS_UP_TO_SETS`` sets (None).
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
    table = _Table(res)
    if every_pair is None:
        every_pair = len(labels) <= PAIRS_UP_TO_SETS
    markdown = esc is not str
    # The finding first: what it holds with, one sentence per family and the pairs that
    # cross or are undecided; then the condition's facts; then each pair, folded.
    lines = [head, "", *_finding_lines(res, esc), ""]
    lines += _headline_lines(table, labels, esc, markdown)
    lines += _permutation_lines(table, labels, esc)
    lines += ["", "Condition: " + ", ".join(details) + "."]
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
            lines.append("")  # the next line would otherwise continue the quote
    lines += _rule_lines(res, esc)
    lines.append("")
    if not every_pair:
        return "\n".join(lines + _ranking_lines(table, labels, esc))
    n_pairs = len(labels) * (len(labels) - 1) // 2
    # A disclosure in Markdown (its title is our own text); a line in plain text.
    title = wording.details_title(n_pairs)
    lines += [f"<details><summary>{title}</summary>", ""] if markdown else [title]
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            lines += wording.pair_block(esc(a), esc(b), _readings(table, a, b, esc))
            # up to PERMUTATION_PAIRS pairs the paragraph after the headline has them
            note = (
                _permutation_note(table, a, b, esc) if n_pairs > wording.PERMUTATION_PAIRS else None
            )
            if note:
                lines.append(f"  - {note}")
    if markdown:
        lines += ["", "</details>"]
    return "\n".join(lines)


def _headline_lines(table: _Table, labels: list[str], esc: Text, markdown: bool) -> list[str]:
    """The headline (wording.headline_lines) from a comparison's table."""
    pairs = [
        (i, j, _readings(table, labels[i], labels[j], esc))
        for i in range(len(labels))
        for j in range(i + 1, len(labels))
    ]
    names = [_family(f, esc) for f in table.families]
    return wording.headline_lines([esc(s) for s in labels], names, pairs, markdown)


#: Above this many sets (66 pairs), a condition's summary ranks the sets per family and
#: counts the findings instead of writing each of the S (S - 1) / 2 pairs.
PAIRS_UP_TO_SETS = 12


def _ranking_lines(table: _Table, labels: list[str], esc: Text) -> list[str]:
    """How many pairs hold a finding, in all and per family (the headline has already
    ranked the sets per family), and how to read every pair."""
    found = "finding" in table.arrays
    findings = table.arrays["finding"] if found else None
    lines: list[str] = []
    supported = np.zeros((len(labels), len(labels)), dtype=bool)
    per_family = []
    for k, f in enumerate(table.families):
        if findings is None or not np.isin(findings[..., k], wording.CLAIMS).any():
            continue
        claims = np.isin(findings[..., k], wording.CLAIMS)
        supported |= claims
        per_family.append((_family(f, esc), int(np.triu(claims, 1).sum())))
    n_pairs = len(labels) * (len(labels) - 1) // 2
    lines.append(wording.findings_count_line(n_pairs, int(np.triu(supported, 1).sum()), per_family))
    lines.append(wording.every_pair_note(n_pairs))
    return lines


def summary(comparison, *, markdown: bool = True, every_pair: bool | None = None) -> str:
    """Markdown summary of a comparison tree (the result of :func:`compare`).

    Labels and attributes are escaped so that a Markdown renderer shows them as
    text; ``markdown=False`` writes them as they are (plain text, for a page that
    escapes it itself). A condition of more than ``PAIRS_UP_TO_SETS`` sets leads with a
    ranking of the sets per family and the number of pairs with a finding, not every
    pair (their number grows as the square of the sets'); ``every_pair=True`` writes
    each pair, ``False`` ranks whatever the number of sets.
    """
    if every_pair is not None and not isinstance(every_pair, bool):
        raise TypeError(
            f"The 'every_pair' argument of summary must be None (pairs up to "
            f"{PAIRS_UP_TO_SETS} sets, else a ranking), True or False. Got {every_pair!r}."
        )
    from ..pipeline import comparison_paths

    esc, code = (markdown_text, markdown_code) if markdown else (str, _plain_code)
    parts = [
        summarize_condition(
            comparison[p].to_dataset(), p, esc=esc, code=code, every_pair=every_pair
        )
        for p in comparison_paths(comparison)
    ]
    return "\n\n".join(parts) + "\n"
