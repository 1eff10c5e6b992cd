"""Benchmark suite: this library against the peers a user would otherwise pick.

Run from the repository root, in the benchmark's own environment (see setup.sh)::

    benchmarks/.env/bin/python benchmarks/run.py            # full run, several minutes
    benchmarks/.env/bin/python benchmarks/run.py --quick    # smoke test, about a minute
    benchmarks/.env/bin/python benchmarks/run.py --only vendi --only energy

Each benchmark runs in its own subprocess (so torch, loaded by magnipy, and the
large arrays of one benchmark do not touch the next), times ours and the
peer/baseline on the same data, and prints a final table with PASS/MISS per
target. Results go to benchmarks/results.json (results-quick.json for --quick);
with --only, the other benchmarks' earlier results in that file are kept.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import (  # noqa: E402
    Row,
    blas_report,
    cpu_busy,
    load_str,
    machine_report,
    print_machine,
    status,
    wait_until_idle,
)
from _suites import BENCHMARKS, DESCRIPTIONS, FULL, QUICK  # noqa: E402

_OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes: a smoke test")
    p.add_argument(
        "--only",
        action="append",
        choices=list(BENCHMARKS),
        metavar="NAME",
        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}",
    )
    p.add_argument(
        "--threads",
        default="auto",
        help="BLAS/OpenMP threads (threadpoolctl): N, 0 for the library default, or "
        "'auto' (default): 1 when other processes keep the CPUs busy, since an "
        "oversubscribed multi-threaded OpenBLAS can be 10x slower",
    )
    p.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each benchmark wait up to SECONDS for other processes to "
        "quiet down (below 0.3 busy CPUs)",
    )
    p.add_argument(
        "--unset-openblas-env",
        action="store_true",
        help="drop OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE for the benchmark processes",
    )
    p.add_argument(
        "--in-process",
        action="store_true",
        help="run every benchmark in this process instead of one subprocess each",
    )
    p.add_argument(
        "--json",
        type=Path,
        default=None,
        help="results file (default benchmarks/results.json, -quick for --quick)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop a benchmark process after SECONDS (default 1200, 300 with --quick)",
    )
    p.add_argument(
        "--markdown",
        action="store_true",
        help="print the saved results (--json file) as a Markdown table and exit",
    )
    p.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def _run_here(name: str, args: argparse.Namespace) -> tuple[list[dict], float]:
    """Run one benchmark in this process; returns its rows and wall time."""
    from contextlib import nullcontext

    from threadpoolctl import threadpool_limits

    sizes = QUICK if args.quick else FULL
    threads = int(args.threads)
    if threads > 0:
        # threadpoolctl only reaches libraries already loaded: load scipy's own OpenBLAS
        # now (it is a different library from numpy's), or it would keep its default.
        import scipy.linalg  # noqa: F401
    limit = threadpool_limits(threads) if threads > 0 else nullcontext()
    t0 = time.perf_counter()
    with limit:
        if threads > 0:
            from _common import blas_report

            pools = ", ".join(f"{p['prefix']}={p['num_threads']}" for p in blas_report())
            print(f"  thread pools in this process: {pools}", flush=True)
        try:
            rows = [r.as_dict() for r in BENCHMARKS[name](sizes)]
        except Exception as exc:
            import traceback

            traceback.print_exc()
            rows = [Row(name, "error", "-", None, "", "-", False, repr(exc)).as_dict()]
    return rows, time.perf_counter() - t0


def _run_child(name: str, args: argparse.Namespace) -> tuple[list[dict], float]:
    """Run one benchmark in a fresh interpreter and collect its rows."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--only", name, "--child", str(out)]
        if args.quick:
            cmd.append("--quick")
        cmd += ["--threads", str(args.threads)]
        env = dict(os.environ)
        if int(args.threads) > 0:  # also covers BLAS/OpenMP pools loaded later (torch)
            for var in _THREAD_VARS:
                env[var] = str(args.threads)
        if args.unset_openblas_env:
            for var in _OPENBLAS_VARS:
                env.pop(var, None)
        limit = args.timeout or (300.0 if args.quick else 1200.0)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, env=env, check=False, timeout=limit)
            msg = f"benchmark process exited with code {proc.returncode}"
        except subprocess.TimeoutExpired:
            msg = f"benchmark process stopped after the {limit:g} s timeout"
            print(f"  {msg}", flush=True)
        wall = time.perf_counter() - t0
        if out.exists():
            return json.loads(out.read_text())["rows"], wall
    return [Row(name, "error", "-", None, "", "-", False, msg).as_dict()], wall


def _fmt_ratio(row: dict) -> str:
    r = row["ratio"]
    if r is None:
        return "-"
    kind = row["ratio_kind"]
    if kind == "ours/base":
        return f"{r:.2f}x"
    if kind == "base/ours":
        return f"{r:.1f}x faster" if r >= 1 else f"{1 / r:.1f}x slower"
    return f"{r:.3g}"


def print_table(rows: list[dict]) -> None:
    head = ("benchmark", "ours", "peer / baseline", "ratio", "target", "")
    table = [head] + [
        (r["benchmark"], r["ours"], r["baseline"], _fmt_ratio(r), r["target"], status(r["passed"]))
        for r in rows
    ]
    widths = [max(len(str(line[i])) for line in table) for i in range(len(head))]
    sep = "  "
    print(sep.join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    print(sep.join("-" * w for w in widths))
    for line in table[1:]:
        print(sep.join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)))


