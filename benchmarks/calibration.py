"""How often do the defaults say two sets differ when they do not, and when they do?

For each repetition a fresh pair of sets is profiled with the defaults of ``dp.profiles``
(``n_boot="auto"``: multiplier draws of each sample's influence, half-sample replicates for
Circles and richness when they fit) and compared with ``dp.compare``. A difference is
*claimed* when some family's ``finding`` is "dominates", "dominated" or "crosses", or a pair
not distinguishable over the whole domain is ordered on part of it (``part_side``, verdict
rule step 9): what the summary, the explorer and the report present as a finding. Beside
it, on the same pairs:

- the point verdicts (``verdict``: what the tool led with before findings): a difference
  when some family is not "tied";
- with ``--permutations R``, ``dp.permutation_test`` (exact two-sample permutation test; one
  argument away from the defaults) at n = 200: a difference when some family's
  Holm-adjusted p-value is <= 0.05 (its size and power were measured by this benchmark's
  previous version, commit 032474c: 2/100, 5/100 and 4/100 on the three same-distribution
  pairs; 45/50 on the covariance pair).

Same-distribution pairs (the claim rate is the family-wise error rate; nominal 0.05):

- ``gmm32 euclidean`` / ``gmm32 cosine``: a 5-mode Gaussian mixture in d = 32 (fixed modes);
- ``digits halves``: two disjoint random halves of scikit-learn's digits (Euclidean);
- ``molecule halves``: two disjoint random sets of MOSES test-set molecules as Morgan
  fingerprints (radius 2, 2048 bits), Tanimoto distance: real molecule embeddings.

Known-different pairs (the claim rate is the power):

- ``digits 10 vs 9``: digits of all 10 classes against digits without the 9s;
- ``gauss cov 1.1``: N(0, I) against N(0, 1.1 I) in d = 32 (Euclidean);
- ``gmm32 drop 1 mode``: the mixture against the same mixture without its fifth mode
  (notebook 02's mode dropping, one step), Euclidean.

Circles is profiled greedily (``circles_method="greedy"``; the default "auto" runs CP-SAT
for up to 60 s per sweep, which changes the values, not the uncertainty) and left out of the
permutation test; grids have 40 points (``n_points=40``). Everything else is the default.

Run: ``python benchmarks/calibration.py`` (about 40 minutes on 2 cores: two worker processes,
one BLAS thread each) or ``--quick`` (n = 50, a smoke test of a few minutes); ``--sizes 5000``
runs only that size's jobs and keeps the other sizes' results already in the file;
``--missing`` runs only the jobs the file does not yet hold with their planned repetitions.
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
PERMUTED = ["vendi", "magnitude", "energy", "average_distance", "richness"]  # not circles: time
#: A finding over the whole domain, or on part of it (verdict rule step 9: a pair not
#: distinguishable over the domain whose band orders it on some of it).
CLAIMS = ("dominates", "dominated", "crosses", "dominates on part", "dominated on part")

SCENARIOS = {  # name -> (distance, same distribution?)
    "gmm32 euclidean": ("euclidean", True),
    "gmm32 cosine": ("cosine", True),
    "digits halves": ("euclidean", True),
    "molecule halves": ("tanimoto", True),
    "digits 10 vs 9": ("euclidean", False),
    "gauss cov 1.1": ("euclidean", False),
    "gmm32 drop 1 mode": ("euclidean", False),
}
MOLECULE_POOL = 12_000  # molecules featurised once (cached on disk beside the results)


def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    data = load_digits()
    return data.data / 16.0, data.target


def _modes() -> np.ndarray:
    # Fixed modes (one seed for every run), about 2.3 noise sd apart in each coordinate pair
    return 1.2 * np.random.default_rng(12345).standard_normal((5, DIM))


def _molecule_bits() -> np.ndarray:
    """Morgan fingerprints of a fixed random pool of MOSES test-set molecules (cached)."""
    cache = Path(__file__).with_name(".calibration_molecule_bits.npy")
    if cache.exists():
        return np.load(cache)
    from diversity_profiles.datasets import moses_smiles

    from diversity_profiles import molecules

    smiles = moses_smiles("test")
    pick = np.random.default_rng(7).permutation(len(smiles))[:MOLECULE_POOL]
    bits = np.asarray(molecules.fingerprints([smiles[i] for i in pick], progress=False))
    tmp = cache.with_name(cache.name + ".tmp.npy")
    np.save(tmp, bits)
    os.replace(tmp, cache)
    return bits


def draw(name: str, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Fresh sets A and B of n samples each for one repetition of a scenario."""
    if name.startswith("gmm32"):
        modes = _modes()
        b_modes = 4 if name == "gmm32 drop 1 mode" else 5
        return {
            "A": modes[rng.integers(0, 5, n)] + 0.5 * rng.standard_normal((n, DIM)),
            "B": modes[rng.integers(0, b_modes, n)] + 0.5 * rng.standard_normal((n, DIM)),
        }
    if name == "gauss cov 1.1":
        return {
            "A": rng.standard_normal((n, DIM)),
            "B": np.sqrt(1.1) * rng.standard_normal((n, DIM)),
        }
    if name == "molecule halves":
        X = _molecule_bits()
        pick = rng.choice(len(X), 2 * n, replace=False)
        return {"A": X[pick[:n]], "B": X[pick[n:]]}
    X, y = _digits()
    if name == "digits halves":
        pick = rng.choice(len(X), 2 * n, replace=False)
        return {"A": X[pick[:n]], "B": X[pick[n:]]}
    pick = rng.permutation(len(X))  # disjoint: A from all classes, B without the 9s
    a = pick[:n]
    rest = np.setdiff1d(pick, a, assume_unique=True)
    rest = rest[y[rest] != 9]
    return {"A": X[a], "B": X[rng.choice(rest, n, replace=False)]}


