"""Plain-language conclusions from a comparison, with the conditions they hold under."""

from __future__ import annotations

from collections.abc import Callable

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
    """Our family names as they are; anything else (a crafted file) escaped."""
    return name if name in FAMILIES else esc(name)


def _readings(res, a: str, b: str, esc: Text) -> list[Reading]:
    """Each family's reading of the pair (a, b), from a comparison Dataset."""
    pair = dict(set_a=a, set_b=b)
    out = []
    for f in res.family.values.tolist():
        fam = FAMILIES.get(f)
        at = dict(pair, family=f)
        locs = res.crossings.sel(**at).values if "crossings" in res else []
        out.append(
            Reading(
                family=_family(f, esc),
                verdict=str(res.verdict.sel(**at).values),
                symbol=fam.display()["symbol"] if fam is not None else "",
                scale_free=fam is None or fam.parameter is None,
                unit=str(res.attrs.get(f"margin_unit_{f}", "relative")),
                crossings=[float(x) for x in np.atleast_1d(locs)],
                lead=float(res.minor_lead.sel(**at)) if "minor_lead" in res else np.nan,
                share=float(res.minor_share.sel(**at)) if "minor_share" in res else 0.0,
                confident=esc(str(res.verdict_ci.sel(**at).values))
                if "verdict_ci" in res
                else "no band",
                finding=esc(str(res.finding.sel(**at).values))
                if "finding" in res
                else "no uncertainty",
                **{key: float(res[var].sel(**at)) for key, var in NEEDED.items() if var in res},
            )
        )
    return out


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


def _permutation_note(res, a: str, b: str, esc: Text) -> str | None:
    """The permutation test's p-values for the pair, when compare was given one."""
    if "p_holm" not in res:
        return None
    row = res.p_holm.sel(set_a=a, set_b=b)
    tested = [
        (_family(str(f), esc), float(p))
        for f, p in zip(row.family.values, row.values, strict=True)
        if np.isfinite(p)
    ]
    return wording.permutation_note(tested, int(res.attrs.get("n_permutations", 0)))


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
    lines = [head, "", *_finding_lines(res, esc), "", "Condition: " + ", ".join(details) + "."]
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
            lines += wording.pair_block(esc(a), esc(b), _readings(res, a, b, esc))
            note = _permutation_note(res, a, b, esc)
            if note:
                lines.append(f"  - {note}")
    return "\n".join(lines)


def summary(comparison, *, markdown: bool = True) -> str:
    """Markdown summary of a comparison tree (the result of :func:`compare`).

    Labels and attributes are escaped so that a Markdown renderer shows them as
    text; ``markdown=False`` writes them as they are (plain text, for a page that
    escapes it itself).
    """
    from ..pipeline import comparison_paths

    esc, code = (markdown_text, markdown_code) if markdown else (str, _plain_code)
    parts = [
        summarize_condition(comparison[p].to_dataset(), p, esc=esc, code=code)
        for p in comparison_paths(comparison)
    ]
    return "\n\n".join(parts) + "\n"
