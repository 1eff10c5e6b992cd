"""Shared helpers of the benchmark suite: timing, result rows, machine report."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field


@dataclass
class Row:
    """One line of the final table.

    ``ratio`` is always oriented so that the target reads naturally: for a
    "≤ 1.2×" target it is ours / baseline, for a "≥ 100× faster" target it is
    baseline / ours (see ``ratio_kind``).
    """

    benchmark: str
    ours: str
    baseline: str
    ratio: float | None
    ratio_kind: str  # "ours/base", "base/ours", "value" or ""
    target: str
    passed: bool | None  # None: informational, no target
    note: str = ""
    data: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def status(passed: bool | None) -> str:
    return {True: "PASS", False: "MISS", None: "-"}[passed]


def fmt_s(seconds: float | None, *, extrapolated: bool = False) -> str:
    if seconds is None:
        return "n/a"
    if seconds < 1e-3:
        text = f"{seconds * 1e6:.0f} µs"
    elif seconds < 1:
        text = f"{seconds * 1e3:.1f} ms"
    else:
        text = f"{seconds:.2f} s"
    return f"~{text} (extrap.)" if extrapolated else text


def best_of(
    fn: Callable[[], object], repeat: int, *, budget: float | None = None
) -> tuple[float, object, list[float]]:
    """Best wall time of ``repeat`` calls (fewer if ``budget`` seconds run out).

    Returns (best seconds, last result, all times). The machine is shared and
    noisy, so the minimum is the most repeatable statistic.
    """
    times: list[float] = []
    result = None
    start_all = time.perf_counter()
    for _ in range(max(repeat, 1)):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        if budget is not None and time.perf_counter() - start_all > budget:
            break
    return min(times), result, times


def best_of_pair(
    fa: Callable[[], object], fb: Callable[[], object], repeat: int
) -> tuple[float, object, float, object]:
    """Best times of two competitors, timed alternately so both see the same load.

    Returns (best a, result a, best b, result b).
    """
    ta: list[float] = []
    tb: list[float] = []
    ra = rb = None
    for _ in range(max(repeat, 1)):
        gc.collect()
        t0 = time.perf_counter()
        ra = fa()
        ta.append(time.perf_counter() - t0)
        gc.collect()
        t0 = time.perf_counter()
        rb = fb()
        tb.append(time.perf_counter() - t0)
    return min(ta), ra, min(tb), rb


def _cpu_times() -> tuple[int, int]:
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


def cpu_busy(interval: float = 1.0) -> float | None:
    """CPUs kept busy by *other* processes over ``interval`` seconds (we sleep meanwhile).

    Unlike the load average, this is not inflated by the benchmark that just ran.
    """
    try:
        b0, t0 = _cpu_times()
        time.sleep(interval)
        b1, t1 = _cpu_times()
    except (OSError, ValueError, IndexError):
        return None
    if t1 == t0:
        return 0.0
    return (b1 - b0) / (t1 - t0) * (os.cpu_count() or 1)


def wait_until_idle(max_wait: float, threshold: float = 0.3) -> float | None:
    """Sleep until other processes use less than ``threshold`` CPUs (or max_wait passes)."""
    deadline = time.monotonic() + max_wait
    busy = cpu_busy()
    while busy is not None and busy > threshold and time.monotonic() < deadline:
        busy = cpu_busy(5.0)
    return busy


@contextlib.contextmanager
def quiet_stdout():
    """Swallow what a peer library prints (magnipy prints on every perturbed solve)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        yield buf


def load_str() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return ", ".join(f for f in ("avx2", "avx512f", "fma") if f in flags)
    except OSError:
        pass
    return "?"


def blas_report() -> list[dict]:
    """BLAS / OpenMP pools loaded in this process (threadpoolctl)."""
    from threadpoolctl import threadpool_info

    keep = ("user_api", "internal_api", "prefix", "version", "architecture", "num_threads")
    return [{k: info.get(k) for k in keep} for info in threadpool_info()]


def machine_report() -> dict:
    import numpy as np
    import scipy

    env = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    threads = {
        k: os.environ[k]
        for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
        if k in os.environ
    }
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "nproc": os.cpu_count(),
        "cpu_model": cpu_model(),
        "cpu_flags": cpu_flags(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "openblas_env": env,
        "thread_env": threads,
        "loadavg_1_5_15": list(os.getloadavg()),
    }


def print_machine(info: dict, blas: list[dict]) -> None:
    print(f"date        : {info['date']}")
    print(f"machine     : {info['nproc']} CPUs, {info['cpu_model']} ({info['cpu_flags']})")
    print(f"python      : {info['python']}, numpy {info['numpy']}, scipy {info['scipy']}")
    load = info["loadavg_1_5_15"]
    print(f"load avg    : {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1 / 5 / 15 min)")
    if info["openblas_env"]:
        print(f"OPENBLAS_*  : SET {info['openblas_env']} (forces an OpenBLAS kernel; see README)")
    else:
        print("OPENBLAS_*  : OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE not set")
    if info["thread_env"]:
        print(f"thread env  : {info['thread_env']}")
    for pool in blas:
        arch = pool.get("architecture") or "-"
        print(
            f"threadpool  : {pool['internal_api']:<9} {pool['prefix']:<18} "
            f"v{pool['version'] or '?':<10} kernel={arch:<10} threads={pool['num_threads']}"
        )
