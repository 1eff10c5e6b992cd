"""The torch engine on a GPU: ``dp.profiles(..., device="cuda")`` at the issue's sizes.

Measures, on one device:

1. ``profiles`` of one set of n = 50,000 × 768 for **every family**, one call each
   (method "auto": the large-n methods, since a device is given; ``--n-points`` grid
   points, 20 by default), wall time and peak device memory;
2. at n = 100,000 × 768 the **streamed** work: ``profiles`` of energy and average
   distance (the float64 distance pass), and the engine's two passes on their own — the
   distance histogram (float64) and 100 threshold counts (float32 GEMM, near-threshold
   pairs recounted in float64) with and without the Gaussian Σ K² (float64).

Every timing comes with the peak device memory (``torch.cuda.max_memory_allocated``, 0 on
the CPU) and every value with its provenance (the tree's ``method`` attributes and the
engine/device/precision attributes). Writes a JSON (``--out``).

Run on a GPU machine (its run time there is unknown: no GPU was available to measure it;
``--families`` and ``--n`` cut it down):
``PYTHONPATH=src python benchmarks/gpu.py --out benchmarks/gpu_results.json``.
Smoke test on CPU torch: ``PYTHONPATH=src python benchmarks/gpu.py --device cpu --quick``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

FAMILIES = ["vendi", "magnitude", "circles", "energy", "average_distance", "richness"]
STREAMED = ["energy", "average_distance"]


def _data(n: int, d: int, seed: int = 0) -> np.ndarray:
    """50 clusters around the origin (as benchmarks/dask_engine.py), float64."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(50, d)).astype(np.float32)
    X = centres[rng.integers(0, 50, n)] + rng.normal(size=(n, d)).astype(np.float32)
    return X.astype(np.float64)


class _Peak:
    """Wall time and peak device memory of the block inside."""

    def __init__(self, torch, device: str):
        self.torch, self.cuda = torch, device.startswith("cuda")

    def __enter__(self):
        if self.cuda:
            self.torch.cuda.synchronize()
            self.torch.cuda.reset_peak_memory_stats()
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.cuda:
            self.torch.cuda.synchronize()
        self.seconds = time.perf_counter() - self.t0
        self.peak = int(self.torch.cuda.max_memory_allocated()) if self.cuda else 0


def _provenance(tree) -> dict:
    node = tree[tree.dp.conditions[0]].to_dataset()
    keep = ("engine", "device", "device_precision", "methods", "kernel", "bandwidth")
    out = {"attrs": {k: _plain(node.attrs[k]) for k in keep if k in node.attrs}, "variables": {}}
    for var in node.data_vars:
        values = np.asarray(node[var].values, dtype=np.float64).ravel()
        out["variables"][var] = {
            "method": node[var].attrs.get("method", "exact (in memory)"),
            "method_note": node[var].attrs.get("method_note", ""),
            "first": _plain(values[0]) if values.size else None,
            "last": _plain(values[-1]) if values.size else None,
        }
    return out


def _plain(x):
    if isinstance(x, (np.floating, float)):
        return None if not np.isfinite(x) else float(x)
    if isinstance(x, np.integer):
        return int(x)
    return x


def _profiles(X, families, device, torch, label, n_points):
    import diversity_profiles as dp

    with _Peak(torch, device) as p:
        tree = dp.profiles(
            {"set": X}, representation="bench", distance="euclidean", families=families,
            device=device, n_points=n_points,
        )  # fmt: skip
    print(f"{label}: {p.seconds:.1f} s, peak device memory {p.peak / 2**30:.2f} GiB", flush=True)
    return {"what": label, "n": X.shape[0], "d": X.shape[1], "families": families,
            "seconds": p.seconds, "peak_device_bytes": p.peak, **_provenance(tree)}  # fmt: skip


