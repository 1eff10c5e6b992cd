"""Large-n families on a fixed grid, evaluated on a thread while the refined ones run.

Circles' large-n method keeps a fixed grid (it has no solver session to refine from) and
spends its time in Python loops (clique covers and independent sets) that hold the GIL,
while Vendi's and magnitude's solvers run BLAS on one thread (``engines.one_thread``):
evaluated one after the other, one of the two cores idled through most of each. At
10,000 × 768 (one set, all default families) Circles took 40 s of a 151 s call; beside
the refinement of the other two its time mostly disappears (benchmarks/large_n.py).

Only where it cannot change a result or exceed the memory plan: without a time budget (a
deadline must not share its seconds with another solver), on more than one core, and when
the planned peaks of the family beside and of the largest refined one fit the solvers'
memory together.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence

from ._condition import Condition
from ._plan import Plan
from ._registry import Family, Result

#: A family runs beside the refinement when its solvers are estimated to take this long
#: (seconds, all sets): below it a thread is not worth its start.
BESIDE_MIN_SECONDS = 5.0


def families_beside(
    plan: Plan,
    fams: Sequence[Family],
    refined: Sequence[Family],
    estimates: Mapping[str, float],
    peaks: Mapping[str, float],
) -> list[Family]:
    """The large-n families on a fixed grid to evaluate on a thread while ``refined`` are
    refined (see the module's rule)."""
    if plan.time_budget is not None or (os.cpu_count() or 1) < 2:
        return []
    busy = [f for f in refined if plan.large(f.name)]
    if not busy:
        return []
    names = {f.name for f in refined}
    beside = [
        f
        for f in fams
        if f.parameter is not None
        and f.name not in names
        and plan.large(f.name)
        and estimates.get(f.name, 0.0) >= BESIDE_MIN_SECONDS
    ]
    together = sum(peaks.get(f.name, 0.0) for f in beside)
    together += max(peaks.get(f.name, 0.0) for f in busy)
    fits = plan.memory_limit is not None and together <= plan.memory_limit
    return beside if beside and fits else []


class Beside:
    """``work()`` on a daemon thread (an interrupted call does not wait for it at exit);
    :meth:`result` joins it and raises what it raised."""

    def __init__(self, work: Callable[[], dict[str, list[Result]]]) -> None:
        self._value: dict[str, list[Result]] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(work,), daemon=True, name="diversity-profiles-beside"
        )
        self._thread.start()

    def _run(self, work: Callable[[], dict[str, list[Result]]]) -> None:
        try:
            self._value = work()
        except BaseException as exc:  # handed to the caller's thread by result()
            self._error = exc

    def result(self) -> dict[str, list[Result]]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


def evaluate_beside(cond: Condition, plan: Plan, fams: Sequence[Family]) -> Beside:
    """Start evaluating ``fams`` on every set of ``cond`` on the plan's grids, on a thread:
    family -> per-set results, as :func:`._profiles._estimates` would compute them."""

    def work() -> dict[str, list[Result]]:
        return {
            fam.name: [fam.evaluate(cond, plan, item, plan.grids[fam.name]) for item in cond.sets]
            for fam in fams
        }

    return Beside(work)
