"""Callable distances and similarities (issue 25): the blockwise matrix of a user's callable
against the code a user would write without the library.

- A pure-Python pairwise callable, the edit distance, over ``--n`` short strings (2,000 by
  default, 3-12 letters): ``engines.callable_matrix`` on one process and on ``--jobs``
  processes, against a plain double loop over the upper triangle into a numpy matrix (the
  same ``n (n - 1) / 2`` calls; a loop over all ``n²`` pairs would take twice as long).
  Target: within 1.5× of the loop on one process, faster on two.
- A vectorised callable ``f(A, B) = exp(-cdist(A, B, "sqeuclidean") / 2)`` over
  ``--n-vec`` points of dimension 32, against the same expression on the whole array.
  Target: within 1.2×.

Both sides give the same matrix (checked). Times are best-of-``--repeat`` wall clock (the
machine may be shared; the load average is recorded). Run:
``python benchmarks/callables.py [--n 2000] [--jobs 2] [--n-vec 4000] [--repeat 2]``;
prints the table and writes ``benchmarks/callables_results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def levenshtein(a: str, b: str) -> float:
    """Edit distance, one row at a time (pure Python)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return float(prev[-1])


def double_loop(objects, f) -> np.ndarray:
    """What a user writes: the upper triangle, mirrored."""
    n = len(objects)
    M = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            M[i, j] = M[j, i] = f(objects[i], objects[j])
    return M


def gaussian_blocks(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    from scipy.spatial.distance import cdist

    return np.exp(-cdist(A, B, "sqeuclidean") / 2)


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--n-vec", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    import diversity_profiles as dp
    from diversity_profiles.engines import callable_matrix

    rng = np.random.default_rng(0)
    texts = ["".join(rng.choice(list("abcdefgh"), size=rng.integers(3, 13))) for _ in range(args.n)]
    common = dict(kind="distance", arg="distance", func="profiles", where="set 'a'")
    load_before = os.getloadavg()

    t_loop, ref = best(lambda: double_loop(texts, levenshtein), 1)
    t_one, one = best(
        lambda: callable_matrix(texts, dp.pairwise(levenshtein, progress=False), **common),
        args.repeat,
    )
    t_jobs, many = best(
        lambda: callable_matrix(
            texts, dp.pairwise(levenshtein, n_jobs=args.jobs, progress=False), **common
        ),
        args.repeat,
    )
    assert np.array_equal(one, ref) and np.array_equal(many, ref)

    X = rng.normal(size=(args.n_vec, 32))
    t_numpy, K_ref = best(lambda: gaussian_blocks(X, X), args.repeat + 1)
    t_vec, K = best(
        lambda: callable_matrix(
            X,
            dp.pairwise(gaussian_blocks, vectorised=True, progress=False),
            kind="similarity",
            arg="similarities",
            func="profiles",
            where="set 'a'",
        ),
        args.repeat + 1,
    )
    assert np.allclose(K, K_ref, rtol=1e-12, atol=1e-15)

    rows = [
        {
            "benchmark": f"pairwise edit distance, {args.n} strings, 1 process",
            "ours_s": t_one,
            "baseline": "plain double loop (upper triangle)",
            "baseline_s": t_loop,
            "ratio": t_one / t_loop,
            "target": "<= 1.5x",
            "passed": t_one / t_loop <= 1.5,
        },
        {
            "benchmark": f"pairwise edit distance, {args.n} strings, {args.jobs} processes",
            "ours_s": t_jobs,
            "baseline": "plain double loop (upper triangle)",
            "baseline_s": t_loop,
            "ratio": t_jobs / t_loop,
            "target": "< 1x (faster)",
            "passed": t_jobs < t_loop,
        },
        {
            "benchmark": f"vectorised Gaussian kernel, {args.n_vec} x 32",
            "ours_s": t_vec,
            "baseline": "exp(-cdist(X, X) / 2) directly",
            "baseline_s": t_numpy,
            "ratio": t_vec / t_numpy,
            "target": "<= 1.2x",
            "passed": t_vec / t_numpy <= 1.2,
        },
    ]
    result = {
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "loadavg_before": load_before,
            "loadavg_after": os.getloadavg(),
        },
        "arguments": vars(args),
        "rows": rows,
    }
    for r in rows:
        print(
            f"{r['benchmark']:<58} {r['ours_s']:8.2f} s  vs {r['baseline_s']:8.2f} s  "
            f"{r['ratio']:5.2f}x  target {r['target']:<14} {'PASS' if r['passed'] else 'MISS'}"
        )
    (HERE / "callables_results.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
