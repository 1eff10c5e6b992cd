"""How long a call's passes over the pairs will take, estimated before any of them runs.

A streamed pass over the n(n - 1)/2 pairs of a set of 10⁶ samples takes hours: the call
times one block of pairs (a probe), scales it to the pairs its families will pass over
and refuses, with the estimate, what exceeds ``max_seconds`` (as resampling does with
one timed replicate, :func:`..core.plan_repeats`). Which passes a family makes is read
from its registry entry (``Cost``), never from its name.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from ..core import human_bytes, metered_pair_work, plan_work, quiet_progress
from ..engines import LogDistanceHistogram, iter_distance_blocks
from ..large import SOLVERS
from ._beside import families_beside
from ._condition import BLOCK, Condition, PreparedSet
from ._plan import Plan
from ._registry import Family
from ._resampling import replicate_workers

FUNC = "profiles"
#: Calls with fewer pair visits than this many probes' worth are not probed (seconds).
MIN_PROBES = 4


def _pairs(n: int) -> float:
    return n * (n - 1) / 2.0


def pair_visits(cond: Condition, plan: Plan, fams: list[Family], item: PreparedSet) -> dict:
    """family -> pairs its method visits on ``item`` in streamed or matrix passes.

    The log-distance histogram (exact energy and average distance, every large-n domain)
    is one pass shared by all, over the distinct rows of a collapsed set; a large-n method
    adds one pass of its own (threshold counts, Σ K²; its solver's products are bounded by
    the plan's time budget); an exact method that needs the matrix forms it once (at most
    the sizes the memory plan admits; its n³ work is bounded by ``auto_exact_max_n``).
    """
    out: dict[str, float] = {}
    charged: set[str] = set()  # shared passes (histogram, matrices), charged once

    def once(name: str, rows: int) -> float:
        if name in charged:
            return 0.0
        charged.add(name)
        return _pairs(rows)

    for fam in fams:
        cost = fam.cost
        out[fam.name] = 0.0
        if item.distance in cost.closed_form_distances and not item.has_distance_matrix:
            continue  # a closed form there, whatever its route
        if plan.large(fam.name):
            out[fam.name] += once("histogram", item.pass_size)
            if not cost.streams_exact:
                out[fam.name] += _pairs(item.n)
        elif cost.streams_exact:
            out[fam.name] += once("histogram", item.pass_size)
        elif cost.exact_copies is None or item.has_distance_matrix:
            continue  # no n × n matrix, or the distances are there already
        elif cost.dual_kernel and cond.kernel == "cosine similarity":
            continue  # the d × d dual form
        elif cost.collapses_duplicates and item.collapsed is not None:
            out[fam.name] += once("distinct matrix", item.pass_size)
        else:
            out[fam.name] += once("matrix", item.n)
    return out


def check_pass_time(
    cond: Condition, plan: Plan, fams: list[Family], max_seconds: float | None
) -> None:
    """Refuse a call whose passes over the pairs would take longer than ``max_seconds``.

    Sets on a torch device or on dask workers run their passes there at another rate
    and are not probed here (their passes show progress).
    """
    local = [s for s in cond.sets if s.embeddings is not None and not s.distributed
             and s.device is None]  # fmt: skip
    if max_seconds is None or not local:
        return
    visits = {item.label: pair_visits(cond, plan, fams, item) for item in local}
    total = sum(sum(v.values()) for v in visits.values())
    probe_set = max(local, key=lambda s: s.n)
    m = min(probe_set.n, BLOCK)  # every set has 2 samples or more
    if total < MIN_PROBES * _pairs(m):
        return
    assert probe_set.embeddings is not None  # local sets are embeddings
    rows = probe_set.embeddings[:m]

    def probe() -> None:
        hist = LogDistanceHistogram()
        for block in iter_distance_blocks(rows, probe_set.distance, BLOCK):
            hist.add(block)

    per_family = {f.name: sum(v[f.name] for v in visits.values()) for f in fams}
    heavy = [name for name, p in sorted(per_family.items(), key=lambda kv: -kv[1]) if p > 0]
    biggest = max(local, key=lambda s: sum(visits[s.label].values()))
    plan_work(
        probe,
        total / _pairs(m),
        what=(
            f"its passes over the pairs of the sets: {total:.3g} pair visits, the most in "
            f"set {biggest.label!r} of n = {biggest.n}"
        ),
        func=FUNC,
        max_seconds=max_seconds,
        fix=(
            "Subsample the sets (smaller n), leave out "
            + ", ".join(map(repr, heavy))
            + " (families=...)"
        ),
    )


#: The large-n solvers are timed on random subsets of half and all of this many samples;
#: the two times give the exponent p of n (clipped to [1, 2]: their products are passes over
#: the pairs, their set-up linear in n) and the estimate is t(m) (n / m)^p per set.
SOLVER_PROBE_N = 1500
#: Sets smaller than this many probes are not probed: their solvers take seconds.
SOLVER_PROBE_MIN_RATIO = 4
#: The probes double (the last one becoming the next one's half) while the estimate leaves
#: the call's refusal in doubt (within this factor of ``max_seconds``, either side), the
#: next probe is predicted to take at most PROBE_SHARE of the estimate, and it stays within
#: 1 / PROBE_MAX_SHARE of the largest set. Measured at 30,000 × 64 (two sets; alone they
#: took Vendi 442 s and Circles 282 s), the pairs' work grown as r² alone: from 750 and
#: 1,500 samples three calls estimated Vendi at 677-733 s and Circles at 428-884 s; from
#: 1,500 and 3,000 at 580 s and 249 s; from 3,000 and 6,000 at 446 s and 249 s. With
#: a·r + b·r² (:func:`grown`), from 1,500 and 3,000: Vendi 389-456 s in four calls.
DOUBT = 2.0
#: ... and above ``max_seconds`` up to this factor: the small probes err high more than
#: low (their products run less efficiently than the set's, and their noise is grown
#: ratio²-fold). 2026-12-08, 30,000 × 64, two sets (Vendi and Circles beside each other
#: took 518 s): from 750 and 1,500 samples one call estimated 26 min in all, past twice
#: max_seconds=600, and was refused without the larger probe.
DOUBT_ABOVE = 3.0
PROBE_SHARE = 0.03
PROBE_MAX_SHARE = 8
#: Calls estimated to take longer than this print their plan (seconds).
PRINT_PLAN_AFTER_S = 30.0


def _probe_subset(cond: Condition, item: PreparedSet, size: int) -> PreparedSet:
    rng = np.random.default_rng([cond.seed, item.n, 5])
    sub = item.subset(np.sort(rng.choice(item.n, size, replace=False)))
    return replace(sub, distributed=False, device=None)


def _timed_run(
    cond: Condition, plan: Plan, fam: Family, item: PreparedSet
) -> tuple[float, float]:
    """Seconds of one evaluation on ``item``: (all of it, its work over all pairs)."""
    start = time.perf_counter()
    with quiet_progress(), metered_pair_work() as meter:  # a probe's bar would read as the run
        fam.evaluate(cond, plan, item, plan.grids[fam.name])
    return time.perf_counter() - start, meter.seconds


def grown(half: tuple[float, float], full: tuple[float, float], ratio: float) -> float:
    """Seconds at ``ratio`` times the probe's size from the timed probes of half and all
    of it, each (all, work over all pairs).

    The pairs' share grows as a·ratio + b·ratio², a + b its time on the full probe: the
    products' work over the pairs, and their work over vectors of n. Where it grew 2-4×
    from half to full, a and b go through both probes; where it grew less (the number of
    products changed with n, e.g. magnitude's CG steps: 2.1 s on 750 samples and 1.2 s on
    1,500 at 10,000 × 768), a/(a + b) falls from 1 at 2× to 0 at 1× and below: the
    quadratic bound. The rest grows as ratio^p, p fitted to its two times (clipped to
    [1, 2]: set-up linear in n, passes over the pairs). Measured, Vendi at 30,000 × 64:
    work over the pairs 0.78 s on 1,500 samples, 2.4 s on 3,000 and 156 s on 30,000,
    which ratio² alone (from 3,000) put at 240 s, a·ratio + b·ratio² at 175 s.

    >>> grown((1.0, 0.0), (2.0, 0.0), 10.0)  # linear: p = 1
    20.0
    >>> grown((1.0, 0.25), (2.0, 1.0), 10.0)  # pairs quadruple: 100 s; the rest linear
    110.0
    >>> round(grown((0.3, 0.3), (1.0, 1.0), 10.0), 6)  # pairs 0.2 r + 0.8 r²
    82.0
    >>> grown((1.0, 0.25), (3.5, 2.5), 10.0)  # pairs grew 10×: cut to 4×; the rest linear
    110.0
    """
    rest_half, rest_full = max(half[0] - half[1], 1e-9), max(full[0] - full[1], 1e-9)
    # Work over the pairs grows at most 4× from half to full: more is noise in the full
    # probe, which would be grown ratio²-fold, so it is cut to 4×. Measured at 30,000 × 64:
    # Circles' work over the pairs of the same 1,500 samples took 0.08 s in one call and
    # 0.72 s in the next (after 0.022 s on 750), which put one set at 676 s instead of
    # 265 s, and the default max_seconds refused the call.
    pairs = min(full[1], 4.0 * half[1]) if half[1] > 0 else full[1]
    p = float(np.clip(np.log2(rest_full / rest_half), 1.0, 2.0))
    growth = pairs / half[1] if half[1] > 0 else np.inf
    if growth >= 2.0:
        linear = min(max(4.0 * half[1] - pairs, 0.0), pairs)
    else:
        linear = max(growth - 1.0, 0.0) * pairs
    return rest_full * ratio**p + linear * ratio + (pairs - linear) * ratio**2


def probe_sizes(n: int) -> list[int]:
    """The probes' sizes for a largest set of ``n`` samples, in the order they may run
    (the first two always, each later one while the estimate leaves the call in doubt);
    empty where ``n`` is too small to be worth a probe.

    >>> probe_sizes(5000), probe_sizes(10_000), probe_sizes(30_000), probe_sizes(100_000)
    ([], [750, 1500], [750, 1500, 3000], [750, 1500, 3000, 6000, 12000])
    """
    m = SOLVER_PROBE_N
    if n < SOLVER_PROBE_MIN_RATIO * m:
        return []
    sizes = [m // 2, m]
    while 2 * sizes[-1] * PROBE_MAX_SHARE <= n:
        sizes.append(2 * sizes[-1])
    return sizes


def solver_seconds(
    cond: Condition,
    plan: Plan,
    fams: list[Family],
    settled: Callable[[dict[str, float]], bool] = lambda seconds: True,
) -> tuple[dict[str, float], tuple[int, int]]:
    """family -> estimated seconds of its large-n solver over all sets of ``cond``, and
    the sizes of the two probes it was grown from.

    Each large-n family is run on the plan's grid on random subsets of the largest set,
    of ``m / 2`` and ``m`` = :data:`SOLVER_PROBE_N` samples first. Its work over all
    pairs (products with n × n kernels, passes over the tiles: :func:`..core.pair_work`)
    is timed apart and grown as ``a (n / m) + b (n / m)²``; the rest grows as
    ``(n / m)^p``, the exponent fitted to its two times (clipped to [1, 2]; see
    :func:`grown`). Small probes err (their exponent is noisy, their times short): while
    ``settled(estimate)`` is false (the caller's decision is in doubt), a probe of twice
    the size is run in turn and the estimate grown from the last two, as long as it is
    predicted to take at most :data:`PROBE_SHARE` of the estimate (see
    :func:`probe_sizes`). The probes hold in memory what the largest set would (their
    memory limit scaled by ``(m / n)²``) and decide Vendi's float64 rerun as it would
    (``Plan.probe_of_n``). A time budget bounds each solver run (set and family) and so
    the estimate. Sets on dask workers or a torch device, and sets too small to be worth a
    probe, are not estimated. An estimate, not a bound (``benchmarks/large_n.py`` records
    estimate and time side by side).
    """
    local = [s for s in cond.sets if s.embeddings is not None and not s.distributed
             and s.device is None]  # fmt: skip
    if not local:
        return {}, (0, 0)
    biggest = max(local, key=lambda s: s.n)
    # Families whose own solver runs here (the others' large-n passes are probed above).
    large = [
        f for f in fams
        if plan.large(f.name) and f.name in plan.grids and f.name in SOLVERS
        and SOLVERS[f.name].applies(biggest.distance, cond.kernel)
    ]  # fmt: skip
    sizes = probe_sizes(biggest.n)
    if not large or not sizes:
        return {}, (0, 0)
    # The probes are never cut short, and decide what depends on n as the set would.
    quiet = replace(plan, time_budget=None, probe_of_n=biggest.n)

    def timed(size: int) -> dict[str, tuple[float, float]]:
        probe = _probe_subset(cond, biggest, size)
        return {fam.name: _timed_run(cond, quiet, fam, probe) for fam in large}

    def estimate(half: dict, full: dict, m: int) -> dict[str, float]:
        out = {}
        for name in full:
            per_set = [grown(half[name], full[name], s.n / m) for s in local]
            if plan.time_budget is not None:
                per_set = [min(t, plan.time_budget) for t in per_set]
            out[name] = float(sum(per_set))
        return out

    half, full = timed(sizes[0]), timed(sizes[1])
    seconds, used = estimate(half, full, sizes[1]), (sizes[0], sizes[1])
    for size in sizes[2:]:
        next_probe = sum(grown(half[name], full[name], 2.0) for name in full)
        if settled(seconds) or next_probe > PROBE_SHARE * sum(seconds.values()):
            break
        half, full = full, timed(size)
        seconds, used = estimate(half, full, size), (size // 2, size)
    return seconds, used


#: A family's whole-set influences on its large-n method (the default uncertainty:
#: magnitude's exact jackknife, ``Family.large_influence``) are timed at one grid point on
#: random subsets of half and all of this many samples of the largest set; the exponent of
#: the two times (clipped to [2, the family's]) grows them to each set's n, per point. Only
#: sets of at least twice this many are estimated (smaller ones take seconds). The
#: probe's distances are formed before the timing and grown as n² once per set: timed with
#: them, d = 768 counted 0.6 s of O(n² d) work per point as O(n³), and the estimate at
#: n = 10,000 (7 scales) came out 218 s against 24 s. Earlier (10 scales, 2 cores): 60 s
#: estimated against 44 s at n = 10,000, d = 768; 57 s against 28 s at 6,000, d = 2.
INFLUENCE_PROBE_N = 3000


#: The default's replicates on large-n methods (Circles' half-samples of its exact method,
#: Gaussian Vendi's subsamples) are timed only when the largest set has this many samples:
#: below, they take seconds (Circles' 40 half-samples of 1,500: about 15 s per set).
REPLICATE_PROBE_MIN_N = 3000


def influence_seconds(cond: Condition, plan: Plan, fams: list[Family]) -> dict[str, float]:
    """family -> estimated seconds of its whole-set influences on its large-n method over
    all sets of ``cond`` (an estimate, like :func:`solver_seconds`; it counts the distances
    the influences form once per set at every point, so it errs high)."""
    local = [s for s in cond.sets if isinstance(s.embeddings, np.ndarray) or s.has_distance_matrix]
    local = [s for s in local if s.weights is None and not s.distributed and s.device is None]
    out: dict[str, float] = {}
    for fam in fams:
        how = fam.large_influence
        if how is None or fam.influence is None or not plan.large(fam.name):
            continue
        runs = [s for s in local if s.n <= how.max_n]
        grid = plan.grids.get(fam.name)
        if grid is None or grid.size == 0 or not runs:
            continue
        biggest = max(runs, key=lambda s: s.n)
        m = INFLUENCE_PROBE_N
        if biggest.n < 2 * m:
            continue
        point = grid[grid.size // 2 : grid.size // 2 + 1]
        times, formed = [], 0.0
        for size in (m // 2, m):
            probe = _probe_subset(cond, biggest, size)
            start = time.perf_counter()
            _ = probe.D  # the distances are formed once per set, not at every point
            formed = time.perf_counter() - start
            start = time.perf_counter()
            with quiet_progress():
                fam.influence(cond, plan, probe, point, {})
            times.append(time.perf_counter() - start)
        p = float(np.clip(np.log2(max(times[1], 1e-9) / max(times[0], 1e-9)), 2.0, how.exponent))
        out[fam.name] = float(
            sum(
                times[1] * (s.n / m) ** p * min(how.points_at(s.n), grid.size)
                + formed * (s.n / m) ** 2
                for s in runs
            )
        )
    return out


def describe_estimate(
    cond: Condition,
    seconds: dict[str, float],
    memory: dict[str, float],
    total: float,
    influences: dict[str, tuple[float, str]] | None = None,
    replicates: dict[str, tuple[float, str]] | None = None,
    beside: tuple[Sequence[str], Sequence[str]] = ((), ()),
    probed: tuple[int, int] = (SOLVER_PROBE_N // 2, SOLVER_PROBE_N),
) -> str:
    """The plan as a user reads it before a long run: per family, peak memory and time,
    and the ``total`` (``influences``: family -> seconds and how its whole-set influences
    are computed; ``replicates``: family -> seconds and which replicates give its band;
    ``beside``: the families run on a thread while the others, refined, run: their times
    overlap; ``probed``: the sizes of the solvers' probes the times were grown from)."""
    n, k = max(s.n for s in cond.sets), len(cond.sets)
    influences, replicates = influences or {}, replicates or {}
    probes = (
        f" from timed runs on {probed[0]:,} and {probed[1]:,} samples, extrapolated in n"
    ) if seconds else ""  # fmt: skip
    lines = [
        f"{FUNC}: plan for {cond.representation}/{cond.distance} "
        f"({k} set{'s' * (k > 1)}, largest n = {n:,}); times estimated{probes}:"
    ]
    for name, secs in seconds.items():
        peak = f"peak {human_bytes(memory[name])}, " if name in memory else ""
        lines.append(f"  {name}: large-n method, {peak}about {_duration(secs)}")
    for name, (secs, method) in influences.items():
        lines.append(
            f"  {name}: its sampling uncertainty ({method}, timed on "
            f"{INFLUENCE_PROBE_N // 2:,} and {INFLUENCE_PROBE_N:,} samples), about "
            f"{_duration(secs)}"
        )
    for name, (secs, how) in replicates.items():
        lines.append(
            f"  {name}: its sampling uncertainty ({how}; timed on a few), "
            f"about {_duration(secs)}"
        )
    shared = overlap(seconds, beside)
    side, refined = ([name for name in names if name in seconds] for names in beside)
    alongside = (
        f" ({' and '.join(side)} beside {' and '.join(refined)}: "
        "the longer and half the shorter counted)"
    ) if shared else ""  # fmt: skip
    lines.append(f"  total: about {_duration(total)}{alongside}")
    return "\n".join(lines)


#: The share of the shorter of two overlapping runs (families beside the refined ones)
#: that the overlap does not hide: both are bound by memory traffic. Measured at
#: 30,000 × 64, two sets: Vendi 442 s and Circles 282 s alone, 564 s beside each other
#: (442 + 0.43 · 282).
BESIDE_CONTENTION = 0.5


def overlap(seconds: Mapping[str, float], beside: tuple[Sequence[str], Sequence[str]]) -> float:
    """Seconds of the families run beside the refined ones (``beside``: (those on the
    thread, those refined)) that pass while the refined ones run: the shorter of the two
    sums, less the share :data:`BESIDE_CONTENTION` that contention for memory adds back.

    >>> overlap({"vendi": 500.0, "circles": 450.0, "energy": 1.0}, (["circles"], ["vendi"]))
    225.0
    >>> overlap({"vendi": 500.0}, ((), ["vendi"]))
    0.0
    """
    side, refined = beside
    shorter = min(sum((seconds.get(n, 0.0) for n in side), 0.0),
                  sum((seconds.get(n, 0.0) for n in refined), 0.0))  # fmt: skip
    return (1.0 - BESIDE_CONTENTION) * shorter


def _duration(seconds: float) -> str:
    """>>> _duration(42.0), _duration(600.0), _duration(7200.0)
    ('42 s', '10 min', '2.0 h')
    """
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200 - 1:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def check_solver_time(
    cond: Condition,
    plan: Plan,
    fams: list[Family],
    max_seconds: float | None,
    memory: dict[str, float] | None = None,
    influences: bool = False,
    replicates: Mapping[str, tuple[Callable[[int], object], int, str]] | None = None,
    refined: Sequence[Family] = (),
) -> dict[str, float]:
    """Estimate the large-n solvers' time up front (with ``influences``, also the
    whole-set influences the default uncertainty computes on large-n methods; with
    ``replicates``, family -> (a call running that many replicates on every set; how
    many; how), the replicates it runs there, timed by running as many as run at once);
    print the plan when the run is long; refuse, with the plan, what exceeds
    ``max_seconds``. ``refined``: the families whose grids are refined, beside which
    others may run on a thread (:func:`._beside.families_beside`, with ``memory`` as their
    peaks): the total counts the longer of the two and half the shorter. The solvers'
    probes grow while the total is within a factor :data:`DOUBT` below ``max_seconds`` or
    :data:`DOUBT_ABOVE` above it.
    Returns the estimates (an influence's or replicates' under ``"<family>
    uncertainty"``)."""
    extra = influence_seconds(cond, plan, fams) if influences else {}
    timed = {}  # one replicate of many: a small share of the work it estimates
    if max(s.n for s in cond.sets) < REPLICATE_PROBE_MIN_N:
        replicates = {}  # seconds at most: not worth a timing (nor a varying attribute)
    for name, (run, repeats, how) in (replicates or {}).items():
        batch = min(repeats, replicate_workers())  # as many as run at once, on threads
        start = time.perf_counter()
        with quiet_progress():
            run(batch)
        timed[name] = ((time.perf_counter() - start) * repeats / batch, how)
    methods = {f.name: f.large_influence.method for f in fams if f.large_influence is not None}
    influenced = {k: (v, methods[k]) for k, v in extra.items()}
    for name, (secs, _) in timed.items():
        extra[name] = extra.get(name, 0.0) + secs

    def beside_of(seconds: dict[str, float]) -> tuple[list[str], list[str]]:
        side = families_beside(plan, fams, refined, seconds, memory or {}) if refined else []
        return [f.name for f in side], [f.name for f in refined] if side else []

    def total_of(seconds: dict[str, float]) -> float:
        shared = overlap(seconds, beside_of(seconds))
        return sum(seconds.values()) - shared + sum(extra.values())

    def settled(seconds: dict[str, float]) -> bool:  # larger probes only where in doubt
        return max_seconds is None or not (
            max_seconds / DOUBT < total_of(seconds) < max_seconds * DOUBT_ABOVE
        )

    seconds, probed = solver_seconds(cond, plan, fams, settled)
    total = total_of(seconds)
    text = describe_estimate(
        cond, seconds, memory or {}, total, influenced, timed, beside_of(seconds), probed
    )
    if not seconds and not extra:
        return seconds
    if max_seconds is not None and total > max_seconds:
        budget = "" if plan.time_budget is not None else (
            "pass time_budget=<seconds per set and family> to cut each solver short "
            "(wider certified bounds), "
        )  # fmt: skip
        per_family = {name: seconds.get(name, 0.0) + extra.get(name, 0.0)
                      for name in {**seconds, **extra}}  # fmt: skip
        heavy = sorted(per_family, key=lambda k: -per_family[k])
        raise ValueError(
            f"{text}\nThat is more than max_seconds={max_seconds:g}. Subsample the sets, "
            f"leave out {', '.join(map(repr, heavy))} "
            f"(families=...), {budget}or pass a larger max_seconds (None: no limit) to run "
            f"it anyway."
        )
    if total > PRINT_PLAN_AFTER_S:
        print(text, file=sys.stderr, flush=True)
    return {**seconds, **{f"{name} uncertainty": secs for name, secs in extra.items()}}