#: Grid points per family: 40 (the published table) or "auto" (today's default, adaptive
#: grids) with --n-points auto. A module setting, read in the worker processes it forks.
N_POINTS: int | str = 40


def one_repetition(task: tuple) -> dict:
    """The defaults' findings, the point verdicts and (optionally) the permutation test on
    one fresh pair."""
    from threadpoolctl import threadpool_limits

    import diversity_profiles as dp

    name, n, rep, R = task
    distance, _ = SCENARIOS[name]
    rng = np.random.default_rng([20260, n, rep, list(SCENARIOS).index(name)])
    sets = draw(name, n, rng)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coincident points etc. are not the question here
        start = time.perf_counter()
        profiler = dp.Profiler(
            sets, representation="x", distance=distance, circles_method="greedy", seed=rep
        )
        tree = profiler.profiles(families=FAMILIES, n_points=N_POINTS, max_seconds=None)
        seconds = time.perf_counter() - start
        res = dp.compare(tree)[profiler.condition].sel(set_a="A", set_b="B")
        sides = res.part_side.values if "part_side" in res else np.full(res.family.size, np.nan)
        out = {
            "finding": {
                str(f): _with_part(str(v), float(side))
                for f, v, side in zip(res.family.values, res.finding.values, sides, strict=True)
            },
            "verdict": {
                str(f): str(v) for f, v in zip(res.family.values, res.verdict.values, strict=True)
            },
            "uncertainty": {
                f: str(tree[profiler.condition].attrs.get(f"uncertainty_{f}")) for f in FAMILIES
            },
            "seconds": seconds,
        }
        if R:
            test = dp.permutation_test(
                tree,
                profiler,
                families=PERMUTED,
                n_permutations=R,
                seed=rep,
                max_seconds=None,
                show_progress=False,
            )[profiler.condition].sel(set_a="A", set_b="B")
            out["p_holm_min"] = float(test.p_holm.min())
    return out


