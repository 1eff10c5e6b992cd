"""How often do we say two sets differ when they do not, and when they do?

Side by side, on the same repetitions (fresh sets each time), two answers to "do A and B
differ?":

- ``dp.permutation_test`` (exact two-sample permutation test): a difference is claimed
  when some family's Holm-adjusted p-value is <= 0.05 (``holm``), or when the max-T
  p-value over families is <= 0.05 (``any family``);
- today's default point verdicts of ``dp.compare`` (no replicates): a difference is
  claimed when some family's ``verdict`` is not "tied".

Same-distribution pairs (the claim rate is the false-positive rate; the permutation
test promises <= 0.05):

- ``gmm32 euclidean`` / ``gmm32 cosine``: a 5-mode Gaussian mixture in d = 32 (fixed
  modes), under each distance;
- ``digits halves``: two disjoint random halves of scikit-learn's digits, scaled to
  [0, 1] (Euclidean).

Known-different pairs (the claim rate is the power):

- ``digits 10 vs 9``: digits of all 10 classes against digits without the 9s;
- ``gauss cov 1.1``: N(0, I) against N(0, 1.1 I) in d = 32 (Euclidean).

Families: the defaults. Circles is profiled (greedy, circles_method="greedy": the
default "auto" runs CP-SAT up to 60 s per sweep) and enters ``compare``, but is left out
of the permutation test for time (0.2–0.4 s per evaluation at n = 200); at n = 1000
magnitude is left out too (0.8 s per evaluation). Grids have 40 points (n_points=40).

Run: ``python benchmarks/calibration.py`` (about 20 minutes on 2 cores: two worker
processes, one BLAS thread each) or ``--quick`` (about 2 minutes, small n: a smoke test).
Results: ``benchmarks/calibration_results.json`` (``calibration_results-quick.json``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ALPHA = 0.05
DIM = 32
FAMILIES = ["vendi", "magnitude", "circles", "energy", "average_distance", "richness"]
SLOW = {"circles"}  # profiled and compared, not permuted (time)
SLOW_LARGE_N = {"circles", "magnitude"}

SCENARIOS = {  # name -> (distance, same distribution?)
    "gmm32 euclidean": ("euclidean", True),
    "gmm32 cosine": ("cosine", True),
    "digits halves": ("euclidean", True),
    "digits 10 vs 9": ("euclidean", False),
    "gauss cov 1.1": ("euclidean", False),
}


def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    data = load_digits()
    return data.data / 16.0, data.target


def _modes() -> np.ndarray:
    # Fixed modes (one seed for every run), about 2.3 noise sd apart in each coordinate pair
    return 1.2 * np.random.default_rng(12345).standard_normal((5, DIM))


def draw(name: str, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Fresh sets A and B of n samples each for one repetition of a scenario."""
    if name.startswith("gmm32"):
        modes = _modes()
        return {k: modes[rng.integers(0, 5, n)] + 0.5 * rng.standard_normal((n, DIM)) for k in "AB"}
    if name == "gauss cov 1.1":
        return {
            "A": rng.standard_normal((n, DIM)),
            "B": np.sqrt(1.1) * rng.standard_normal((n, DIM)),
        }
    X, y = _digits()
    if name == "digits halves":
        pick = rng.choice(len(X), 2 * n, replace=False)
        return {"A": X[pick[:n]], "B": X[pick[n:]]}
    pick = rng.permutation(len(X))  # disjoint: A from all classes, B without the 9s
    a = pick[:n]
    rest = np.setdiff1d(pick, a, assume_unique=True)
    rest = rest[y[rest] != 9]
    return {"A": X[a], "B": X[rng.choice(rest, n, replace=False)]}


def one_repetition(task: tuple) -> dict:
    """Both answers for one fresh pair: which families each one flags."""
    from threadpoolctl import threadpool_limits

    import diversity_profiles as dp

    name, n, rep, R, permuted = task
    distance, _ = SCENARIOS[name]
    rng = np.random.default_rng([20260, n, rep, list(SCENARIOS).index(name)])
    sets = draw(name, n, rng)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coincident points etc. are not the question here
        start = time.perf_counter()
        profiler = dp.Profiler(
            sets, representation="x", distance=distance, circles_method="greedy", seed=rep
        )
        tree = profiler.profiles(families=FAMILIES, n_points=40, method="exact")
        verdicts = dp.compare(tree)[profiler.condition].verdict.sel(set_a="A", set_b="B")
        test = dp.permutation_test(
            tree,
            profiler,
            families=permuted,
            n_permutations=R,
            seed=rep,
            max_seconds=None,
            show_progress=False,
        )[profiler.condition].sel(set_a="A", set_b="B")
    names = [str(f) for f in verdicts.family.values]
    flagged = {f: str(v) != "tied" for f, v in zip(names, verdicts.values, strict=True)}
    tested = [str(f) for f in test.family.values]
    return {
        "compare": flagged,
        "p_value": {f: float(p) for f, p in zip(tested, test.p_value.values, strict=True)},
        "p_holm_min": float(test.p_holm.min()),
        "p_any_family": float(test.p_any_family),
        "seconds": time.perf_counter() - start,
    }


