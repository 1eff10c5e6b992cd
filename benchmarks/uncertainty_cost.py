"""What the default uncertainty costs: the plain profile against the default one, side by side.

For two sets of ``n`` embeddings (a 10-cluster mixture in d = 384, cosine distance: the
shape of sentence embeddings), all default families and default arguments, one run of
``dp.profiles(..., n_boot=0)`` (no uncertainty: no verdict is supported) and one of
``dp.profiles(...)`` (``n_boot="auto"``), on the same machine one after the other. The issue's
targets: at most 3x the plain time at n = 2,000, at most 2x at n = 10,000. Also recorded:
what each family's uncertainty was (``uncertainty_<family>``) and, for comparison, the old
way to a band, ``n_boot=10`` half-sample replicates of every family (at n = 2,000 only).
A small warm-up profile runs first, so the first timed run does not pay for imports.
With ``--permutations R``, also the default profile with ``permutations=R`` (the exact
permutation test stored in the tree), written to ``uncertainty_cost_results-permutations.json``.

Run: ``python benchmarks/uncertainty_cost.py`` (``--sizes 2000 10000``; about 2 minutes at
2,000 and 7 at 10,000 on 2 cores, measured 2026-12-03).
Results: ``benchmarks/uncertainty_cost_results.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np

from _data import clustered


def timed_profile(sets: dict, **kwargs) -> tuple[float, object]:
    import diversity_profiles as dp

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = dp.profiles(sets, representation="x", distance="cosine", max_seconds=None, **kwargs)
    return time.perf_counter() - start, tree


def one_size(n: int, d: int, permutations: int = 0) -> dict:
    import diversity_profiles as dp

    sets = {"A": clustered(n, d, seed=1), "B": clustered(n, d, seed=2)}
    # Warm up first (imports, solvers' first calls), so neither timed run pays for them.
    timed_profile({"A": clustered(150, d, seed=3), "B": clustered(150, d, seed=4)})
    plain_s, _ = timed_profile(sets, n_boot=0)
    auto_s, tree = timed_profile(sets)
    node = tree["x/cosine"]
    fams = [f for f in node.attrs["families"].split(", ")]
    findings = dp.compare(tree)["x/cosine"].finding.sel(set_a="A", set_b="B")
    out = {
        "n_per_set": n,
        "d": d,
        "plain_seconds": plain_s,
        "default_seconds": auto_s,
        "ratio": auto_s / plain_s,
        "uncertainty": {f: str(node.attrs.get(f"uncertainty_{f}")) for f in fams},
        "methods": str(node.attrs.get("methods", "exact")),
        "findings": dict(
            zip(map(str, findings.family.values), map(str, findings.values), strict=True)
        ),
    }
    if permutations:
        perm_s, tested = timed_profile(sets, permutations=permutations)
        p = tested["x/cosine/permutation"].p_holm.sel(set_a="A", set_b="B")
        out.update(
            permutations=permutations,
            permutation_seconds=perm_s,
            permutation_ratio=perm_s / plain_s,
            p_holm=dict(zip(map(str, p.family.values), map(float, p.values), strict=True)),
        )
    elif n <= 2000:
        boot_s, _ = timed_profile(sets, n_boot=10)
        out["n_boot_10_seconds"] = boot_s
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--d", type=int, default=384)
    parser.add_argument("--permutations", type=int, default=0)
    args = parser.parse_args()
    import scipy

    results = []
    name = "uncertainty_cost_results" + ("-permutations" if args.permutations else "")
    path = Path(__file__).with_name(name + ".json")
    for n in args.sizes:
        results.append(one_size(n, args.d, args.permutations))
        print(json.dumps(results[-1]), flush=True)
        report = {
            "machine": {
                "date": dt.date.today().isoformat(),
                "nproc": os.cpu_count(),
                "platform": platform.platform(),
                "numpy": np.__version__,
                "scipy": scipy.__version__,
            },
            "command": "python benchmarks/uncertainty_cost.py --sizes "
            + " ".join(map(str, args.sizes))
            + (f" --permutations {args.permutations}" if args.permutations else ""),
            "results": results,
        }
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(report, indent=2) + "\n")
        os.replace(tmp, path)


if __name__ == "__main__":
    main()