def _with_part(finding: str, side: float) -> str:
    """A finding, with "dominates on part" / "dominated on part" for step 9's."""
    if finding == "not distinguishable" and np.isfinite(side):
        return "dominates on part" if side > 0 else "dominated on part"
    return finding


def _rate(count: int, reps: int) -> dict:
    from scipy.stats import binomtest

    ci = binomtest(count, reps).proportion_ci(0.95)
    return {"count": count, "reps": reps, "rate": count / reps, "ci95": [ci.low, ci.high]}


def summarise(name: str, n: int, R: int, runs: list[dict]) -> dict:
    reps = len(runs)
    fams = list(runs[0]["finding"])
    out = {
        "scenario": name,
        "same_distribution": SCENARIOS[name][1],
        "distance": SCENARIOS[name][0],
        "n_per_set": n,
        "default_any_claim": _rate(
            sum(any(v in CLAIMS for v in r["finding"].values()) for r in runs), reps
        ),
        "default_claims_per_family": {
            f: _rate(sum(r["finding"][f] in CLAIMS for r in runs), reps) for f in fams
        },
        "findings_per_family": {
            f: {
                k: sum(r["finding"][f] == k for r in runs)
                for k in sorted({r["finding"][f] for r in runs})
            }
            for f in fams
        },
        "uncertainty": runs[0]["uncertainty"],
        "point_verdict_any_not_tied": _rate(
            sum(any(v != "tied" for v in r["verdict"].values()) for r in runs), reps
        ),
        "seconds_per_rep_median": float(np.median([r["seconds"] for r in runs])),
    }
    if R:
        out["n_permutations"] = R
        out["permutation_holm"] = _rate(sum(r["p_holm_min"] <= ALPHA for r in runs), reps)
    return out


