"""Large-n benchmark: the engine's method="auto" against today's exact path, per family.

Run from the repository root (the package's own environment is enough; the peers
vendi-score and magnipy run only where benchmarks/setup.sh installed them)::

    python benchmarks/large_n.py --n 10000 --sets 1 --baseline --peers   # ~10k target
    nice python benchmarks/large_n.py --n 50000 --sets 2                  # 50k target
    nice python benchmarks/large_n.py --n 100000 --sets 2                 # completes or refuses

The large-n runs call ``profiles`` with the library's default ``max_seconds=600``, as a
user would: a call estimated beyond it is refused up front and recorded as such
(``--max-seconds none`` runs it anyway, ``--limit`` still stops it).

Every (method, family) runs in its own subprocess, so its wall time and its peak
resident memory (``ru_maxrss`` of that process: everything it allocated, the data
included) are its own, under a time limit; a run past the limit is reported as such.
The peak is in GiB (2³⁰ bytes; the key ``peak_rss_gb`` keeps its old name): 12 GiB is
12.9·10⁹ bytes.
Data: ``--sets`` sets of n points, d = 768: 50 clusters in a 64-d subspace plus noise
(the shape of embeddings). Results go to benchmarks/large_n_results.json (merged by
n), with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAMILIES = ("vendi", "magnitude", "circles", "energy", "average_distance", "richness")

_CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
n, d, n_sets, method, family, distance = (
    int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
)
budget = float(sys.argv[7]) if len(sys.argv) > 7 and sys.argv[7] != "none" else None
max_seconds = float(sys.argv[8]) if len(sys.argv) > 8 and sys.argv[8] != "none" else None
def data(n, d, seed):
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((d, 64)))[0]
    centres = 3.0 * rng.standard_normal((50, 64))
    X = (centres[rng.integers(0, 50, n)] + rng.standard_normal((n, 64))) @ basis.T
    return (X + 0.3 * rng.standard_normal((n, d))).astype(np.float64)
sets = {f"S{k}": data(n, d, k) for k in range(n_sets)}
def band_widths(ds, chosen, sets):
    # Per family, set and grid point the band a reader sees, and the issue's width goals:
    # magnitude (upper - lower)/value <= 1%; Vendi 2 error/value <= 1% at q <= 2 (its
    # certified bracket beside); Circles upper/lower <= 1.5 above the 1% distance quantile
    # (read from 3,000 samples of each set).
    from scipy.spatial.distance import pdist
    widths, goals = {}, {}
    for fam in chosen:
        if fam not in ("vendi", "magnitude", "circles") or fam not in ds:
            continue
        par = ds[fam].dims[-1]
        grid = ds[par].values
        value = ds[fam].values
        exact = np.zeros_like(value)  # a family computed exactly has no band
        if fam == "circles":
            bracket = ds["circles_upper"].values / value if "circles_upper" in ds else exact + 1
            band, goal = bracket, 1.5
            q1 = []
            for X in sets.values():
                pick = np.random.default_rng(0).choice(len(X), min(3000, len(X)), replace=False)
                q1.append(float(np.quantile(pdist(X[pick]), 0.01)))
            scope = grid >= max(q1)
        else:
            bracket = exact
            if fam + "_upper" in ds:
                bracket = (ds[fam + "_upper"].values - ds[fam + "_lower"].values) / value
            band = 2 * ds[fam + "_error"].values / value if fam + "_error" in ds else bracket
            if fam == "magnitude":
                band = bracket
            goal = 0.01
            scope = grid <= 2 if fam == "vendi" else np.ones(len(grid), dtype=bool)
        widths[fam] = {
            str(name): [[float(g), float(b), float(r)]
                        for g, b, r in zip(grid, band[i], bracket[i])]
            for i, name in enumerate(ds["set"].values)
        }
        inside = np.where(scope[None, :], band, np.nan)
        k = np.unravel_index(np.nanargmax(inside), inside.shape)
        worst = float(inside[k])
        goals[fam] = {"goal": goal, "worst": worst, "at": float(grid[k[1]]),
                      "set": str(ds["set"].values[k[0]]), "met": bool(worst <= goal),
                      "points_missed": int(np.sum(inside > goal)),
                      "points": int(np.sum(scope)) * inside.shape[0]}
    return widths, goals
out = {"n": n, "d": d, "sets": n_sets, "method": method, "family": family}
t0 = time.perf_counter()
try:
    if method.startswith("peer:"):
        X = sets["S0"]
        if method == "peer:vendi-score":
            from vendi_score import vendi
            Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
            out["value"] = float(vendi.score_dual(Xn))
        else:
            from magnipy import Magnipy
            Magnipy(X, n_ts=30).get_magnitude()
    else:
        import dataclasses
        import diversity_profiles as dp
        from diversity_profiles.pipeline import _registry as F
        spent = {}
        def timed(name, fn):
            def run(*a):
                t = time.perf_counter()
                try:
                    return fn(*a)
                finally:
                    spent[name] = spent.get(name, 0.0) + time.perf_counter() - t
            return run
        def timed_sessions(name, make):  # a large-n session's rounds count as the family's
            def opened(*a):
                ev = make(*a)
                return None if ev is None else timed(name, ev)
            return opened
        for name, fam in list(F.FAMILIES.items()):  # per-family time inside one profiles call
            F.FAMILIES[name] = dataclasses.replace(
                fam, evaluate=timed(name, fam.evaluate),
                domain=None if fam.domain is None else timed(name, fam.domain),
                large_evaluator=None if fam.large_evaluator is None
                else timed_sessions(name, fam.large_evaluator))
        chosen = ([k for k, f in F.FAMILIES.items() if f.default] if family == "all"
                  else family.split(","))
        tree = dp.profiles(sets, representation="bench", distance=distance, families=chosen,
                           method=method, time_budget=budget, max_seconds=max_seconds)
        out["family_seconds"] = spent
        ds = tree[f"bench/{distance}"].to_dataset()
        # The up-front estimate of each large-n solver, beside the time it took.
        out["solver_seconds_estimated"] = json.loads(ds.attrs.get("solver_seconds_estimated", "{}"))
        out["methods"] = ds.attrs.get("methods", "all exact")
        out["how"], out["max_relative_width"] = {}, {}
        out["grid_points"] = {F.FAMILIES[f].parameter: int(ds[F.FAMILIES[f].parameter].size)
                              for f in chosen if F.FAMILIES[f].parameter in ds.coords}
        for fam in chosen:
            out["how"][fam] = ds[fam].attrs.get("method", "exact (today's path)")
            if fam + "_upper" in ds:
                lo = ds["circles" if fam == "circles" else fam + "_lower"].values
                hi = ds[fam + "_upper"].values
                with np.errstate(all="ignore"):  # energies are negative: relative width
                    width = (hi - lo) / np.abs(ds[fam].values)
                out["max_relative_width"][fam] = float(np.nanmax(width))
        out["widths"], out["width_goals"] = band_widths(ds, chosen, sets)
    out["status"] = "ok"
except MemoryError as exc:
    out["status"] = "refused"
    out["message"] = str(exc)
except ValueError as exc:  # the up-front time estimate beyond max_seconds
    if "max_seconds" not in str(exc):
        raise
    out["status"] = "refused (time)"
    out["message"] = str(exc)
except ImportError as exc:
    out["status"] = "not installed"
    out["message"] = str(exc)
out["seconds"] = time.perf_counter() - t0
out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
print("RESULT " + json.dumps(out))
"""


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def run_one(n, d, n_sets, method, family, distance, limit, budget=None, max_seconds=None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(HERE.parent / "src"))
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                _CHILD,
                str(n),
                str(d),
                str(n_sets),
                method,
                family,
                distance,
                "none" if budget is None else str(budget),
                "none" if max_seconds is None else str(max_seconds),
            ],
            capture_output=True,
            text=True,
            timeout=limit,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return {"n": n, "sets": n_sets, "method": method, "family": family,
                "status": f"did not finish within {limit:.0f} s"}  # fmt: skip
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"n": n, "sets": n_sets, "method": method, "family": family, "status": "crashed",
            "message": proc.stderr[-600:], "seconds": time.perf_counter() - start}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10_000)
    p.add_argument("--d", type=int, default=768)
    p.add_argument("--sets", type=int, default=1)
    p.add_argument("--distance", default="euclidean")
    p.add_argument("--families", nargs="*", default=list(FAMILIES))
    p.add_argument(
        "--together",
        action="store_true",
        help="method='auto' as one profiles call with all (or the --families) families "
        "(shared passes)",
    )
    p.add_argument("--baseline", action="store_true", help="also today's exact path")
    p.add_argument("--peers", action="store_true", help="also vendi-score and magnipy")
    p.add_argument("--no-auto", action="store_true",
                   help="skip method='auto' (only the --baseline and --peers runs)")  # fmt: skip
    p.add_argument("--limit", type=float, default=900.0, help="seconds per run")
    p.add_argument("--time-budget", type=float, default=None,
                   help="profiles(time_budget=...) for the large-n runs (magnitude)")  # fmt: skip
    p.add_argument(
        "--max-seconds",
        default="600",
        help="profiles(max_seconds=...) for the large-n runs: the library's default 600 "
        "refuses up front what its estimate puts beyond; 'none': no limit",
    )
    p.add_argument("--out", default=str(HERE / "large_n_results.json"))
    p.add_argument("--tag", default="", help="appended to the results key (keeps earlier runs)")
    args = p.parse_args()
    together = "all" if set(args.families) >= set(FAMILIES) else ",".join(args.families)
    runs = [("auto", together)] if args.together else [("auto", f) for f in args.families]
    if args.no_auto:
        runs = []
    if args.baseline:
        runs += [("exact", f) for f in args.families]
    if args.peers:
        runs += [("peer:vendi-score", "vendi"), ("peer:magnipy", "magnitude")]
    record = {"n": args.n, "d": args.d, "sets": args.sets, "distance": args.distance,
              "load_before": _load(), "cpus": os.cpu_count(), "runs": []}  # fmt: skip
    for method, family in runs:
        budget = args.time_budget if method in ("auto", "large") else None
        max_seconds = None if args.max_seconds == "none" else float(args.max_seconds)
        res = run_one(args.n, args.d, args.sets, method, family, args.distance, args.limit,
                      budget, max_seconds if method in ("auto", "large") else None)
        res["max_seconds"] = max_seconds
        res["time_budget"] = budget
        res["load"] = _load()
        record["runs"].append(res)
        sec = res.get("seconds")
        print(f"{method:>18} {family:>16}: {res['status']:>10} "
              f"{'' if sec is None else f'{sec:8.1f} s'} "
              f"{res.get('peak_rss_gb', float('nan')):6.2f} GiB  {res.get('family_seconds', '')}"
              f"  load {res['load']}", flush=True)  # fmt: skip
        for fam, g in res.get("width_goals", {}).items():
            verdict = "met" if g["met"] else f"missed at {g['points_missed']} of {g['points']}"
            print(f"{'':>18} {fam:>16}: widest band {g['worst']:.3g} at {g['at']:.4g} "
                  f"({g['set']}), goal {g['goal']:g}: {verdict}", flush=True)  # fmt: skip
    record["load_after"] = _load()
    path = Path(args.out)
    old = json.loads(path.read_text()) if path.exists() else {}
    old[f"n={args.n},sets={args.sets},{args.distance}{args.tag}"] = record
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(old, indent=1))
    tmp.replace(path)


if __name__ == "__main__":
    main()
