"""The large-n solvers' time, estimated up front: printed with the memory plan for a long
run, recorded in the node, and a run beyond ``max_seconds`` refused before any solver runs."""

import json

import numpy as np
import pytest

import diversity_profiles as dp
from diversity_profiles.pipeline import _passes


def _set(n: int, d: int = 2, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) + rng.integers(0, 4, size=(n, 1)) * 3.0


def _refusal(**options) -> str:
    """The refusal of a large-n profile of one set of 6,000 samples."""
    with pytest.raises(ValueError) as err:
        dp.profiles({"a": _set(6000)}, representation="x", distance="euclidean",
                    method="large", **options)  # fmt: skip
    return str(err.value)


def test_a_run_beyond_max_seconds_is_refused_with_the_plan():
    # 6,000 samples: the streamed passes take seconds (they fit), the Lanczos steps of
    # the large-n Vendi solver tens of seconds (2026-12-04, 2 cores: about 40 s with its
    # float64 rerun, estimated 17 s; before the batched reorthogonalisation 102 s).
    text = _refusal(families=["vendi"], max_seconds=5)
    assert "plan for x/euclidean (1 set, largest n = 6,000)" in text
    assert "vendi: large-n method, peak" in text
    assert "more than max_seconds=5" in text and "time_budget=" in text


def test_a_long_run_prints_its_plan_and_records_the_estimate(monkeypatch, capsys):
    # Probes of 50 and 100 samples and a print threshold of 0 s make a small run "long".
    monkeypatch.setattr(_passes, "SOLVER_PROBE_N", 100)
    monkeypatch.setattr(_passes, "PRINT_PLAN_AFTER_S", 0.0)
    tree = dp.profiles({"a": _set(500), "b": _set(450, seed=1)}, representation="x",
                       distance="euclidean", families=["magnitude", "energy"],
                       method="large", n_boot=0)  # fmt: skip
    err = capsys.readouterr().err
    assert "plan for x/euclidean (2 sets, largest n = 500)" in err
    assert "magnitude: large-n method, peak" in err and "total: about" in err
    recorded = json.loads(tree["x/euclidean"].attrs["solver_seconds_estimated"])
    assert set(recorded) == {"magnitude"}  # energy streams its exact value: no solver
    assert recorded["magnitude"] > 0


def test_small_sets_are_not_probed():
    tree = dp.profiles({"a": _set(300)}, representation="x", distance="euclidean",
                       families=["magnitude"], method="large", n_boot=0)  # fmt: skip
    assert "solver_seconds_estimated" not in tree["x/euclidean"].attrs


def test_a_time_budget_bounds_the_estimate(monkeypatch):
    monkeypatch.setattr(_passes, "SOLVER_PROBE_N", 100)
    tree = dp.profiles({"a": _set(800)}, representation="x", distance="euclidean",
                       families=["magnitude"], method="large", n_boot=0,
                       time_budget=1e-3)  # fmt: skip
    recorded = json.loads(tree["x/euclidean"].attrs["solver_seconds_estimated"])
    assert recorded["magnitude"] <= 1e-3


def test_the_estimate_includes_magnitudes_jackknife_and_refuses_with_it():
    """The default uncertainty runs magnitude's exact jackknife on its large-n method (an n³
    factorisation per scale): timed on 1,500 and 3,000 samples, it is part of the plan, and
    of what max_seconds refuses (8 s: the streamed passes fit), before any solver or
    factorisation at n runs."""
    text = _refusal(families=["magnitude"], max_seconds=8)
    assert "magnitude: large-n method, peak" in text
    assert "magnitude: its sampling uncertainty (the exact jackknife, timed on 1,500" in text
    assert "more than max_seconds=8" in text and "leave out 'magnitude'" in text
    # without the default uncertainty there is no jackknife to plan
    assert "sampling uncertainty" not in _refusal(families=["magnitude"], max_seconds=8, n_boot=0)


