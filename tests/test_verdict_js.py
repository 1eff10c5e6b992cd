"""The browser's verdict rule (js/verdict.ts) agrees with verdict.py on shared fixtures.

Python generates the cases and the expected answers from ``verdict.py`` (the one
specification); node runs the compiled TypeScript on the same cases.
"""

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from diversity_profiles import verdict as rule

ROOT = Path(__file__).resolve().parents[1]
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"


def _encode(values):
    return [
        ("inf" if x > 0 else "-inf") if np.isinf(x) else ("nan" if np.isnan(x) else float(x))
        for x in np.asarray(values, dtype=float)
    ]


def make_cases():
    rng = np.random.default_rng(0)
    cases = []
    q = np.concatenate([[0.0], np.geomspace(0.01, 100, 30), [np.inf]])
    lin = np.linspace(0, 4, 25)
    for k in range(60):
        axis, theta, step = [("log", q, False), ("linear", lin, True), ("linear", lin, False)][
            k % 3
        ]
        m = theta.size
        kind = k % 5
        if kind == 0:  # random walks: many crossings
            a, b = np.cumsum(rng.standard_normal((2, m)), axis=1)
        elif kind == 1:  # integer steps with tied plateaus
            a = np.sort(rng.integers(0, 6, m))[::-1].astype(float)
            b = np.sort(rng.integers(0, 6, m))[::-1].astype(float)
        elif kind == 2:  # shifted copies and exact ties
            a = np.linspace(5, 1, m)
            b = a + rng.choice([0.0, 0.5, -0.5])
        elif kind == 3:  # infinities (energy of coincident points)
            a = -np.abs(rng.standard_normal(m))
            b = a.copy()
            b[rng.integers(0, m, 3)] = -np.inf
        elif kind == 4:  # near-ties within tolerance
            a = np.linspace(1, 2, m)
            b = a * (1 + rng.choice([1e-9, -1e-9, 1e-3], m))
        if k % 10 == 9:  # counts with a one-sample blip (the demo's Circles)
            a = np.round(np.linspace(150, 20, m))
            b = a + rng.choice([0, 0, 5, 12])
            b[rng.integers(0, m)] = a[0] - 1
        case = {
            "theta": _encode(theta),
            "a": _encode(a),
            "b": _encode(b),
            "axis": axis,
            "step": step,
            "unit": ["n", "relative"][k % 2],
            "margin": [0.0, 0.01, 0.05, 0.2][k % 4],
            "n": [150, 40, 7][k % 3],
            "min_share": [0.05, 0.0, 0.3][(k // 3) % 3],
        }
        if k % 4 == 0 or k % 10 == 9:
            case.update(
                boot_a=[_encode(a + rng.normal(0, 0.3, m)) for _ in range(30)],
                boot_b=[_encode(b + rng.normal(0, 0.3, m)) for _ in range(30)],
                scale_a=float(rng.choice([1.0, 0.9934])),
                scale_b=1.0,
                cap=float(rng.choice([1.0, 2.0])),
                ci=0.9,
            )
        cases.append((case, theta, a, b))
    return cases


def expected(case, theta, a, b):
    s = rule.signs(a, b)
    out = {
        "signs": s.tolist(),
        "verdict": rule.verdict_of(s),
        "crossings": rule.crossings(theta, a, b, s, case["axis"], case["step"]),
        "share": rule.share_ahead(theta, a, b, s, case["axis"], case["step"]),
    }
    m = rule.margins(a, b, case["unit"], case["margin"], case["n"])
    verdict, lead, share = rule.margin_verdict(
        theta, a, b, s, m, case["axis"], case["step"], case["min_share"], case["unit"]
    )
    out.update(margins=m, margin_verdict=verdict, lead=[lead], minor_share=[share])
    if "boot_a" in case:
        ba = np.array([[float(x) for x in r] for r in case["boot_a"]])
        bb = np.array([[float(x) for x in r] for r in case["boot_b"]])
        ca = rule.centred_replicates(ba, a, case["scale_a"], case["cap"])
        cb = rule.centred_replicates(bb, b, case["scale_b"], case["cap"])
        for band, simultaneous in (("pointwise", False), ("simultaneous", True)):
            lower, upper = rule.band_of_difference(a, b, ca, cb, case["ci"], simultaneous)
            out[band] = [lower, upper]
            out[f"confident_{band}"] = rule.confident_verdict(
                theta, lower, upper, m, case["axis"], case["step"], case["min_share"]
            )
    return out


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm is not installed: the browser's verdict rule is built and run with it")
    assert ESBUILD.exists(), (
        "node_modules is missing: `pip install -e .` (or `npm install`) builds it"
    )
    out = tmp_path_factory.mktemp("js") / "verdict.mjs"
    subprocess.run(
        [
            str(ESBUILD),
            str(ROOT / "js" / "verdict.ts"),
            "--bundle",
            "--format=esm",
            f"--outfile={out}",
            "--log-level=warning",
        ],
        check=True,
    )
    return out


def test_browser_rule_matches_python_on_shared_fixtures(compiled, tmp_path):
    cases = make_cases()
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([c for c, *_ in cases]))
    node = shutil.which("node")
    assert node, "node is required to test the widget's verdict rule"
    run = subprocess.run(
        [node, str(ROOT / "js" / "tests" / "run_verdict_cases.mjs"), str(compiled), str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    decode = {"inf": np.inf, "-inf": -np.inf, "nan": np.nan}
    got = json.loads(
        run.stdout,
        object_hook=lambda d: {
            k: [decode.get(x, x) if isinstance(x, str) else x for x in v]
            if isinstance(v, list)
            else v
            for k, v in d.items()
        },
    )
    crossing_cases = 0
    seen = {"dismissed": 0, "confident": set(), "margin_changed": 0}
    for (case, theta, a, b), js in zip(cases, got, strict=True):
        want = expected(case, theta, a, b)
        assert js["signs"] == want["signs"]
        assert js["verdict"] == want["verdict"]
        assert js["crossings"] == pytest.approx(want["crossings"], rel=1e-12, abs=1e-12)
        assert js["share"] == pytest.approx(want["share"], rel=1e-12, abs=1e-12)
        crossing_cases += want["verdict"] == "crosses"
        np.testing.assert_allclose(js["margins"], want["margins"], rtol=1e-12)
        assert js["margin_verdict"] == want["margin_verdict"]
        np.testing.assert_allclose(js["lead"], want["lead"], rtol=1e-12)
        np.testing.assert_allclose(js["minor_share"], want["minor_share"], rtol=1e-12)
        seen["dismissed"] += bool(np.isfinite(want["lead"][0]))
        seen["margin_changed"] += want["margin_verdict"] != want["verdict"]
        for band in ("pointwise", "simultaneous"):
            if band not in want:
                continue
            for side in (0, 1):
                np.testing.assert_allclose(
                    np.array(js[band][side], dtype=float), want[band][side], rtol=1e-9, atol=1e-12
                )
            assert js[f"confident_{band}"] == want[f"confident_{band}"]
            seen["confident"].add(want[f"confident_{band}"])
    assert crossing_cases >= 10  # the fixtures exercise crossings, not only easy verdicts
    # ...and the margin: verdicts it changes, dismissed leads, every confident answer.
    assert seen["margin_changed"] >= 5 and seen["dismissed"] >= 5
    assert seen["confident"] >= {"crosses", "uncertain"}
    assert seen["confident"] & {"dominates", "dominated"}
