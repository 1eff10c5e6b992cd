"""Speed of comparison and of the bootstrap (issue: comparing sample sets).

- ``dp.compare`` on 10 sets × 6 families × 200 grid points — target well under
  100 ms, since the widget calls it as sliders move. Two kinds of curves: smooth
  monotone ones (the usual case) and random walks (a worst case, dozens of
  crossings per pair).
- ``dp.profiles(..., n_boot=B)`` against one plain profile of the same sets: the
  bootstrap reuses each set's embeddings/distances by index, so its cost per
  replicate should be about one plain evaluation of the bootstrapped families
  (Vendi, energy, average distance), not a recomputation of features.

Run: ``python benchmarks/comparison.py``; prints a table and writes
``benchmarks/comparison_results.json``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import xarray as xr

import diversity_profiles as dp
from diversity_profiles.pipeline._registry import FAMILIES


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def synthetic_tree(kind: str, n_sets=10, n_points=200, seed=0):
    rng = np.random.default_rng(seed)
    labels = [f"set{i}" for i in range(n_sets)]
    data, coords = {}, {"set": labels}
    for name, fam in FAMILIES.items():
        if fam.parameter is None:
            data[name] = (("set",), rng.random(n_sets), {"family": name})
            continue
        grid = np.geomspace(0.1, 10, n_points)
        coords[fam.parameter] = grid
        if kind == "smooth":
            level = rng.random((n_sets, 1)) * 5
            slope = rng.random((n_sets, 1))
            curves = level + slope * np.log(grid)[None, :]
        else:
            curves = np.cumsum(rng.standard_normal((n_sets, n_points)), axis=1)
        data[name] = (("set", fam.parameter), curves, {"family": name})
    ds = xr.Dataset(data, coords=coords, attrs={"representation": "r", "distance": "d"})
    return xr.DataTree.from_dict({"r/d": ds})


def main() -> None:
    rows = []
    for kind in ("smooth", "random walk"):
        tree = synthetic_tree(kind)
        seconds = best_of(lambda tree=tree: dp.compare(tree))
        crossings = int(dp.compare(tree)["r/d"].n_crossings.max())
        rows.append(
            {
                "benchmark": f"compare 10 sets x 6 families x 200 points ({kind})",
                "ms": round(seconds * 1e3, 1),
                "max crossings per pair": crossings,
                "target": "< 100 ms",
                "pass": seconds < 0.1,
            }
        )

    rng = np.random.default_rng(1)
    sets = {"a": rng.standard_normal((1000, 384)), "b": rng.standard_normal((1000, 384)) * 0.5}
    kw = dict(
        representation="r",
        distance="cosine",
        families=["vendi", "energy", "average_distance"],
        n_points=100,
    )
    plain = best_of(lambda: dp.profiles(sets, **kw), repeat=3)
    n_boot = 50
    boot = best_of(lambda: dp.profiles(sets, n_boot=n_boot, **kw), repeat=1)
    rows.append(
        {
            "benchmark": f"bootstrap B={n_boot}, 2 sets n=1000 d=384 (vendi, energy, avg)",
            "plain profile s": round(plain, 2),
            "with bootstrap s": round(boot, 2),
            "cost per replicate / plain profile": round((boot - plain) / n_boot / plain, 2),
        }
    )
    load = os.getloadavg()[0]
    for row in rows:
        print(json.dumps(row))
    print(f"load average (1 min): {load:.2f}")
    out = Path(__file__).with_name("comparison_results.json")
    out.write_text(json.dumps({"rows": rows, "load": load}, indent=2) + "\n")


if __name__ == "__main__":
    main()