def _passes(X, device, torch):
    from diversity_profiles.engines import _torch_engine as torch_engine

    ds = torch_engine.DeviceSet(X, "euclidean", device)
    out = []
    with _Peak(torch, device) as p:
        h = torch_engine.distance_pass(ds, "euclidean")
    out.append({"what": "distance pass (float64 histogram)", "seconds": p.seconds,
                "peak_device_bytes": p.peak, "mean_distance": h.mean_distance(),
                "method": "exact mean; histogram bins"})  # fmt: skip
    taus = h.quantile(np.linspace(0.0, 1.0, 100))
    scale = -0.5 / float(h.quantile(np.array([0.5]))[0]) ** 2

    def kernel(D):
        K = D * D
        K *= scale
        return torch_engine.namespace(D).exp(K, out=K)

    for label, fn in (("threshold pass, 100 taus + sum K^2 (float64)", kernel),
                      ("threshold pass, 100 taus (float32 + float64 recount)", None)):  # fmt: skip
        with _Peak(torch, device) as p:
            c = torch_engine.threshold_pass(ds, "euclidean", taus, fn)
        out.append({"what": label, "seconds": p.seconds, "peak_device_bytes": p.peak,
                    "pairs_at_median": int(c.pairs[50]), "sum_k2": _plain(c.sum_k2),
                    "method": "exact counts"})  # fmt: skip
    # The float32 counts' safeguard on this device: their recount margin (1e-5 relative)
    # against the float32 error seen on one block, and the counts against a float64 pass.
    D32 = ds.block(0, 0, 4096, "float32").to(torch.float64)
    D64 = ds.block(0, 0, 4096, "float64")
    off = D64 > 0
    worst = float(((D32 - D64).abs()[off] / D64[off]).max())
    with _Peak(torch, device) as p:
        c64 = torch_engine.threshold_pass(ds, "euclidean", taus, precision="float64")
    equal = bool(np.array_equal(c64.degrees, c.degrees))
    out.append({"what": "threshold pass, 100 taus, float64 GEMM (check)", "seconds": p.seconds,
                "peak_device_bytes": p.peak, "float32_counts_equal_float64": equal,
                "float32_max_relative_error_one_block": worst,
                "method": "exact counts"})  # fmt: skip
    for row in out:
        print(f"  {row['what']}: {row['seconds']:.1f} s", flush=True)
    print(f"  float32 distances: max relative error {worst:.2g} (recount margin 1e-5); "
          f"counts equal to the float64 pass: {equal}", flush=True)  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda", help="torch device (default cuda)")
    ap.add_argument("--n", type=int, default=50_000, help="set size, all families")
    ap.add_argument("--n-streamed", type=int, default=100_000, help="set size, streamed work")
    ap.add_argument("--d", type=int, default=768)
    ap.add_argument("--n-points", type=int, default=20, help="grid points per family")
    ap.add_argument("--families", nargs="+", default=FAMILIES, choices=FAMILIES)
    ap.add_argument("--quick", action="store_true", help="n = 2000, n-streamed = 4000, d = 128")
    ap.add_argument("--out", default="benchmarks/gpu_results.json")
    args = ap.parse_args()
    if args.quick:
        args.n, args.n_streamed, args.d = 2000, 4000, 128

    import torch

    from diversity_profiles.engines._torch_engine import resolve_device

    device = resolve_device(args.device, "benchmarks/gpu.py")
    assert device is not None
    machine = {
        "torch": torch.__version__, "device": device, "python": platform.python_version(),
        "cpu_count": os.cpu_count(), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gpu": torch.cuda.get_device_name(device) if device.startswith("cuda") else None,
    }  # fmt: skip
    print(json.dumps(machine), flush=True)
    X = _data(args.n, args.d)
    # One call per family: each row is that family's cost (its domain's pass included).
    results = [
        _profiles(X, [f], device, torch, f"family {f}", args.n_points) for f in args.families
    ]
    Xs = _data(args.n_streamed, args.d, seed=1)
    results.append(_profiles(Xs, STREAMED, device, torch, "streamed families", args.n_points))
    print("passes alone:", flush=True)
    results += [{**row, "n": args.n_streamed, "d": args.d} for row in _passes(Xs, device, torch)]
    Path(args.out).write_text(json.dumps({"machine": machine, "results": results}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
