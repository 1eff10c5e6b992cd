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