def test_the_estimate_includes_the_replicates_of_large_n_families(monkeypatch, capsys):
    """On their large-n methods the default bands Circles by half-samples of its exact
    method and Gaussian Vendi by subsamples of its own: both are timed (as many replicates
    as run at once) and planned next to the solvers, and recorded with the estimate."""
    monkeypatch.setattr(_passes, "SOLVER_PROBE_N", 100)
    monkeypatch.setattr(_passes, "PRINT_PLAN_AFTER_S", 0.0)
    monkeypatch.setattr(_passes, "REPLICATE_PROBE_MIN_N", 500)
    tree = dp.profiles({"a": _set(600), "b": _set(500, seed=1)}, representation="x",
                       distance="euclidean", families=["vendi", "circles"],
                       method="large")  # fmt: skip
    err = capsys.readouterr().err
    assert "circles: its sampling uncertainty (half-samples of its exact method, 40;" in err
    assert "vendi: its sampling uncertainty (subsamples of its exact method, 30;" in err
    node = tree["x/euclidean"]
    assert node.attrs["uncertainty_circles"] == "half-sample replicates (40) of its exact method"
    recorded = json.loads(node.attrs["solver_seconds_estimated"])
    assert recorded["circles uncertainty"] > 0 and recorded["vendi uncertainty"] > 0
    # without the default uncertainty there are no replicates to plan, and below
    # REPLICATE_PROBE_MIN_N samples they are not timed (seconds)
    for n, n_boot, floor in ((600, 0, 500), (600, "auto", 601)):
        monkeypatch.setattr(_passes, "REPLICATE_PROBE_MIN_N", floor)
        tree = dp.profiles({"a": _set(n)}, representation="x", distance="euclidean",
                           families=["circles"], method="large", n_boot=n_boot)  # fmt: skip
        recorded = json.loads(tree["x/euclidean"].attrs.get("solver_seconds_estimated", "{}"))
        assert "circles uncertainty" not in recorded


def test_circles_half_samples_on_the_large_method_are_refused_beyond_max_seconds():
    """Between 4,000 and 6,000 samples (Euclidean) Circles' large-n method is quick but its
    40 half-samples of 2,500 take seconds each: max_seconds refuses them up front, saying so."""
    with pytest.raises(ValueError) as err:
        dp.profiles({"a": _set(5000)}, representation="x", distance="euclidean",
                    families=["circles"], max_seconds=5)  # fmt: skip
    text = str(err.value)
    assert "circles: its sampling uncertainty (half-samples of its exact method" in text
    assert "more than max_seconds=5" in text and "leave out 'circles'" in text


def test_timing_probes_hold_and_decide_as_the_set_they_stand_for(monkeypatch):
    """The probes of 50 and 100 samples stand for a set of 600: the solvers get a memory
    limit scaled by (m / 600)² (they hold their n × n data only where the set would) and
    Vendi decides its float64 rerun as for 600 samples; the run itself gets the plan's."""
    from diversity_profiles.large import open_solver, run_solver
    from diversity_profiles.pipeline import _large

    seen = []

    def recording(call):
        def recorded(family, X, *grid, **options):
            seen.append((family, len(X), options.get("memory_limit"), options.get("precision_n")))
            return call(family, X, *grid, **options)

        return recorded

    monkeypatch.setattr(_passes, "SOLVER_PROBE_N", 100)
    monkeypatch.setattr(_large, "open_solver", recording(open_solver))
    monkeypatch.setattr(_large, "run_solver", recording(run_solver))
    dp.profiles({"a": _set(600, d=3)}, representation="x", distance="euclidean",
                families=["vendi"], method="large", n_boot=0)  # fmt: skip
    runs = {n: (limit, n_for) for family, n, limit, n_for in seen if family == "vendi"}
    assert set(runs) == {50, 100, 600}
    full_limit, none = runs[600]
    assert none is None and full_limit > 0
    for m in (50, 100):
        assert runs[m] == (pytest.approx(full_limit * (m / 600) ** 2, rel=1e-12), 600)


