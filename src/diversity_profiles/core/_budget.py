"""Estimate the time and memory of repeated work before starting it.

Resampling runs the families hundreds of times; one timed replicate says how
long the rest will take. The passes over the pairs of large sets are timed the
same way, on a probe (one block of pairs). Work beyond the caller's budget is
refused with the estimate and the argument to change; work that fits but takes
more than a few seconds gets a progress bar.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ._validation import available_memory_bytes, human_bytes

#: Show a progress bar for work estimated to take longer than this many seconds.
PROGRESS_AFTER_S = 3.0


def plan_repeats(
    run_once: Callable[[], object],
    repeats: int,
    *,
    arg: str,
    func: str,
    max_seconds: float | None,
    result_bytes: float,
) -> bool:
    """Check ``repeats`` runs of ``run_once`` fit in time and memory; True: show progress.

    ``run_once`` is timed (twice when the first, which pays one-time set-up such as
    forming distance matrices, already exceeds the budget); ``result_bytes`` is the
    memory the stored results of all repeats will take.
    """
    have = available_memory_bytes()
    if result_bytes > 0.5 * have:
        raise MemoryError(
            f"{func} would need about {human_bytes(result_bytes)} to keep {repeats} replicates, "
            f"but only {human_bytes(have)} is available. Lower {arg!r} (or n_points)."
        )
    elapsed = _timed(run_once)
    if max_seconds is not None and elapsed * repeats > max_seconds:
        elapsed = min(elapsed, _timed(run_once))  # the first run paid the set-up
    estimate = elapsed * repeats
    if max_seconds is not None and estimate > max_seconds:
        raise ValueError(
            f"{func} would take about {estimate:.0f} s for {arg}={repeats} (one replicate took "
            f"{elapsed:.3g} s), more than max_seconds={max_seconds:g}. Lower {arg!r}, or pass "
            f"a larger max_seconds (None: no limit) to run it anyway."
        )
    return estimate > PROGRESS_AFTER_S


def plan_work(
    run_probe: Callable[[], object],
    scale: float,
    *,
    what: str,
    func: str,
    max_seconds: float | None,
    fix: str,
) -> bool:
    """Check that work ``scale`` times that of ``run_probe`` fits in ``max_seconds``;
    True: show progress. ``what`` names the work, ``fix`` says how to make it smaller.

    The probe is timed like a replicate of :func:`plan_repeats` (again when the first
    timing, which may pay one-time set-up, already exceeds the budget).

    >>> plan_work(lambda: None, 10, what="nothing", func="f", max_seconds=1.0, fix="")
    False
    >>> plan_work(lambda: time.sleep(0.01), 1e6, what="the passes", func="f",
    ...           max_seconds=60.0, fix="Subsample the sets")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: f would take about ... s for the passes, more than max_seconds=60 (a probe ...
    """
    elapsed = _timed(run_probe)
    if max_seconds is not None and elapsed * scale > max_seconds:
        elapsed = min(elapsed, _timed(run_probe))
    estimate = elapsed * scale
    if max_seconds is not None and estimate > max_seconds:
        raise ValueError(
            f"{func} would take about {estimate:.0f} s for {what}, more than "
            f"max_seconds={max_seconds:g} (a probe of 1/{scale:.3g} of the work took "
            f"{elapsed:.3g} s). {fix}, or pass a larger max_seconds (None: no limit) to run "
            f"it anyway."
        )
    return estimate > PROGRESS_AFTER_S


def _timed(run_once: Callable[[], object]) -> float:
    start = time.perf_counter()
    run_once()
    return time.perf_counter() - start