def _rate(count: int, reps: int) -> dict:
    from scipy.stats import binomtest

    ci = binomtest(count, reps).proportion_ci(0.95)
    return {"count": count, "reps": reps, "rate": count / reps, "ci95": [ci.low, ci.high]}


def summarise(name: str, n: int, R: int, permuted: list[str], runs: list[dict]) -> dict:
    reps = len(runs)
    fams = list(runs[0]["compare"])
    return {
        "scenario": name,
        "same_distribution": SCENARIOS[name][1],
        "distance": SCENARIOS[name][0],
        "n_per_set": n,
        "n_permutations": R,
        "permuted_families": permuted,
        "permutation_holm": _rate(sum(r["p_holm_min"] <= ALPHA for r in runs), reps),
        "permutation_any_family": _rate(sum(r["p_any_family"] <= ALPHA for r in runs), reps),
        "permutation_per_family_unadjusted": {
            f: _rate(sum(r["p_value"][f] <= ALPHA for r in runs), reps) for f in permuted
        },
        "compare_any_not_tied": _rate(sum(any(r["compare"].values()) for r in runs), reps),
        "compare_per_family_not_tied": {
            f: _rate(sum(r["compare"][f] for r in runs), reps) for f in fams
        },
        "seconds_per_rep_median": float(np.median([r["seconds"] for r in runs])),
    }


def plan(quick: bool) -> list[tuple[str, int, int, int, list[str]]]:
    """(scenario, n, reps, R, permuted families) for this run."""
    small = [f for f in FAMILIES if f not in SLOW]
    large = [f for f in FAMILIES if f not in SLOW_LARGE_N]
    if quick:
        return [(name, 50, 8, 99, small) for name in SCENARIOS]
    jobs = [(name, 200, 100 if same else 50, 99, small) for name, (_, same) in SCENARIOS.items()]
    return [*jobs, ("gmm32 euclidean", 1000, 8, 99, large)]


def _machine() -> dict:
    import scipy

    return {
        "date": dt.date.today().isoformat(),
        "nproc": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
    }


def write_atomically(path: Path, report: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")  # beside it, then renamed: never half-written
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    os.replace(tmp, path)


def table(results: list[dict]) -> str:
    lines = [
        "| pair | same? | n | reps | R | permutation, Holm | permutation, any family (max-T) "
        "| compare, any verdict not tied |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        cells = [
            f"{r[k]['count']}/{r[k]['reps']} ({r[k]['rate']:.2f})"
            for k in ("permutation_holm", "permutation_any_family", "compare_any_not_tied")
        ]
        same = "same" if r["same_distribution"] else "different"
        lines.append(
            f"| {r['scenario']} | {same} | {r['n_per_set']} | {r['permutation_holm']['reps']} "
            f"| {r['n_permutations']} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small n, few repetitions")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    jobs = plan(args.quick)
    start = time.perf_counter()
    results = []
    with ProcessPoolExecutor(args.workers) as pool:
        for name, n, reps, R, permuted in jobs:
            t0 = time.perf_counter()
            tasks = [(name, n, rep, R, permuted) for rep in range(reps)]
            runs = list(pool.map(one_repetition, tasks))
            results.append(summarise(name, n, R, permuted, runs))
            print(f"{name}, n={n}: {reps} reps in {time.perf_counter() - t0:.0f} s", flush=True)
    report = {
        "machine": _machine(),
        "command": "python benchmarks/calibration.py" + (" --quick" if args.quick else ""),
        "alpha": ALPHA,
        "n_points": 40,
        "families_profiled": FAMILIES,
        "note": "circles profiled greedily and compared, not permuted; magnitude not permuted "
        "at n = 1000 (time). compare: default options, no replicates (point verdicts).",
        "wall_seconds": time.perf_counter() - start,
        "results": results,
    }
    name = "calibration_results-quick.json" if args.quick else "calibration_results.json"
    write_atomically(Path(__file__).with_name(name), report)
    print(table(results))


if __name__ == "__main__":
    main()
