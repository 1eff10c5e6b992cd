"""Large-n families on a fixed grid evaluated on a thread beside the refinement
(pipeline/_beside.py): the same tree as one after the other, and only where allowed."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import diversity_profiles as dp
from diversity_profiles.pipeline import _beside
from diversity_profiles.pipeline._registry import FAMILIES

SETS = {
    "A": np.random.default_rng(0).normal(size=(400, 6)),
    "B": 0.9 * np.random.default_rng(1).normal(size=(400, 6)),
}
KW = dict(representation="x", distance="euclidean", families=["vendi", "circles"],
          method="large", n_boot=0)  # fmt: skip


def _tree(monkeypatch, threshold: float):
    monkeypatch.setattr(_beside, "BESIDE_MIN_SECONDS", threshold)
    return dp.profiles(SETS, **KW)["x/euclidean"].to_dataset()


def test_circles_beside_the_refinement_gives_the_tree_of_one_after_the_other(monkeypatch):
    started = []
    real = _beside.evaluate_beside

    def spy(cond, plan, fams):
        started.append([f.name for f in fams])
        return real(cond, plan, fams)

    monkeypatch.setattr("diversity_profiles.pipeline._profiles.evaluate_beside", spy)
    together = _tree(monkeypatch, 0.0)
    assert started == [["circles"]]  # it did run beside Vendi's refinement
    alone = _tree(monkeypatch, float("inf"))
    assert started == [["circles"]]  # ... and not here
    for var in ("circles", "circles_upper", "vendi", "vendi_lower", "vendi_upper"):
        np.testing.assert_array_equal(together[var].values, alone[var].values)
    assert together.tau.attrs == alone.tau.attrs


def test_only_without_a_time_budget_and_within_the_memory_plan():
    from diversity_profiles.pipeline._plan import Plan

    fams = [FAMILIES["vendi"], FAMILIES["circles"]]
    routes = {"vendi": "large", "circles": "large"}
    plan = Plan(routes, memory_limit=10e9)
    estimates, peaks = {"circles": 40.0}, {"vendi": 2e9, "circles": 3e9}
    assert _beside.families_beside(plan, fams, fams[:1], estimates, peaks) == fams[1:]
    budget = dataclasses.replace(plan, time_budget=30.0)
    assert _beside.families_beside(budget, fams, fams[:1], estimates, peaks) == []
    tight = dataclasses.replace(plan, memory_limit=4e9)  # 2 + 3 GB together do not fit
    assert _beside.families_beside(tight, fams, fams[:1], estimates, peaks) == []
    quick = {"circles": 1.0}  # not worth a thread
    assert _beside.families_beside(plan, fams, fams[:1], quick, peaks) == []
    assert _beside.families_beside(plan, fams, [], estimates, peaks) == []  # nothing refined


def test_an_error_on_the_thread_reaches_the_caller():
    def fails():
        raise ValueError("from the thread")

    with pytest.raises(ValueError, match="from the thread"):
        _beside.Beside(fails).result()


def test_a_set_stop_ends_circles_large_at_its_next_check_with_valid_bounds():
    """Set from another thread (profiles does when it fails or is interrupted), the event
    ends the call as a spent time budget would: after the first row of tiles, every
    threshold keeps carried bounds only (a subsample's witnesses below, n above), which
    still hold: each lies on its side of the uninterrupted call's bracket."""
    import threading

    from diversity_profiles.large import circles_large

    X = np.random.default_rng(2).normal(size=(2500, 4))  # two rows of tiles
    taus = np.quantile(np.abs(X[:200, None, :] - X[None, :200, :]).sum(-1), [0.05, 0.3, 0.6])
    stop = threading.Event()
    stop.set()
    cut = circles_large(X, taus, stop=stop, progress=False)
    full = circles_large(X, taus, progress=False)
    assert set(cut.kind) == {"skipped"}
    # both brackets hold the truth: each lower bound lies below the other's upper one
    assert np.all(cut.lower <= full.upper) and np.all(full.lower <= cut.upper)


def test_a_failed_refinement_stops_the_thread_beside_it(monkeypatch):
    from diversity_profiles.pipeline import _adaptive

    plans = []
    real = _beside.evaluate_beside

    def spy(cond, plan, fams):
        plans.append(plan)
        return real(cond, plan, fams)

    def fails(*args, **kwargs):
        raise RuntimeError("refinement failed")

    monkeypatch.setattr("diversity_profiles.pipeline._profiles.evaluate_beside", spy)
    monkeypatch.setattr(_beside, "BESIDE_MIN_SECONDS", 0.0)
    monkeypatch.setattr(_adaptive, "refine", fails)
    with pytest.raises(RuntimeError, match="refinement failed"):
        dp.profiles(SETS, **KW)
    assert len(plans) == 1 and plans[0].stop is not None and plans[0].stop.is_set()
