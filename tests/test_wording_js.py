"""The browser's summary (js/wording.ts) words findings and verdicts exactly as summary.py does.

Python generates the cases and the expected lines from ``wording.py`` (the one
summariser, used by ``summary.py``); node runs the compiled TypeScript on the same cases.
"""

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from diversity_profiles.comparison import _wording as wording
from diversity_profiles.comparison._wording import Reading

ROOT = Path(__file__).resolve().parents[1]
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"
VERDICTS = ("dominates", "dominated", "crosses", "tied", "bounds overlap")


def _enc(x: float):
    return ("inf" if x > 0 else "-inf") if math.isinf(x) else ("nan" if math.isnan(x) else x)


def make_cases():
    rng = np.random.default_rng(0)
    names = ["vendi", "magnitude", "circles", "energy", "average_distance", "richness"]
    symbols = ["q", "t", "τ", "s", "", ""]
    cases = []
    for k in range(80):
        readings = []
        for f, name in enumerate(names[: 1 + k % len(names)]):
            kinds = 5 if k % 4 == 1 else 4  # "bounds overlap" in every fourth case
            verdict = VERDICTS[rng.integers(0, kinds)] if k % 7 else ["tied", "dominates"][k % 2]
            scale_free = symbols[f] == ""
            crossings = (
                []
                if verdict != "crosses" or scale_free
                else sorted(
                    float(x)
                    for x in rng.choice(
                        [0.5, 1.0, 2.345678, 1234.5, 0.000123456, np.inf, 10.0], rng.integers(1, 4)
                    )
                )
            )
            lead = float(rng.choice([np.nan, 1.0, 2.0, 0.004, 0.00001, 0.123456, 1.5]))
            readings.append(
                Reading(
                    family=name,
                    verdict=verdict if not (scale_free and verdict == "crosses") else "tied",
                    symbol=symbols[f],
                    scale_free=scale_free,
                    unit="n" if name in ("circles", "richness") else "relative",
                    crossings=crossings,
                    lead=lead,
                    share=float(rng.choice([0.0, 0.003, 0.125, 0.375, 0.5, 0.25, 0.999])),
                    confident=str(rng.choice(["no band", "dominates", "uncertain", "crosses"]))
                    if k % 3
                    else "no band",
                    **_finding_of(rng, k, f, verdict, scale_free),
                )
            )
        cases.append(
            {
                "a": ["1 class", "set ≻ a", "A"][k % 3],
                "b": ["3 classes", "B", "b`*"][k % 3],
                "readings": readings,
                "level": float(rng.choice([0.95, 0.9, 0.5])),
                "without": [
                    [
                        r.family,
                        str(
                            rng.choice(
                                [
                                    "n_boot=0",
                                    "large-n method; its bounds are about this sample only",
                                    "no replicates",
                                ]
                            )
                        ),
                    ]
                    for r in readings
                    if r.finding == "no uncertainty"
                ],
                "banded": sum(r.finding != "no uncertainty" for r in readings) if k % 5 else 0,
                "margins": [
                    [r.family, float(rng.choice([0.01, 0.05, 0.125, 1e-7])), r.unit]
                    for r in readings
                ],
                "min_share": float(rng.choice([0.05, 0.0, 0.3, 0.125])),
                "bounded": [
                    [r.family, ["certified bounds", "estimate ± error"][f % 2]]
                    for f, r in enumerate(readings)
                    if k % 4 == 1 and f % 3 != 2
                ],
                "numbers": [
                    float(x)
                    for x in rng.choice(
                        [
                            0.0,
                            1.0,
                            9.996,
                            0.00012345,
                            123456.7,
                            1.5e17,
                            -2.5,
                            np.inf,
                            0.125,
                            0.995,
                            12.5,
                        ],
                        4,
                    )
                ],
            }
        )
    return cases


FINDINGS = ("dominates", "dominated", "crosses", "tied", "not distinguishable", "no uncertainty")


