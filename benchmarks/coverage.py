"""Do the bootstrap bands cover the truth at the stated rate?

Synthetic data with a known answer: Gaussian mixtures in d=8 with k and k+1
equal, well-separated modes, under the cosine condition. The population values
are computed from independent draws far larger than the samples:

- Vendi (cosine kernel): Hill numbers of the spectrum of E[x̂ x̂ᵀ] (2·10^6 draws);
- average cosine distance: 1 - |E x̂|² (exact for independent pairs; same draws);
- energy: E[d^-s] over independent pairs (4·10^6 pairs).

Each repetition draws fresh sets of n samples, runs ``dp.profiles(..., n_boot=B)``
and checks whether the band holds the truth at each parameter. It also counts
how often the confident verdict says "k+1 modes ≻ k modes" (power) and how often
it says the opposite (error).

Run: ``python benchmarks/coverage.py [--reps 100] [--n 200] [--boot 200]``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import diversity_profiles as dp

D = 8
QS = [0.5, 1.0, 2.0, np.inf]
SS = [0.25, 0.5, 1.0]


def mixture(rng: np.random.Generator, k: int, n: int) -> np.ndarray:
    centres = np.eye(D)[:k] * 3.0 + 0.5  # k modes on distinct axes (same for every draw)
    labels = rng.integers(0, k, n)
    return centres[labels] + 0.6 * rng.standard_normal((n, D))


def truths(k: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    X = mixture(rng, k, 2_000_000)
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    lam = np.linalg.eigvalsh(U.T @ U / len(U))
    lam = lam[lam > 1e-12]
    lam /= lam.sum()

    def hill(q):
        if q == 1:
            return np.exp(-np.sum(lam * np.log(lam)))
        if np.isinf(q):
            return 1 / lam.max()
        return np.sum(lam**q) ** (1 / (1 - q))

    mean = U.mean(axis=0)
    half = len(U) // 2
    d = 1 - np.einsum("ij,ij->i", U[:half], U[half:])
    return {
        "vendi": np.array([hill(q) for q in QS]),
        "average_distance": np.array([1 - mean @ mean]),
        "energy": np.array([-np.mean(d**-s) for s in SS]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--boot", type=int, default=200)
    parser.add_argument("--ci", type=float, default=0.9)
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args()

    rng = np.random.default_rng(12345)
    truth = {k: truths(k, rng) for k in (args.k, args.k + 1)}
    hits = {k: {f: 0 for f in truth[k]} for k in truth}
    points = {k: {f: 0 for f in truth[k]} for k in truth}
    right = {f: 0 for f in truth[args.k]}
    wrong = {f: 0 for f in truth[args.k]}
    start = time.perf_counter()
    for rep in range(args.reps):
        sets = {f"k={k}": mixture(rng, k, args.n) for k in truth}
        tree = dp.profiles(
            sets,
            representation="mixture",
            distance="cosine",
            families=["vendi", "average_distance", "energy"],
            domains={"vendi": QS, "energy": SS},
            n_boot=args.boot,
            ci=args.ci,
            seed=rep,
        )
        ds = tree["mixture/cosine"].to_dataset()
        for k in truth:
            row = ds.sel(set=f"k={k}")
            for fam, value in truth[k].items():
                lo = np.atleast_1d(row[f"{fam}_ci_lower"].values)
                hi = np.atleast_1d(row[f"{fam}_ci_upper"].values)
                hits[k][fam] += int(np.sum((lo <= value) & (value <= hi)))
                points[k][fam] += value.size
        res = dp.compare(tree)["mixture/cosine"]
        more, fewer = f"k={args.k + 1}", f"k={args.k}"
        for fam in right:
            verdict = str(res.verdict_ci.sel(set_a=more, set_b=fewer, family=fam).values)
            expected = (
                "dominates"
                if fam != "energy" or truth[args.k + 1]["energy"][0] > truth[args.k]["energy"][0]
                else "dominated"
            )
            right[fam] += verdict == expected
            wrong[fam] += verdict in ("dominates", "dominated") and verdict != expected
    elapsed = time.perf_counter() - start
    report = {
        "nominal": args.ci,
        "reps": args.reps,
        "n": args.n,
        "n_boot": args.boot,
        "coverage": {f"k={k}": {f: hits[k][f] / points[k][f] for f in hits[k]} for k in hits},
        "confident_verdict_right": {f: right[f] / args.reps for f in right},
        "confident_verdict_wrong": {f: wrong[f] / args.reps for f in wrong},
        "seconds": round(elapsed, 1),
    }
    print(json.dumps(report, indent=2))
    Path(__file__).with_name("coverage_results.json").write_text(
        json.dumps(report, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
