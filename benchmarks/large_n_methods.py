"""Large-n numerical methods against the exact dense paths (issue 12).

Runs with the project's own environment (numpy/scipy only):

    PYTHONPATH=src nice python benchmarks/large_n_methods.py            # n = 10,000, d = 768
    PYTHONPATH=src nice python benchmarks/large_n_methods.py --n 1500   # smoke run
    PYTHONPATH=src nice python benchmarks/large_n_methods.py --datasets none  # coverage only

Writes ``benchmarks/large_n_methods_results.json`` after every section (a crash keeps
what was measured); sections not run keep their previous results. Targets: magnitude
relative error ≤ 1e-5 with the truth inside the bounds; Gaussian Vendi within 0.5% for
q ≤ 1 and 1e-6 for q ≥ 2, its error bars covering the exact value in ≥ 95% of a
20-dataset sweep (n = 2000, section ``vendi_coverage``); Circles brackets consistent
with the dense certified bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

import diversity_profiles as dp
from diversity_profiles.engines._distances import distance_matrix, gaussian_kernel
from diversity_profiles.large._circles_large import circles_large
from diversity_profiles.large._magnitude_large import magnitude_large
from diversity_profiles.large._vendi_large import vendi_large

OUT = Path(__file__).with_name("large_n_methods_results.json")
QS = [0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, float("inf")]


def clustered(rng, n, d, k=50, sub=64, noise=0.3):
    """k clusters in a random 64-d subspace plus isotropic noise (as in ALGORITHMS.md)."""
    basis = np.linalg.qr(rng.normal(size=(d, sub)))[0]
    centres = rng.normal(size=(k, sub)) * 2.0
    lab = rng.integers(0, k, n)
    return (centres[lab] + rng.normal(size=(n, sub))) @ basis.T + noise * rng.normal(size=(n, d))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def save(results: dict) -> None:
    out = Path(results.get("out", OUT))
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=1, default=float))
    tmp.replace(out)


def median_distance(X, rng):
    idx = rng.choice(len(X), size=min(len(X), 2000), replace=False)
    D = distance_matrix(X[idx], "euclidean")
    return float(np.median(D[np.triu_indices(len(idx), 1)]))


def bench_magnitude(name, X, D, med, n_scales, results):
    ts = np.geomspace(0.02, 50.0, n_scales) / med
    t0 = time.perf_counter()
    exact = dp.magnitude(D, ts)
    t_exact = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = magnitude_large(X, ts)
    t_large = time.perf_counter() - t0
    rel = np.abs(r.value - exact) / exact
    inside = (r.lower <= exact * (1 + 1e-12)) & (exact <= r.upper * (1 + 1e-12))
    results["magnitude"][name] = {
        "t": ts.tolist(), "exact": exact.tolist(), "value": r.value.tolist(),
        "lower": r.lower.tolist(), "upper": r.upper.tolist(), "kind": r.kind,
        "iterations": r.iterations.tolist(), "rel_error": rel.tolist(),
        "truth_inside": inside.tolist(), "breakdowns": r.breakdowns, "mode": r.mode,
        "seconds_exact": t_exact, "seconds_large": t_large, "load_after": load(),
        "target_met": bool(rel.max() <= 1e-5 and inside.all()),
    }  # fmt: skip
    print(f"magnitude {name}: exact {t_exact:.1f}s large {t_large:.1f}s max rel "
          f"{rel.max():.2e} inside {inside.all()} kinds {r.kind} breakdowns {r.breakdowns}",
          flush=True)  # fmt: skip


def bench_vendi(name, X, D, h, results):
    t0 = time.perf_counter()
    exact = dp.vendi_score(gaussian_kernel(D, h), QS)
    t_exact = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = vendi_large(X, QS, bandwidth=h)
    t_large = time.perf_counter() - t0
    rel = (r.value - exact) / exact
    qs = np.array(QS)
    inside = (r.lower <= exact * (1 + 1e-9)) & (exact <= r.upper * (1 + 1e-9))
    low, high = (qs <= 1), (qs >= 2)
    results["vendi"][name] = {
        "q": QS, "exact": exact.tolist(), "value": r.value.tolist(), "error": r.error.tolist(),
        "lower": r.lower.tolist(), "upper": r.upper.tolist(), "kind": r.kind,
        "rel_error": rel.tolist(), "bracket_holds": inside.tolist(),
        "within_error_bar": (np.abs(r.value - exact) <= r.error).tolist(),
        "details": r.details, "seconds_exact": t_exact, "seconds_large": t_large,
        "load_after": load(),
        "target_low_q_0.5pct": bool(np.abs(rel[low]).max() <= 5e-3),
        "target_high_q_1e-6": bool(np.abs(rel[high]).max() <= 1e-6),
    }  # fmt: skip
    print(f"vendi {name}: exact {t_exact:.1f}s large {t_large:.1f}s rel "
          + " ".join(f"{q:g}:{e:+.1e}" for q, e in zip(QS, rel, strict=True))
          + f" bracket {inside.all()} {r.details['precision']}", flush=True)  # fmt: skip


def bench_coverage(n, d, count, results):
    """vendi_large as shipped (default options) against dense eigvalsh over ``count``
    datasets: does ``value ± error`` cover the exact value (large.py claims it), and how
    far off is the value at q ≤ 1 and q ≥ 2."""
    rng = np.random.default_rng(99)
    qs = np.array([0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, float("inf")])
    low, high = qs <= 1.5, qs >= 2
    rows = []
    t_large = t_exact = 0.0
    t0 = time.perf_counter()
    for k in range(count):
        X = clustered(rng, n, d, k=int(rng.integers(5, 100))) if k % 2 else rng.normal(size=(n, d))
        D = distance_matrix(X, "euclidean")
        h = float(np.median(D[np.triu_indices(n, 1)])) * float(rng.uniform(0.5, 2.0))
        t1 = time.perf_counter()
        exact = dp.vendi_score(gaussian_kernel(D, h), qs)
        t2 = time.perf_counter()
        r = vendi_large(X, qs, bandwidth=h, seed=k)
        t3 = time.perf_counter()
        t_exact, t_large = t_exact + t2 - t1, t_large + t3 - t2
        rel = (r.value - exact) / exact
        rows.append({
            "data": "clustered" if k % 2 else "gaussian", "bandwidth": h,
            "rel_error": rel.tolist(), "rel_bar": (r.error / r.value).tolist(),
            # 1e-12: float64 rounding of the dense reference (q = 2 is "exact", error 0)
            "covered": (np.abs(r.value - exact) <= r.error + 1e-12 * exact).tolist(),
            "bracket_holds": ((r.lower <= exact * (1 + 1e-9))
                              & (exact <= r.upper * (1 + 1e-9))).tolist(),
            "kind": r.kind, "precision": r.details["precision"], "seconds_large": t3 - t2,
        })  # fmt: skip
    cov = np.array([row["covered"] for row in rows])
    rel = np.abs(np.array([row["rel_error"] for row in rows]))
    bars = np.array([row["rel_bar"] for row in rows])
    brackets = int(np.sum([row["bracket_holds"] for row in rows]))
    results["vendi_coverage"] = {
        "n": n, "d": d, "datasets": count, "q": qs.tolist(),
        "options": "vendi_large defaults (as large.py calls it)",
        "covered": int(cov[:, low].sum()), "total": int(cov[:, low].size),
        "coverage": float(cov[:, low].mean()), "coverage_all_orders": float(cov.mean()),
        "coverage_per_q": dict(zip([f"{q:g}" for q in qs], cov.mean(axis=0).tolist(),
                                   strict=True)),
        "brackets_hold": brackets, "brackets_total": int(cov.size),
        "worst_rel_error_q_le_1": float(rel[:, qs <= 1].max()),
        "worst_rel_error_q_ge_2": float(rel[:, high].max()),
        "worst_rel_error": float(rel[:, low].max()),
        "median_rel_bar": dict(zip([f"{q:g}" for q in qs], np.median(bars, axis=0).tolist(),
                                  strict=True)),
        "seconds_large_total": t_large, "seconds_exact_total": t_exact,
        "seconds": time.perf_counter() - t0, "load_after": load(), "rows": rows,
    }  # fmt: skip
    c = results["vendi_coverage"]
    print(f"coverage n={n}: {c['covered']}/{c['total']} (q <= 1.5), all orders "
          f"{c['coverage_all_orders']:.3f}, brackets {brackets}/{cov.size}, worst q<=1 "
          f"{c['worst_rel_error_q_le_1']:.2e} q>=2 {c['worst_rel_error_q_ge_2']:.2e}, "
          f"vendi_large {t_large:.0f}s exact {t_exact:.0f}s", flush=True)  # fmt: skip


def bench_circles(name, X, D, results):
    off = D[np.triu_indices(len(D), 1)]
    # below the median the sweep works on the graph, above it on the complement
    taus = np.quantile(off, [0.0005, 0.002, 0.01, 0.03, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
    t0 = time.perf_counter()
    r = circles_large(X, taus, exact_max_component=200, time_limit=2.0)
    t_large = time.perf_counter() - t0
    t0 = time.perf_counter()
    lo_d, hi_d = dp.circles(D, taus, method="greedy", return_bounds=True)
    t_dense = time.perf_counter() - t0
    consistent = np.maximum(r.lower, lo_d) <= np.minimum(r.upper, hi_d)
    results["circles"][name] = {
        "tau": taus.tolist(), "lower": r.lower.tolist(), "upper": r.upper.tolist(),
        "exact": r.exact.tolist(), "width_ratio": (r.upper / r.lower).tolist(),
        "dense_greedy_lower": lo_d.tolist(), "dense_greedy_upper": hi_d.tolist(),
        "consistent_with_dense": consistent.tolist(), "n_pairs": r.n_pairs,
        "seconds_large": t_large, "seconds": r.seconds, "seconds_dense_greedy": t_dense,
        "load_after": load(),
    }  # fmt: skip
    print(f"circles {name}: large {t_large:.1f}s dense {t_dense:.1f}s lower {r.lower.tolist()} "
          f"upper {r.upper.tolist()} consistent {consistent.all()}", flush=True)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--d", type=int, default=768)
    ap.add_argument("--scales", type=int, default=10)
    ap.add_argument("--coverage-n", type=int, default=2000)
    ap.add_argument("--coverage-count", type=int, default=20)
    ap.add_argument("--skip", default="", help="comma-separated sections to skip")
    ap.add_argument("--datasets", default="clustered,gaussian")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    skip = set(args.skip.split(","))
    results = {"magnitude": {}, "vendi": {}, "circles": {}}
    if Path(args.out).exists():  # keep the sections this run does not redo
        results.update(json.loads(Path(args.out).read_text()))
    run = {
        "machine": platform.platform(), "cpus": os.cpu_count(), "numpy": np.__version__,
        "load_at_start": load(), "note": "nice; shared 2-core machine",
    }  # fmt: skip
    if {"clustered", "gaussian"} & set(args.datasets.split(",")):  # sections of this run
        results.update({"n": args.n, "d": args.d, "out": args.out, **run})
    results["out"] = args.out
    rng = np.random.default_rng(12)
    data = {
        "clustered": clustered(rng, args.n, args.d),
        "gaussian": rng.normal(size=(args.n, args.d)),
    }
    for name, X in data.items():
        if name not in args.datasets.split(","):
            continue
        D = distance_matrix(X, "euclidean")
        med = float(np.median(D[np.triu_indices(len(D), 1)][:: max(1, args.n // 100)]))
        if "magnitude" not in skip:
            bench_magnitude(name, X, D, med, args.scales, results)
            save(results)
        if "vendi" not in skip:
            bench_vendi(name, X, D, med, results)
            save(results)
        if "circles" not in skip:
            bench_circles(name, X, D, results)
            save(results)
        del D
    if "coverage" not in skip:
        bench_coverage(args.coverage_n, args.d, args.coverage_count, results)
        results["vendi_coverage"].update(run)
    results["load_at_end"] = load()
    save(results)


if __name__ == "__main__":
    main()