def _finding_of(rng, k: int, f: int, verdict: str, scale_free: bool) -> dict:
    """What the samples support (step 8), with the lead not yet supported where there is
    one: finite or NaN sample needs, either side ahead, counts and relative leads."""
    if k % 9 == 8:  # a whole pair without uncertainty (n_boot=0)
        return {"finding": "no uncertainty"}
    finding = FINDINGS[(k + 3 * f + int(rng.integers(0, 2))) % len(FINDINGS)]
    if k % 11 == 10:  # nothing supported: the pair is not distinguishable
        finding = ["not distinguishable", "tied"][f % 3 == 2]
    if scale_free and finding == "crosses":
        finding = "not distinguishable"
    out = {"finding": finding}
    if finding == "not distinguishable" and k % 4 != 3:
        out.update(
            n_needed=float(rng.choice([12.0, 450.0, 1234567.0, 1.0])),
            needed_at=float(rng.choice([0.5, 1.25, np.inf, 0.000123])),
            lead_at=float(rng.choice([0.0213, -0.004, 1.0, -3.0, 0.5, 0.0])),
            noise_at=float(rng.choice([0.05, 0.0009, 2.0, 1.0])),
            # The leading side, which the binding point's lead need not show (NaN: a
            # comparison made before lead_side, read from the sign of lead_at).
            lead_side=float(rng.choice([1.0, -1.0, np.nan])),
        )
    if finding == "not distinguishable" and not scale_free and k % 3 != 0:
        # Step 9: ordered on part of the domain, by either side, in one run or two, ending at
        # infinity, starting at 0, or a single grid point.
        runs = [
            [(0.1, np.inf)],
            [(0.0, 2.5)],
            [(0.172, 2.27), (5.0, 5.0)],
            [(1.24, 3.08), (3.5, 3.5), (4.0, 4.5)],  # more than LISTED_PARTS: their extent
        ][(k + f) % 4]
        out.update(part_side=float(rng.choice([1.0, -1.0])), parts=runs)
    return out


def expected(case):
    readings = case["readings"]
    return {
        "intro": wording.finding_intro(case["level"], case["without"], case["banded"]),
        "rules": wording.rule_lines(case["margins"], case["min_share"], case["bounded"]),
        "block": wording.pair_block(case["a"], case["b"], readings),
        "numbers": [
            [
                wording.fmt_g(x, 3),
                wording.fmt_g(x, 6),
                wording.percent(x) if math.isfinite(x) else None,
            ]
            for x in case["numbers"]
        ],
    }


def _jsonable(case):
    out = dict(case)
    out["readings"] = [
        {
            **r.__dict__,
            "crossings": [_enc(x) for x in r.crossings],
            "parts": [[_enc(lo), _enc(hi)] for lo, hi in r.parts],
            "part_side": _enc(r.part_side),
            **{
                key: _enc(getattr(r, key))
                for key in ("lead", "n_needed", "needed_at", "lead_at", "noise_at", "lead_side")
            },
        }
        for r in case["readings"]
    ]
    out["numbers"] = [_enc(x) for x in case["numbers"]]
    return out


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm is not installed: the browser's summariser is built and run with it")
    assert ESBUILD.exists(), "node_modules is missing: `pip install -e .` (or `npm install`)"
    out = tmp_path_factory.mktemp("js") / "wording.mjs"
    subprocess.run(
        [str(ESBUILD), str(ROOT / "js" / "wording.ts"), "--bundle", "--format=esm",
         f"--outfile={out}", "--log-level=warning"],
        check=True,
    )  # fmt: skip
    return out