def test_vendis_rerun_decided_for_a_larger_set():
    """On 1,500 clustered samples in 64-d (the benchmarks' kind) no probe mass lies below
    the float32 noise level of 1,500 samples, and the probes stay float32; standing for
    30,000 samples, where the whole set did rerun (1,451 s of a 1,489 s benchmark run), the
    same subset reruns in float64. Dense eigvalsh is the reference of both."""
    from scipy.spatial.distance import cdist, pdist

    from diversity_profiles.large import vendi_large

    rng = np.random.default_rng(0)
    centres = 3.0 * rng.standard_normal((50, 64))
    X = centres[rng.integers(0, 50, 1500)] + rng.standard_normal((1500, 64))
    h = float(np.median(pdist(X)))
    lam = np.linalg.eigvalsh(np.exp(-cdist(X, X, "sqeuclidean") / (2 * h * h)) / len(X))
    lam = lam[lam > 0]
    qs = np.array([0.5, 2.0])
    ref = np.array([np.sum(lam**q) ** (1 / (1 - q)) for q in qs])
    for precision_n, expected in ((None, "single"), (1500, "single"), (30_000, "double")):
        r = vendi_large(X, qs, bandwidth=h, precision_n=precision_n, progress=False)
        assert r.details["precision"] == expected
        assert np.all(np.abs(r.value - ref) <= r.error + 1e-12 * ref), (r.value, ref)
    with pytest.raises(ValueError, match="'precision_n' argument of vendi_large"):
        vendi_large(X, qs, bandwidth=h, precision_n=0)


def test_pair_work_is_counted_once_and_only_where_the_meter_was_opened():
    """Nested regions count once; a region on a thread of its own (no meter in its
    context) is not counted, as a product's worker threads are counted by their caller."""
    import threading
    import time

    from diversity_profiles.core import metered_pair_work, pair_work

    def elsewhere():
        with pair_work():
            time.sleep(0.3)

    with metered_pair_work() as meter:
        with pair_work(), pair_work():
            time.sleep(0.2)
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
        time.sleep(0.1)  # not pair work
    assert 0.2 <= meter.seconds < 0.29
    with pair_work():  # no meter open: nothing to count, no error
        pass


def test_the_estimate_grows_pair_work_as_n_and_n_squared():
    """The probes' work over the pairs grows as a(n/m) + b(n/m)² through both probes, the
    rest with its own exponent: against the closed forms of c(n/m)^p + a(n/m) + b(n/m)²."""
    # the rest doubles from half to full (p = 1), the pairs' seconds quadruple (a = 0)
    assert _passes.grown((1.5, 0.5), (3.0, 2.0), 20.0) == pytest.approx(1.0 * 20 + 2.0 * 400)
    # pairs 0.3 s then 1.0 s: a/2 + b/4 = 0.3, a + b = 1 -> a = 0.2, b = 0.8; no rest
    assert _passes.grown((0.3, 0.3), (1.0, 1.0), 10.0) == pytest.approx(0.2 * 10 + 0.8 * 100)
    # pairs that grow 2x: linear, a = 1
    assert _passes.grown((0.5, 0.5), (1.0, 1.0), 10.0) == pytest.approx(10.0)
    # pairs that grow less than 2x (fewer products at n than at n/2): a = (1.5 - 1) of
    # the full probe's 1 s, b the rest
    assert _passes.grown((2 / 3, 2 / 3), (1.0, 1.0), 10.0) == pytest.approx(0.5 * 10 + 0.5 * 100)
    # pairs that shrink (magnitude's probes at 10,000 x 768): the quadratic bound
    assert _passes.grown((2.1, 2.1), (1.2, 1.2), 10.0) == pytest.approx(1.2 * 100)
    # pairs that grow more than 4x (noise in the full probe: measured 0.08 then 0.72 s on
    # the same 1,500 samples): cut to 4x the half probe's, then quadratic
    assert _passes.grown((1.0, 0.25), (3.5, 2.5), 10.0) == pytest.approx(1.0 * 10 + 1.0 * 100)
    # the rest grows faster than n² (noise): clipped to 2
    assert _passes.grown((0.1, 0.0), (1.0, 0.0), 3.0) == pytest.approx(9.0)
    # the rest shrinks (noise, warm-up): clipped to 1
    assert _passes.grown((2.0, 0.0), (1.0, 0.5), 4.0) == pytest.approx(0.5 * 4 + 0.5 * 16)


