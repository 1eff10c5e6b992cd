"""Do the confidence bands cover the truth at the stated rate, and are confident verdicts right?

Synthetic data with a known answer: Gaussian mixtures in d=8 with modes on distinct
axes, under the cosine condition, every family. Two pairs of sets:

- ``more modes``: 4 equal modes vs 3 equal modes (the first is more diverse everywhere);
- ``crossing``: 4 modes weighted 0.7/0.1/0.1/0.1 vs 2 equal modes — more modes, but
  dominated by one; Vendi's order q and the other parameters see them cross.

What a band should cover (``resampling.py``): E[estimate at n], the mean over
``--truth-draws`` fresh samples of size n (for energy and average distance, means over
pairs of distinct samples, that is the population value; magnitude, Circles, richness
and the Vendi score at small q grow with n). The true verdict of a pair is the margin
rule (``verdict.py``, step 5) applied to the true curves.

Each repetition draws fresh sets of n samples, runs ``dp.profiles(..., n_boot=B)``
(half-sample replicates) and records, per family:

- pointwise coverage of each set's band (share of grid points covered);
- pointwise coverage of each pair's difference band, and how often it covers the whole
  true difference curve at once (what a pointwise band does not promise);
- simultaneous coverage: how often the sup-t band covers the whole true difference;
- confident verdicts (simultaneous band, default margins): right (= the true verdict)
  and wrong (a different verdict that is not "uncertain"); the same for the pointwise
  band, which ``verdict_ci`` used before.

Circles use the greedy lower bound in estimates and truth alike (``circles_method``).

Run: ``python benchmarks/coverage.py [--reps 100] [--n 100] [--boot 100]``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import diversity_profiles as dp
from diversity_profiles.comparison import _verdict as rule

D = 8
GRIDS = {
    "vendi": [0.25, 0.5, 1.0, 2.0, 4.0, np.inf],
    "magnitude": [2.0, 5.0, 10.0, 20.0, 50.0],
    "circles": [0.05, 0.1, 0.2, 0.4, 0.8],
    "energy": [0.25, 0.5, 1.0],
}
FAMILIES = ["vendi", "magnitude", "circles", "energy", "average_distance", "richness"]
SETS = {
    "4 modes": (1.0, 1.0, 1.0, 1.0),
    "3 modes": (1.0, 1.0, 1.0),
    "4 modes, one heavy": (0.7, 0.1, 0.1, 0.1),
    "2 modes": (1.0, 1.0),
}
PAIRS = {"more modes": ("4 modes", "3 modes"), "crossing": ("4 modes, one heavy", "2 modes")}


def mixture(rng: np.random.Generator, weights, n: int) -> np.ndarray:
    w = np.asarray(weights, float) / np.sum(weights)
    centres = np.eye(D)[: len(w)] * 3.0 + 0.5  # modes on distinct axes
    labels = rng.choice(len(w), n, p=w)
    return centres[labels] + 0.6 * rng.standard_normal((n, D))


def profile(sets: dict, families: list[str], n_boot: int = 0, seed: int = 0, ci: float = 0.9):
    return dp.profiles(
        sets,
        representation="mixture",
        distance="cosine",
        families=families,
        domains={f: g for f, g in GRIDS.items() if f in families},
        circles_method="greedy",
        n_boot=n_boot,
        ci=ci,
        seed=seed,
    )


def expected_at_n(rng, n: int, draws: int) -> dict[str, dict[str, np.ndarray]]:
    """E[estimate at n] of every family, by Monte Carlo over fresh samples of size n."""
    fams = FAMILIES
    sums = {s: {f: 0.0 for f in fams} for s in SETS}
    for _ in range(draws):
        ds = profile({s: mixture(rng, w, n) for s, w in SETS.items()}, fams)
        ds = ds["mixture/cosine"].to_dataset()
        for s in SETS:
            for f in fams:
                sums[s][f] = sums[s][f] + np.atleast_1d(ds[f].sel(set=s).values) / draws
    return sums


def write(report: dict) -> None:
    Path(__file__).with_name("coverage_results.json").write_text(
        json.dumps(report, indent=2) + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--boot", type=int, default=100)
    parser.add_argument("--ci", type=float, default=0.9)
    parser.add_argument("--truth-draws", type=int, default=200)
    args = parser.parse_args()

    start = time.perf_counter()
    rng = np.random.default_rng(12345)
    truth = expected_at_n(rng, args.n, args.truth_draws)
    true_verdict = {}
    for pair, (a, b) in PAIRS.items():
        for f in FAMILIES:
            fam = dp.FAMILIES[f]
            ta, tb = truth[a][f], truth[b][f]
            theta = np.asarray(GRIDS.get(f, [0.0]), float)
            m = rule.margins(ta, tb, fam.rule.margin_unit, fam.rule.margin, args.n)
            axis = fam.axis if fam.parameter else "none"
            s = rule.signs(ta, tb)
            true_verdict[pair, f] = rule.margin_verdict(theta, ta, tb, s, m, axis, fam.rule.step)[0]

    set_cov = {f: [0, 0] for f in FAMILIES}
    diff = {
        (p, f): dict(pw_hits=0, pw_points=0, pw_all=0, sim_all=0) for p in PAIRS for f in FAMILIES
    }
    verdicts = {
        (p, f, band): dict(right=0, wrong=0)
        for p in PAIRS
        for f in FAMILIES
        for band in ("simultaneous", "pointwise")
    }
    widths = {f: [] for f in FAMILIES}

    def report_of(R: int) -> dict:
        elapsed = time.perf_counter() - start
        return {
            "nominal": args.ci,
            "reps": R,
            "n": args.n,
            "replicates": args.boot,
            "subsample": "m = n/2 without replacement",
            "truth_draws": args.truth_draws,
            "true_verdicts": {f"{p}: {f}": v for (p, f), v in true_verdict.items()},
            "set_band_coverage": {f: h / max(t, 1) for f, (h, t) in set_cov.items()},
            "set_band_median_relative_half_width": {
                f: float(np.median(w)) if w else None for f, w in widths.items()
            },
            "difference": {
                p: {
                    f: {
                        "pointwise_coverage": diff[p, f]["pw_hits"] / diff[p, f]["pw_points"],
                        "pointwise_band_covers_whole_curve": diff[p, f]["pw_all"] / R,
                        "simultaneous_coverage": diff[p, f]["sim_all"] / R,
                        "confident_right": verdicts[p, f, "simultaneous"]["right"] / R,
                        "confident_wrong": verdicts[p, f, "simultaneous"]["wrong"] / R,
                        "pointwise_confident_right": verdicts[p, f, "pointwise"]["right"] / R,
                        "pointwise_confident_wrong": verdicts[p, f, "pointwise"]["wrong"] / R,
                    }
                    for f in FAMILIES
                }
                for p in PAIRS
            },
            "seconds": round(elapsed, 1),
        }

    for rep in range(args.reps):
        sets = {s: mixture(rng, w, args.n) for s, w in SETS.items()}
        tree = profile(sets, FAMILIES, args.boot, seed=rep, ci=args.ci)
        ds = tree["mixture/cosine"].to_dataset()
        for s in SETS:
            row = ds.sel(set=s)
            for f in FAMILIES:
                lo = np.atleast_1d(row[f"{f}_ci_lower"].values)
                hi = np.atleast_1d(row[f"{f}_ci_upper"].values)
                est = np.atleast_1d(row[f].values)
                t = truth[s][f]
                set_cov[f][0] += int(np.sum((lo <= t) & (t <= hi)))
                set_cov[f][1] += t.size
                with np.errstate(invalid="ignore", divide="ignore"):
                    rel = (hi - lo) / 2 / np.abs(est)
                widths[f] += rel[np.isfinite(rel)].tolist()
        for band in ("simultaneous", "pointwise"):
            res = dp.compare(tree, band=band)["mixture/cosine"]
            for pair, (a, b) in PAIRS.items():
                for f in FAMILIES:
                    v = str(res.verdict_ci.sel(set_a=a, set_b=b, family=f).values)
                    want = true_verdict[pair, f]
                    verdicts[pair, f, band]["right"] += v == want
                    verdicts[pair, f, band]["wrong"] += v not in (want, "uncertain")
        n_eff = np.asarray(ds.n_samples.values, float)
        m_sub = np.asarray(ds.subsample_size.values, float)
        for pair, (a, b) in PAIRS.items():
            ia, ib = list(SETS).index(a), list(SETS).index(b)
            for f in FAMILIES:
                fam = dp.FAMILIES[f]
                va, vb = (np.atleast_1d(ds[f].sel(set=s).values) for s in (a, b))
                reps = [np.asarray(ds[f"{f}_boot"].sel(set=s).values, float) for s in (a, b)]
                reps = [r[:, None] if r.ndim == 1 else r for r in reps]
                c = [
                    rule.centred_replicates(
                        reps[k],
                        v,
                        rule.subsample_scale(int(n_eff[i]), int(m_sub[i])),
                        n_eff[i] / m_sub[i],
                    )
                    for k, (v, i) in enumerate(((va, ia), (vb, ib)))
                ]
                t = truth[a][f] - truth[b][f]
                lo, hi = rule.band_of_difference(va, vb, c[0], c[1], args.ci, simultaneous=False)
                inside = (lo <= t) & (t <= hi)
                cell = diff[pair, f]
                cell["pw_hits"] += int(inside.sum())
                cell["pw_points"] += t.size
                cell["pw_all"] += bool(inside.all())
                lo, hi = rule.band_of_difference(va, vb, c[0], c[1], args.ci, simultaneous=True)
                cell["sim_all"] += bool(((lo <= t) & (t <= hi)).all())
        if (rep + 1) % 10 == 0 or rep + 1 == args.reps:  # partial results survive a stop
            write(report_of(rep + 1))
    print(json.dumps(report_of(args.reps), indent=2))


if __name__ == "__main__":
    main()