def test_the_browser_words_verdicts_like_summary_py(compiled, tmp_path):
    cases = make_cases()
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([_jsonable(c) for c in cases]))
    node = shutil.which("node")
    assert node
    run = subprocess.run(
        [node, str(ROOT / "js" / "tests" / "run_wording_cases.mjs"), str(compiled), str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(run.stdout)
    seen: set[str] = set()
    for case, js in zip(cases, got, strict=True):
        want = expected(case)
        assert js == want, case
        seen.update(line.split(":")[0].split(" ")[-1] for line in want["block"])
        seen.update(
            w
            for w in (
                "disagree",
                "tied in every",
                "within the margin",
                "confidence",
                "cross in",
                "bounds overlap in",
                "not yet supported",
                "are not distinguishable at this sample size",
                "not distinguishable in",
                "equal within the margin in",
                "no finding on",
                "samples per set would resolve",
                "(not distinguishable elsewhere)",
            )
            if any(w in line for line in want["block"])
        )
        seen.update(w for w in ("No verdict is supported", "No finding in", "Findings hold")
                    if any(w in line for line in want["intro"]))  # fmt: skip
    # The fixtures reach every kind of line.
    assert {
        "disagree",
        "tied in every",
        "within the margin",
        "cross in",
        "bounds overlap in",
        "not yet supported",
        "are not distinguishable at this sample size",
        "not distinguishable in",
        "equal within the margin in",
        "no finding on",
        "No verdict is supported",
        "No finding in",
        "Findings hold",
        "(not distinguishable elsewhere)",
    } <= seen, seen
    # ...including scale-free families' needs (no parameter named) and large ones (1,234,567).
    blocks = [line for case in cases for line in expected(case)["block"]]
    assert any("1,234,567 samples" in line for line in blocks)
    # ...and every way of writing a part of the domain (step 9).
    for said in ("q ≥ 0.1", "≤ 2.5", "0.172 ≤ ", " ≈ 5 ", " and ", " on 3 parts of 1.24 ≤ "):
        assert any(said in line and "elsewhere" in line for line in blocks), said
    assert any("average_distance: " in line and "(noise ±" in line for line in blocks)
    assert any(
        line.startswith("Values known within bounds")
        for case in cases
        for line in expected(case)["rules"]
    )


def test_summary_py_writes_its_pair_lines_with_the_shared_wording():
    import diversity_profiles as dp

    sets = {"A": [[0.0], [1.0], [2.0], [3.0]], "B": [[0.0], [0.1], [0.2]]}
    tree = dp.profiles(sets, representation="x", distance="euclidean", n_points=8)
    res = dp.compare(tree)["x/euclidean"].to_dataset()
    from diversity_profiles.comparison._summary import _readings, summarize_condition

    readings = _readings(res, "A", "B", str)
    block = wording.pair_block("A", "B", readings)
    body = summarize_condition(res, "x/euclidean", esc=str, code=str)
    assert "\n".join(block) in body


def make_headline_cases():
    """Conditions of 1 to 7 sets (up to 21 pairs: more than a table's TABLE_ROWS), each
    pair's readings drawn from make_cases' (so findings, verdicts and crossings vary), and
    hand-made ones: a strict order (layers), a tie of more than RANKING_TIE_NAMES sets."""
    from dataclasses import replace

    pool = [c["readings"] for c in make_cases()]
    cases = []
    for m in range(60):
        n_sets, n_fams = 1 + m % 7, 1 + m % 3
        names = ["Vendi score", "magnitude", "average pairwise distance"][:n_fams]
        pairs = []
        draw = [r for r in pool if len(r) >= n_fams]
        places = [(i, j) for i in range(n_sets) for j in range(i + 1, n_sets)]
        for p, (a, b) in enumerate(places):
            readings = draw[(m * 7 + p * 3) % len(draw)][:n_fams]
            pairs.append([a, b, [replace(r, family=names[f]) for f, r in enumerate(readings)]])
        labels = [f"set {k}" for k in range(n_sets)]
        cases.append({"labels": labels, "families": names, "pairs": pairs, "markdown": m % 2 == 0})
    order = Reading(family="energy", verdict="dominates", finding="dominates")
    tie = Reading(family="energy", verdict="tied", finding="tied")
    cases.append({"labels": ["a", "b", "c"], "families": ["energy"], "markdown": False,
                  "pairs": [[0, 1, [order]], [0, 2, [order]], [1, 2, [order]]]})  # fmt: skip
    undecided = Reading(family="energy", verdict="dominated", finding="not distinguishable")
    few = [[0, 1, [undecided]], [0, 2, [order]], [1, 2, [undecided]]]
    cases.append({"labels": ["a", "b", "c"], "families": ["energy"], "markdown": False,
                  "pairs": few})  # fmt: skip
    part = Reading(
        family="Vendi score",
        verdict="dominates",
        symbol="q",
        finding="not distinguishable",
        part_side=-1.0,
        parts=[(0.0422, np.inf)],
    )
    cases.append({"labels": ["1 class", "10 classes"], "families": ["Vendi score"],
                  "markdown": True, "pairs": [[0, 1, [part]]]})  # fmt: skip
    eight = [[0, j, [order]] for j in range(1, 8)]
    eight += [[i, j, [tie]] for i in range(1, 8) for j in range(i + 1, 8)]
    cases.append({"labels": [f"s{k}" for k in range(8)], "families": ["energy"],
                  "markdown": True, "pairs": eight})  # fmt: skip
    return cases


def test_the_browser_writes_the_headline_like_summary_py(compiled, tmp_path):
    cases = make_headline_cases()
    want = [
        wording.headline_lines(c["labels"], c["families"], c["pairs"], c["markdown"]) for c in cases
    ]
    path = tmp_path / "headline.json"

    def encoded(readings):
        return _jsonable({"readings": readings, "numbers": []})["readings"]

    path.write_text(
        json.dumps([{**c, "pairs": [[i, j, encoded(r)] for i, j, r in c["pairs"]]} for c in cases])
    )
    run = subprocess.run(
        [shutil.which("node"), str(ROOT / "js" / "tests" / "run_wording_cases.mjs"),
         str(compiled), str(path), "headline"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    got = json.loads(run.stdout)
    for case, js, py in zip(cases, got, want, strict=True):
        assert js == py, case
    # Two sets ordered on part of the domain only (step 9) read from the leader's side.
    assert (
        "- **Vendi score**: 10 classes ≻ 1 class for q ≥ 0.0422; not distinguishable "
        "elsewhere." in [line for lines in want for line in lines]
    )
    assert any("pairs ordered on part of the domain" in line for lines in want for line in lines)
    text = "\n".join(line for lines in want for line in lines)
    # The fixtures reach every kind of headline: layers, counts, ties cut short, both tables.
    for words in (" ≻ set ", "(+", "and 1 more", "s0 ≻ s1, s2", "No pair to compare",
                  "a ≻ b ≻ c", "| pair |",
                  "- energy: a ≻ c; 2 pairs not distinguishable.",
                  ": cross in", "not distinguishable in", "…and ", "pairs cross",
                  "(these samples, no confidence)", "Every family orders or ties"):  # fmt: skip
        assert words in text, words
