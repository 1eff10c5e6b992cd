"""The dask engine against the in-memory engine: the two streamed passes of one set.

At n = 20,000, d = 384: the in-memory engine (numpy, BLAS on every core) against a
dask.distributed LocalCluster of 1 and of 2 worker processes (1 thread each), both
passes of :mod:`diversity_profiles.large` (the float64 log-distance histogram, then 100
threshold counts with the Gaussian Σ K²). Timings include shipping the set to the
workers (once per set), not starting the cluster. The results are checked to be equal
bit for bit. Writes ``benchmarks/dask_engine_results.json`` with the machine's load.

``--section solvers`` measures the iterative solvers instead (``magnitude_large`` at a few
scales, ``vendi_large`` at a few orders), in memory against their products as dask tasks
on a LocalCluster of 2 worker processes × 1 thread, with the largest difference of the
values and whether the certified brackets overlap; it writes
``benchmarks/dask_solvers_results.json``.

Run: ``PYTHONPATH=src nice python benchmarks/dask_engine.py [--n 20000] [--d 384]``
(solvers: ``--section solvers --n 4000``)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np


def _save(path: str, result: dict) -> None:
    """Write the results beside the target, then rename: a crash never leaves half a file."""
    tmp = Path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    tmp.replace(path)


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


def _solvers(X: np.ndarray, args) -> dict:
    """magnitude_large and vendi_large in memory and with their products on 2 dask workers."""
    from distributed import Client, LocalCluster
    from scipy.spatial.distance import pdist

    from diversity_profiles.engines import _dask_engine as dask_engine
    from diversity_profiles.large._magnitude_large import magnitude_large
    from diversity_profiles.large._vendi_large import vendi_large

    median = float(np.median(pdist(X[:: max(1, len(X) // 500)])))  # ~500 rows suffice
    t = np.array([0.3, 1.0, 3.0, 10.0]) / median
    q = np.array([0.5, 1.0, 2.0, np.inf])
    runs = {
        "magnitude_large": lambda **kw: magnitude_large(X, t, **kw),
        "vendi_large": lambda **kw: vendi_large(X, q, bandwidth=median, **kw),
    }
    result: dict = {"t": t.tolist(), "q": ["inf" if np.isinf(v) else v for v in q],
                    "bandwidth": median}  # fmt: skip
    mem = {}
    for name, run in runs.items():
        start = time.perf_counter()
        mem[name] = run()
        result[f"{name}_in_memory_s"] = time.perf_counter() - start
        print(f"{name} in memory: {result[f'{name}_in_memory_s']:.1f} s", flush=True)
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as c,
        Client(c),
    ):
        shipped = dask_engine.ship(X)  # once for both solvers
        for name, run in runs.items():
            start = time.perf_counter()
            got = run(shipped=shipped)
            seconds = time.perf_counter() - start
            ref = mem[name]
            diff = np.abs(got.value - ref.value) / np.abs(ref.value)
            # Overlap up to the float64 rounding of the bounds themselves (q = 2 is exact:
            # both brackets are one point, Σ K² summed in another order).
            slack = 1e-12 * np.abs(ref.value)
            per_point = (got.lower <= ref.upper + slack) & (ref.lower <= got.upper + slack)
            overlap = bool(per_point.all())
            result[f"{name}_dask_2_workers_s"] = seconds
            result[f"{name}_engine"] = got.engine
            result[f"{name}_max_relative_difference"] = float(diff.max())
            result[f"{name}_relative_difference"] = diff.tolist()
            result[f"{name}_brackets_overlap"] = overlap
            result[f"{name}_brackets_overlap_per_point"] = per_point.tolist()
            result[f"{name}_bracket_relative_width"] = (
                (got.upper - got.lower) / got.value
            ).tolist()
            print(f"{name} on dask: {seconds:.1f} s, max rel. difference {diff.max():.2e}, "
                  f"brackets overlap: {overlap}", flush=True)  # fmt: skip
    return result


def main() -> None:
    from distributed import Client, LocalCluster

    from diversity_profiles.engines import _dask_engine as dask_engine
    from diversity_profiles.engines import _streaming as streaming

    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--d", type=int, default=384)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--section", choices=("passes", "solvers"), default="passes")
    ap.add_argument("--output", default=None)
    args = ap.parse_args()
    X = _data(args.n, args.d)
    if args.section == "solvers":
        out = args.output or str(Path(__file__).with_name("dask_solvers_results.json"))
        head = {"n": args.n, "d": args.d, "cpu_count": os.cpu_count(), "uptime_before": _uptime()}
        result = {**head, **_solvers(X, args), "uptime_after": _uptime()}
        _save(out, result)
        print(json.dumps(result, indent=2))
        return
    args.output = args.output or str(Path(__file__).with_name("dask_engine_results.json"))
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
    _save(args.output, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