def plan(quick: bool, permutations: int = 0) -> list[tuple[str, int, int, int]]:
    """(scenario, n, reps, permutations or 0) for this run."""
    if quick:
        return [(name, 50, 6, 49) for name in SCENARIOS]
    jobs = [
        (name, 200, 100 if same else 40, permutations)  # 100 repetitions per same-source pair
        for name, (_, same) in SCENARIOS.items()
    ]
    jobs += [
        ("gmm32 euclidean", 1000, 12, 0),
        ("gmm32 cosine", 1000, 12, 0),
        ("molecule halves", 1000, 12, 0),
        # the digits hold 1,797 images: two disjoint halves of 850 is the most there is
        ("digits halves", 850, 12, 0),
        ("digits 10 vs 9", 800, 8, 0),
        ("gauss cov 1.1", 1000, 8, 0),
        ("gmm32 drop 1 mode", 1000, 8, 0),
        # magnitude on its large-n method, with the exact jackknife's bands (--families
        # magnitude runs these alone, in minutes)
        ("gmm32 euclidean", 3000, 20, 0),
        ("gmm32 cosine", 3000, 20, 0),
        ("gauss cov 1.1", 3000, 8, 0),
        ("gmm32 drop 1 mode", 3000, 8, 0),
        ("molecule halves", 5000, 4, 0),  # energy and average distance on large-n methods
        ("gauss cov 1.1", 5000, 3, 0),
        ("gmm32 drop 1 mode", 5000, 3, 0),
        ("gmm32 euclidean", 5000, 4, 0),
        ("gmm32 cosine", 5000, 4, 0),
    ]
    return jobs


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
        "| pair | same? | n | reps | default findings: any claim | point verdicts: any not "
        "tied | permutation, Holm |",
        "|---|---|---|---|---|---|---|",
    ]
    cell = lambda r: f"{r['count']}/{r['reps']} ({r['rate']:.2f})"  # noqa: E731
    for r in results:
        same = "same" if r["same_distribution"] else "different"
        perm = cell(r["permutation_holm"]) if "permutation_holm" in r else "—"
        lines.append(
            f"| {r['scenario']} | {same} | {r['n_per_set']} | {r['default_any_claim']['reps']} "
            f"| {cell(r['default_any_claim'])} | {cell(r['point_verdict_any_not_tied'])} "
            f"| {perm} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small n, few repetitions")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--permutations", type=int, default=0, help="also run dp.permutation_test at n = 200"
    )
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="*",
        help="run only the jobs of these n, keeping the other results already in the file",
    )
    parser.add_argument(
        "--n-points", default="40", help="grid points per family: 40, or 'auto' (the default's)"
    )
    parser.add_argument("--reps-cap", type=int, default=0, help="at most this many repetitions")
    parser.add_argument(
        "--families",
        default="",
        help="profile only these families (comma-separated), into a file of their own",
    )
    parser.add_argument(
        "--missing",
        action="store_true",
        help="run only the jobs the file does not hold with as many repetitions, keeping the rest",
    )
    args = parser.parse_args()
    global N_POINTS, FAMILIES
    N_POINTS = args.n_points if args.n_points == "auto" else int(args.n_points)
    if args.families:
        FAMILIES = [f.strip() for f in args.families.split(",") if f.strip()]
    jobs = plan(args.quick, args.permutations)
    if args.reps_cap:
        jobs = [(s, n, min(reps, args.reps_cap), R) for s, n, reps, R in jobs]
    if args.sizes:
        jobs = [job for job in jobs if job[1] in args.sizes]
    start = time.perf_counter()
    name = "calibration_results-quick.json" if args.quick else "calibration_results.json"
    if N_POINTS != 40:  # another grid: its own file, beside the published table's
        name = name.replace(".json", f"-n_points-{N_POINTS}.json")
    if args.families:  # some families only: their own file
        name = name.replace(".json", f"-families-{'-'.join(FAMILIES)}.json")
    path = Path(__file__).with_name(name)
    kept: list[dict] = []
    if args.missing and path.exists():  # results with enough repetitions stay as they are
        previous = json.loads(path.read_text())["results"]
        held = {
            (r["scenario"], r["n_per_set"]): r["default_any_claim"]["reps"] for r in previous
        }
        jobs = [job for job in jobs if held.get((job[0], job[1]), 0) < job[2]]
        again = {(job[0], job[1]) for job in jobs}
        kept = [r for r in previous if (r["scenario"], r["n_per_set"]) not in again]
    elif args.sizes and path.exists():  # the other sizes' results stay
        previous = json.loads(path.read_text())["results"]
        kept = [r for r in previous if r["n_per_set"] not in args.sizes]
    results = list(kept)
    _molecule_bits()  # once, before the workers start
    with ProcessPoolExecutor(args.workers) as pool:
        for scenario, n, reps, R in jobs:
            t0 = time.perf_counter()
            runs = list(pool.map(one_repetition, [(scenario, n, rep, R) for rep in range(reps)]))
            results.append(summarise(scenario, n, R, runs))
            print(f"{scenario}, n={n}: {reps} reps in {time.perf_counter() - t0:.0f} s", flush=True)
            report = {
                "machine": _machine(),
                "command": "python benchmarks/calibration.py"
                + (" --quick" if args.quick else "")
                + (" --sizes " + " ".join(map(str, args.sizes)) if args.sizes else "")
                + (f" --n-points {N_POINTS}" if N_POINTS != 40 else "")
                + (f" --reps-cap {args.reps_cap}" if args.reps_cap else "")
                + (f" --families {','.join(FAMILIES)}" if args.families else "")
                + (" --missing" if args.missing else ""),
                "alpha": ALPHA,
                "n_points": N_POINTS,
                "families_profiled": FAMILIES,
                "note": f"defaults of dp.profiles except circles_method='greedy' and "
                f"n_points={N_POINTS!r}; "
                "a claim is a finding of dominates, dominated or crosses in some family, or an "
                "order on part of the domain (step 9)",
                "wall_seconds": time.perf_counter() - start,
                "complete": len(results) == len(kept) + len(jobs),
                "results": results,
            }
            write_atomically(path, report)  # partial results kept
    print(table(results))


if __name__ == "__main__":
    main()
