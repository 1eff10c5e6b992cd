"""The browser's verdict rule (js/verdict.ts) agrees with verdict.py on shared fixtures.

Python generates the cases and the expected answers from ``verdict.py`` (the one
specification); node runs the compiled TypeScript on the same cases. Step 8's family-wise
z is drawn from random recombinations and is not ported: Python computes it and the
cases carry it, as the explorer's payload does.
"""

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from diversity_profiles.comparison import _verdict as rule
from diversity_profiles.pipeline._resampling import centred_replicates

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
    # Step 7: the same curves with bounds (a generator of their own keeps the cases above).
    wide = np.random.default_rng(1)
    for k, (case, theta, a, b) in enumerate(cases):
        if k % 3 == 2:
            continue
        m = theta.size
        scale = [0.0, 0.05, 0.3, 1.0, 3.0][k % 5] * (
            1.0 + np.nanmax(np.abs(np.r_[a, b][np.isfinite(np.r_[a, b])]))
        )
        # Widths: none at about a fifth of the points (bands that touch a value).
        w = scale * wide.random((4, m)) * (wide.random((4, m)) < 0.8)
        case.update(
            lo_a=_encode(a - w[0]),
            hi_a=_encode(a + w[1]),
            lo_b=_encode(b - w[2]),
            hi_b=_encode(b + w[3]),
        )
    # Step 8: every case with replicates gets a family-wise z; these add designed leads
    # (none, within the noise, clear, crossing), unbounded points (a replicate that is
    # not finite), a single replicate (no sd at all) and z = 0.
    more = np.random.default_rng(2)
    for k in range(36):
        axis, theta, step = [("log", q, False), ("linear", lin, True), ("linear", lin, False)][
            k % 3
        ]
        m = theta.size
        a = np.linspace(3, 1, m)
        shift = [0.0, 0.03, 0.3, 1.0, -1.0, np.nan][k % 6]
        b = a - shift if np.isfinite(shift) else a + 0.8 * np.sin(np.linspace(0, 6, m))
        noise = [0.02, 0.1, 0.5][(k // 6) % 3]
        reps = 1 if k % 12 == 11 else [30, 8][k % 2]
        boot_a = a + more.normal(0, noise, (reps, m))
        boot_b = b + more.normal(0, noise, (reps, m))
        if k % 5 == 4:  # a replicate that is not finite: that point has no band
            boot_a[0, more.integers(0, m, 3)] = np.nan
        if k % 7 == 6:
            boot_b[-1, more.integers(0, m)] = np.inf
        case = {
            "theta": _encode(theta),
            "a": _encode(a),
            "b": _encode(b),
            "axis": axis,
            "step": step,
            "unit": ["n", "relative"][k % 2],
            "margin": [0.0, 0.01, 0.05][k % 3],
            "n": [150, 40, 7, 0][k % 4],
            "min_share": [0.05, 0.0, 0.3, 1.0][(k // 3) % 4],
            "boot_a": [_encode(r) for r in boot_a],
            "boot_b": [_encode(r) for r in boot_b],
            "scale_a": [1.0, 0.9934][k % 2],
            "scale_b": 1.0,
            "cap": [1.0, 2.0][(k // 2) % 2],
            "ci": 0.9,
        }
        cases.append((case, theta, a, b))
    # Tiny and huge scales (energy on unscaled data): the same designed leads, values
    # and replicates multiplied by a constant whose squares underflow or overflow.
    for k, factor in enumerate([1e-300, 1e-250, 1e-170, 1e200, 1e250, 1e-20]):
        for j in (k % 6, 6 + k % 6, 12 + k % 6, 24 + k % 6):
            case, theta, a, b = cases[-36 + j]
            scaled = {
                **case,
                "a": _encode(a * factor),
                "b": _encode(b * factor),
                "boot_a": [
                    _encode(np.array([float(x) for x in r]) * factor) for r in case["boot_a"]
                ],
                "boot_b": [
                    _encode(np.array([float(x) for x in r]) * factor) for r in case["boot_b"]
                ],
                "unit": "relative",
            }
            cases.append((scaled, theta, a * factor, b * factor))
    for k, (case, _theta, a, b) in enumerate(cases):
        if "boot_a" in case:
            ca, cb = _centred(case, a, b)
            z = rule.familywise_z([ca, cb], 0.95) if k % 4 else [0.0, 2.5, 8.0][k % 3]
            case["z"] = float(z)
    return cases


def _centred(case, a, b):
    ba = np.array([[float(x) for x in r] for r in case["boot_a"]])
    bb = np.array([[float(x) for x in r] for r in case["boot_b"]])
    ca = centred_replicates(ba, a, case["scale_a"], case["cap"])
    cb = centred_replicates(bb, b, case["scale_b"], case["cap"])
    return ca, cb


def _decoded(case, key):
    return np.array([float(x) for x in case[key]])


def bounded(case, theta, a, b, m, rtol=rule.RTOL, atol=rule.ATOL):
    """Step 7 as compare applies it: verdict, plain verdict, lead, share, crossings."""
    ba = (_decoded(case, "lo_a"), _decoded(case, "hi_a"))
    bb = (_decoded(case, "lo_b"), _decoded(case, "hi_b"))
    axis, step = case["axis"], case["step"]
    verdict, lead, share = rule.bounds_verdict(
        theta, a, b, ba, bb, m, axis, step, case["min_share"], case["unit"]
    )
    plain = rule.bounds_verdict(
        theta, a, b, ba, bb, rule.tie_tolerance(a, b), axis, step, 0.0, case["unit"]
    )[0]
    s, gap = rule.separation_signs(*ba, *bb)
    zero = np.zeros_like(gap)
    return {
        "separation": s.tolist(),
        "gap": gap,
        "verdict": verdict,
        "plain": plain,
        "lead": [lead],
        "minor_share": [share],
        "share": rule.share_ahead(theta, gap, zero, s, axis, step),
        "crossings": rule.crossings(theta, gap, zero, s, axis, step)
        if verdict == "crosses"
        else [],
    }


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
    if "lo_a" in case:
        out["bounded"] = bounded(case, theta, a, b, m)
    if "boot_a" in case:
        ca, cb = _centred(case, a, b)
        for band, simultaneous in (("pointwise", False), ("simultaneous", True)):
            lower, upper = rule.band_of_difference(a, b, ca, cb, case["ci"], simultaneous)
            out[band] = [lower, upper]
            out[f"confident_{band}"] = rule.confident_verdict(
                theta, lower, upper, m, case["axis"], case["step"], case["min_share"]
            )
        # Step 8, as compare applies it: the sd of the difference from each set's sd.
        sd_a, sd_b = rule.replicate_sd(ca), rule.replicate_sd(cb)
        with np.errstate(invalid="ignore"):
            d = np.where(a == b, 0.0, a - b)
            sd = rule.combined_sd(sd_a, sd_b)
        z = case["z"]
        need, at, side = rule.samples_needed(d, sd, z, m, case["n"], case["min_share"])
        out.update(
            sd_a=sd_a,
            sd_b=sd_b,
            finding=rule.finding(theta, d, sd, z, m, case["axis"], case["step"], case["min_share"]),
            n_needed=[need],
            needed_at=at,
            lead_side=[side],
        )
        part_side, parts = rule.finding_parts(
            theta, d, sd, z, m, case["axis"], case["step"], case["min_share"]
        )
        out["parts"] = {"side": [part_side], "runs": [list(r) for r in parts]}
        if "lo_a" in case:  # large-n values with bands: the band widened by the brackets
            ba = (_decoded(case, "lo_a"), _decoded(case, "hi_a"))
            bb = (_decoded(case, "lo_b"), _decoded(case, "hi_b"))
            below, above = rule.bracket_reach(a, b, ba, bb)
            reach = np.maximum(below, above)
            out["bounded_finding"] = {
                "below": below,
                "above": above,
                "sd": rule.widened_sd(sd, reach, z),
                "finding": rule.finding(
                    theta, d, sd, z, m, case["axis"], case["step"], case["min_share"], reach
                ),
            }
            side, runs = rule.finding_parts(
                theta, d, sd, z, m, case["axis"], case["step"], case["min_share"], reach
            )
            out["bounded_finding"]["parts"] = {"side": [side], "runs": [list(r) for r in runs]}
    return out


def _same_parts(got, want):
    """Step 9's side (NaN or ±1) and runs agree between the languages."""
    np.testing.assert_array_equal(np.array(got["side"], float), np.array(want["side"], float))
    assert len(got["runs"]) == len(want["runs"])
    for g, w in zip(got["runs"], want["runs"], strict=True):
        np.testing.assert_array_equal(np.array(g, float), np.array(w, float))


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
    seen = {
        "dismissed": 0,
        "confident": set(),
        "margin_changed": 0,
        "bounded": set(),
        "finding": set(),
        "needed": set(),
        "unbounded": 0,
        "bounded_finding": set(),
        "parts": set(),
    }
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
        # Point bands (lower = upper = value) are step 5 exactly, in both languages.
        assert js["point_bounds"]["verdict"] == want["margin_verdict"]
        np.testing.assert_allclose(js["point_bounds"]["lead"], want["lead"], rtol=1e-12)
        np.testing.assert_allclose(
            js["point_bounds"]["minor_share"], want["minor_share"], rtol=1e-12
        )
        if "bounded" in want:
            got, ref = js["bounded"], want["bounded"]
            assert got["separation"] == ref["separation"]
            np.testing.assert_allclose(np.array(got["gap"], float), ref["gap"], rtol=1e-12)
            assert (got["verdict"], got["plain"]) == (ref["verdict"], ref["plain"])
            np.testing.assert_allclose(got["lead"], ref["lead"], rtol=1e-12)
            np.testing.assert_allclose(got["minor_share"], ref["minor_share"], rtol=1e-12)
            assert got["share"] == pytest.approx(ref["share"], rel=1e-12, abs=1e-12)
            assert got["crossings"] == pytest.approx(ref["crossings"], rel=1e-12, abs=1e-12)
            seen["bounded"].add(ref["verdict"])
        if "bounded_finding" in want:
            got, ref = js["bounded_finding"], want["bounded_finding"]
            for key in ("below", "above", "sd"):
                np.testing.assert_allclose(np.array(got[key], float), ref[key], rtol=1e-12)
            assert got["finding"] == ref["finding"]
            _same_parts(got["parts"], ref["parts"])
            seen["bounded_finding"].add(ref["finding"])
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
        if "finding" in want:
            for side in ("sd_a", "sd_b"):
                np.testing.assert_allclose(
                    np.array(js[side], dtype=float), want[side], rtol=1e-9, atol=1e-12
                )
            assert js["finding"] == want["finding"]
            _same_parts(js["parts"], want["parts"])
            if want["finding"] == "not distinguishable":
                seen["parts"].add(len(want["parts"]["runs"]))
            np.testing.assert_allclose(js["n_needed"], want["n_needed"], rtol=1e-9)
            assert js["needed_at"] == want["needed_at"]
            np.testing.assert_array_equal(js["lead_side"], want["lead_side"])
            seen["finding"].add(want["finding"])
            seen["needed"].add(bool(np.isfinite(want["n_needed"][0])))
            seen["unbounded"] += bool(np.isnan(want["sd_a"]).any())
    assert crossing_cases >= 10  # the fixtures exercise crossings, not only easy verdicts
    # ...and the margin: verdicts it changes, dismissed leads, every confident answer.
    assert seen["margin_changed"] >= 5 and seen["dismissed"] >= 5
    assert seen["confident"] >= {"crosses", "uncertain"}
    assert seen["confident"] & {"dominates", "dominated"}
    # ...and the bounds: every verdict of step 7 occurs.
    assert seen["bounded"] == set(rule.BOUNDED_VERDICTS), seen["bounded"]
    # ...and step 8: every finding the rule can give, finite and NaN sample needs, and
    # points without a band.
    assert seen["finding"] == set(rule.FINDINGS) - {rule.NO_UNCERTAINTY}, seen["finding"]
    assert seen["needed"] == {True, False} and seen["unbounded"] >= 3
    # Step 9: pairs not distinguishable with no part, one run and several.
    assert {0, 1} <= seen["parts"] and max(seen["parts"]) >= 2, seen["parts"]
    # The brackets both leave findings standing and remove some.
    assert len(seen["bounded_finding"]) >= 2, seen["bounded_finding"]


def test_point_bounds_are_the_margin_rule():
    """Step 7 with lower = upper = value is step 5 (exact values keep their verdicts),
    and with the tie tolerance as margin and no minimum share it is step 2."""
    for case, theta, a, b in make_cases():
        s = rule.signs(a, b)
        m = rule.margins(a, b, case["unit"], case["margin"], case["n"])
        args = (theta, a, b, (a, a), (b, b))
        want = rule.margin_verdict(
            theta, a, b, s, m, case["axis"], case["step"], case["min_share"], case["unit"]
        )
        got = rule.bounds_verdict(
            *args, m, case["axis"], case["step"], case["min_share"], case["unit"]
        )
        assert got[0] == want[0]
        np.testing.assert_array_equal(got[1:], want[1:])
        tol = rule.tie_tolerance(a, b)
        plain = rule.bounds_verdict(*args, tol, case["axis"], case["step"], 0.0, case["unit"])
        assert plain[0] == rule.verdict_of(s)
        sep, gap = rule.separation_signs(a, a, b, b)
        np.testing.assert_array_equal(sep, s)
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(gap[s != 0], (a - b)[s != 0])