def print_markdown(path: Path) -> None:
    """The saved results as a Markdown table (for benchmarks/README.md)."""
    saved = json.loads(path.read_text())
    m = saved["machine"]
    cap = m.get("blas_threads_cap", 0)
    kernels = sorted({str(p.get("architecture")) for p in saved["blas"] if p.get("architecture")})
    print(
        f"Measured {m['date']} ({saved['mode']} mode) on {m['nproc']} CPUs, {m['cpu_model']} "
        f"({m['cpu_flags']}); Python {m['python']}, numpy {m['numpy']}, scipy {m['scipy']}; "
        f"OpenBLAS kernel {', '.join(kernels) or '?'}, "
        f"OPENBLAS_CORETYPE {'set' if m['openblas_env'] else 'not set'}; BLAS threads "
        f"{cap if cap else 'default'}; load average at start "
        f"{' / '.join(f'{x:.2f}' for x in m['loadavg_1_5_15'])}, other processes busy "
        f"{m.get('busy_cpus_at_start', float('nan')):.2f} CPUs.\n"
    )
    print("| benchmark | ours | peer / baseline | ratio | target | |")
    print("|---|---|---|---|---|---|")
    for bench in saved["benchmarks"].values():
        for r in bench["rows"]:
            cells = [
                r["benchmark"],
                r["ours"],
                r["baseline"],
                _fmt_ratio(r),
                r["target"],
                status(r["passed"]),
            ]
            print("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    names = args.only or list(BENCHMARKS)
    if args.markdown:
        print_markdown(args.json or HERE / ("results-quick.json" if args.quick else "results.json"))
        return 0

    if args.child is not None:  # inside a benchmark subprocess
        rows, wall = _run_here(names[0], args)
        args.child.write_text(json.dumps({"rows": rows, "wall": wall}))
        return 0

    if args.unset_openblas_env:
        for var in _OPENBLAS_VARS:
            os.environ.pop(var, None)
    # Measure the others' CPU use before loading OpenBLAS: its freshly started worker
    # threads spin for a while and would count as a busy CPU.
    busy = cpu_busy()
    import numpy  # noqa: F401  (load the BLAS pools that threadpoolctl reports)
    import scipy.linalg  # noqa: F401

    info = machine_report()
    info["busy_cpus_at_start"] = busy
    if args.threads == "auto":
        args.threads = "1" if busy is not None and busy > 0.5 else "0"
        info["threads_auto"] = True
    info["blas_threads_cap"] = int(args.threads)
    blas = blas_report()
    mode = "quick" if args.quick else "full"
    print(f"diversity-profiles benchmarks ({mode} mode)")
    print_machine(info, blas)
    print(
        f"other procs : {busy if busy is not None else float('nan'):.2f} CPUs busy "
        f"(measured over 1 s)"
    )
    if int(args.threads) > 0:
        why = " (auto: the machine is busy)" if info.get("threads_auto") else ""
        print(f"BLAS threads: capped at {args.threads} with threadpoolctl{why}")
    else:
        print("BLAS threads: library default (see threadpool lines)")
    if busy is not None and busy > 0.5:
        print(
            "WARNING: other processes keep the CPUs busy; timings are best-of-N and "
            "interleaved, but ratios may still be skewed. Rerun on a quiet machine."
        )
    print()

    results: dict = {}
    all_rows: list[dict] = []
    for name in names:
        if args.wait_idle > 0:
            wait_until_idle(args.wait_idle)
        busy_now = cpu_busy(0.5)
        print(
            f"[{name}] {DESCRIPTIONS[name]} (load {load_str()}, others busy "
            f"{busy_now if busy_now is not None else float('nan'):.2f} CPUs)",
            flush=True,
        )
        runner = _run_here if args.in_process else _run_child
        rows, wall = runner(name, args)
        results[name] = {
            "rows": rows,
            "wall_s": wall,
            "load_after": list(os.getloadavg()),
            "busy_cpus_before": busy_now,
            "blas_threads_cap": int(args.threads),
            "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        all_rows += rows
        print(f"  ({wall:.1f} s)\n", flush=True)

    print(f"Summary ({mode} mode, load {load_str()} at the end)")
    if args.quick:
        print(
            "(quick sizes: fixed costs weigh more, so PASS/MISS is indicative only; the "
            "targets are set for the full sizes)"
        )
    print_table(all_rows)
    notes = [(r["benchmark"], r["note"]) for r in all_rows if r.get("note")]
    if notes:
        print("\nNotes")
        for bench, note in notes:
            print(f"- {bench}: {note}")

    path = args.json or HERE / ("results-quick.json" if args.quick else "results.json")
    previous = {}
    if args.only and path.exists():
        try:
            old = json.loads(path.read_text())
            if old.get("mode") == mode:
                previous = old.get("benchmarks", {})
        except (OSError, ValueError):
            previous = {}
    previous.update(results)
    payload = {
        "mode": mode,
        "machine": info,
        "blas": blas,
        "benchmarks": {k: previous[k] for k in BENCHMARKS if k in previous},
    }
    path.write_text(json.dumps(payload, indent=2, default=float) + "\n")
    print(f"\nResults written to {path}")
    missed = [r["benchmark"] for r in all_rows if r["passed"] is False]
    if missed:
        print(f"{len(missed)} target(s) missed: {', '.join(missed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
