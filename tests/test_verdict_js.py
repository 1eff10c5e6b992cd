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
        else:  # near-ties within tolerance
            a = np.linspace(1, 2, m)
            b = a * (1 + rng.choice([1e-9, -1e-9, 1e-3], m))
        case = {
            "theta": _encode(theta),
            "a": _encode(a),
            "b": _encode(b),
            "axis": axis,
            "step": step,
        }
        if k % 4 == 0:
            case.update(
                boot_a=[_encode(a + rng.normal(0, 0.3, m)) for _ in range(30)],
                boot_b=[_encode(b + rng.normal(0, 0.3, m)) for _ in range(30)],
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
    if "boot_a" in case:
        ba = np.array([[float(x) for x in r] for r in case["boot_a"]])
        bb = np.array([[float(x) for x in r] for r in case["boot_b"]])
        lower, upper = rule.band_of_difference(a, b, ba, bb, case["ci"])
        out["band"] = [lower, upper]
        out["confident"] = rule.confident_verdict(a, b, lower, upper)
    return out


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
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
    for (case, theta, a, b), js in zip(cases, got, strict=True):
        want = expected(case, theta, a, b)
        assert js["signs"] == want["signs"]
        assert js["verdict"] == want["verdict"]
        assert js["crossings"] == pytest.approx(want["crossings"], rel=1e-12, abs=1e-12)
        assert js["share"] == pytest.approx(want["share"], rel=1e-12, abs=1e-12)
        crossing_cases += want["verdict"] == "crosses"
        if "band" in want:
            for side in (0, 1):
                np.testing.assert_allclose(
                    np.array(js["band"][side], dtype=float),
                    want["band"][side],
                    rtol=1e-9,
                    atol=1e-12,
                )
            assert js["confident"] == want["confident"]
    assert crossing_cases >= 10  # the fixtures exercise crossings, not only easy verdicts
