"""The dask engine against the in-memory engine: the two streamed passes of one set.

At n = 20,000, d = 384: the in-memory engine (numpy, BLAS on every core) against a
dask.distributed LocalCluster of 1 and of 2 worker processes (1 thread each), both
passes of :mod:`diversity_profiles.large` (the float64 log-distance histogram, then 100
threshold counts with the Gaussian Σ K²). Timings include shipping the set to the
workers (once per set), not starting the cluster. The results are checked to be equal
bit for bit. Writes ``benchmarks/dask_engine_results.json`` with the machine's load.

Run: ``PYTHONPATH=src nice python benchmarks/dask_engine.py [--n 20000] [--d 384]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np


def _data(n: int, d: int, seed: int = 0) -> np.ndarray:
    """50 clusters around the origin. (Clusters far from the origin relative to their spread
    send most within-cluster pairs of the float32 pass to the float64 recomputation of close
    pairs, which is then what gets measured: 7x slower threshold pass at n = 8000.)"""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(50, d))
    return centres[rng.integers(0, 50, n)] + rng.normal(size=(n, d))


def _passes(engine, X):
    h = engine.distance_pass(X, "euclidean")
    taus = h.quantile(np.linspace(0.0, 1.0, 100))
    scale = np.float32(-0.5 / float(h.quantile(np.array([0.5]))[0]) ** 2)

    def kernel(D):
        K = D * D
        K *= scale
        return np.exp(K, out=K)

    return h, engine.threshold_pass(X, "euclidean", taus, kernel)


def _timed(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), times, out


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def main() -> None:
    from distributed import Client, LocalCluster

    from diversity_profiles import dask_engine, streaming

    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--d", type=int, default=384)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--output", default=str(Path(__file__).with_name("dask_engine_results.json")))
    args = ap.parse_args()
    X = _data(args.n, args.d)
    result = {
        "n": args.n,
        "d": args.d,
        "what": "distance_pass (float64 histogram) + threshold_pass (100 taus, Gaussian sum K^2)",
        "cpu_count": os.cpu_count(),
        "uptime_before": _uptime(),
    }
    t_mem, all_mem, (h_ref, c_ref) = _timed(lambda: _passes(streaming, X), args.repeat)
    result["in_memory_s"] = t_mem
    result["in_memory_all_s"] = all_mem
    print(f"in-memory engine: {t_mem:.2f} s {all_mem}", flush=True)
    for workers in (1, 2):
        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster),
        ):

            def run():
                return _passes(dask_engine, dask_engine.ship(X))  # shipped once per set

            t, all_t, (h, c) = _timed(run, args.repeat)
        same = bool(
            np.array_equal(h.counts, h_ref.counts)
            and np.array_equal(h.sum_u, h_ref.sum_u)
            and h.sum_d == h_ref.sum_d
            and np.array_equal(c.degrees, c_ref.degrees)
            and c.sum_k2 == c_ref.sum_k2
        )
        result[f"dask_{workers}_workers_s"] = t
        result[f"dask_{workers}_workers_all_s"] = all_t
        result[f"dask_{workers}_workers_bitwise_equal"] = same
        print(f"dask, {workers} worker(s): {t:.2f} s {all_t}, bitwise equal: {same}", flush=True)
    result["overhead_2_workers_vs_in_memory"] = result["dask_2_workers_s"] / t_mem
    result["scaling_1_to_2_workers"] = result["dask_1_workers_s"] / result["dask_2_workers_s"]
    result["uptime_after"] = _uptime()
    Path(args.output).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