def _probed_by_law(monkeypatch, law, **options):
    """(the probes' sizes, what the call said) for one set of 1,700 samples whose solver
    probes time as ``law(m)`` seconds, none of it over the pairs (probes of 50 and 100
    samples first; 200 may follow)."""
    sizes = []

    def timed(cond, plan, fam, item):
        sizes.append(item.n)
        return law(item.n), 0.0

    monkeypatch.setattr(_passes, "SOLVER_PROBE_N", 100)
    monkeypatch.setattr(_passes, "_timed_run", timed)
    try:
        dp.profiles({"a": _set(1700)}, representation="x", distance="euclidean",
                    families=["magnitude"], method="large", n_boot=0, **options)  # fmt: skip
    except ValueError as err:
        return sizes, str(err)
    return sizes, "ran"


@pytest.mark.parametrize(
    "max_seconds, sizes, said",
    [
        (1e4, [50, 100], "ran"),  # 289 s: far below, settled by the first two probes
        (300, [50, 100, 200], "ran"),  # in doubt: one probe more, then accepted
        (200, [50, 100, 200], "timed runs on 100 and 200 samples"),  # in doubt, refused
        (120, [50, 100, 200], "timed runs on 100 and 200 samples"),  # 2.4x: in doubt
        (90, [50, 100], "timed runs on 50 and 100 samples"),  # far above: refused at once
    ],
)
def test_larger_probes_run_only_while_the_refusal_is_in_doubt(
    monkeypatch, max_seconds, sizes, said
):
    """Probes that time as 1e-4 m² seconds estimate 1e-4 · 1,700² = 289 s from any two: a
    probe of 200 samples runs only where that is within a factor of 2 below max_seconds or
    3 above it (the small probes err high more than low)."""
    probed, text = _probed_by_law(monkeypatch, lambda m: 1e-4 * m * m, max_seconds=max_seconds)
    assert probed == sizes
    assert said in text
    if said != "ran":
        assert "magnitude: large-n method, peak" in text and "about 5 min" in text


def test_a_larger_probe_runs_only_where_it_is_cheap_beside_the_estimate(monkeypatch):
    """Linear probes (0.17 m seconds, 289 s in all) predict 34 s for a probe of
    200 samples: more than PROBE_SHARE (3%) of the estimate, so none runs although the
    refusal is in doubt."""
    probed, text = _probed_by_law(monkeypatch, lambda m: 289.0 * m / 1700, max_seconds=200)
    assert probed == [50, 100] and "timed runs on 50 and 100 samples" in text


def test_a_family_run_beside_the_refined_ones_overlaps_them_in_the_total(monkeypatch, capsys):
    """Circles on its fixed grid runs on a thread beside Vendi's refinement (two or more
    cores, no time budget): the plan's total counts the longer of the two and half the
    shorter (contention for memory), so a call that fits max_seconds that way is not
    refused for the sum of both (500 s + 450 s here: 725 s)."""
    import os

    monkeypatch.setattr(_passes, "solver_seconds", lambda cond, plan, fams, settled: (
        {"vendi": 500.0, "circles": 450.0}, (750, 1500)))  # fmt: skip
    sets = {"a": _set(400), "b": _set(400, seed=1)}
    options = dict(representation="x", distance="euclidean", families=["vendi", "circles"],
                   method="large", n_boot=0)  # fmt: skip
    if (os.cpu_count() or 1) < 2:  # nothing runs beside on one core: the sum stands
        with pytest.raises(ValueError, match=r"total: about 16 min\n"):
            dp.profiles(sets, max_seconds=800, **options)
        return
    tree = dp.profiles(sets, max_seconds=800, **options)
    assert (
        "total: about 12 min (circles beside vendi: the longer and half the shorter counted)"
        in capsys.readouterr().err
    )
    assert set(json.loads(tree["x/euclidean"].attrs["solver_seconds_estimated"])) == {
        "vendi", "circles"}  # fmt: skip
    with pytest.raises(ValueError, match="more than max_seconds=700") as err:
        dp.profiles(sets, max_seconds=700, **options)
    assert "total: about 12 min (circles beside vendi" in str(err.value)
