"""How long a call's passes over the pairs will take, estimated before any of them runs.

A streamed pass over the n(n - 1)/2 pairs of a set of 10⁶ samples takes hours: the call
times one block of pairs (a probe), scales it to the pairs its families will pass over
and refuses, with the estimate, what exceeds ``max_seconds`` (as resampling does with
one timed replicate, :func:`..core.plan_repeats`). Which passes a family makes is read
from its registry entry (``Cost``), never from its name.
"""

from __future__ import annotations

from ..core import plan_work
from ..engines import LogDistanceHistogram, iter_distance_blocks
from ._condition import BLOCK, Condition, PreparedSet
from ._plan import Plan
from ._registry import Family

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
