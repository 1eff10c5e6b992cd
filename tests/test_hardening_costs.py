"""Costs that must not explode without an estimate (issue #22, second hardening pass).

Every test here failed on the code before the fix it checks: per-set histograms of 3 MB
whatever the set's size, O(n²) passes over exact duplicates, passes started with no time
estimate, and comparisons of many sets that print every pair.
"""

import re
import tracemalloc

import numpy as np
import pytest

import diversity_profiles as dp
from diversity_profiles.engines import LogDistanceHistogram
from diversity_profiles.pipeline import _planning as planning


def _tiny_sets(k: int, n: int = 2, d: int = 8, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {f"s{i}": rng.normal(size=(n, d)) for i in range(k)}


# --- many tiny sets: per-set structures sized to the set, counted in the plan ------------------


@pytest.mark.parametrize("n", [2, 3, 7, 40])
def test_a_histogram_holds_at_most_one_bin_per_pair(n):
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 5))
    d = np.array([np.linalg.norm(X[i] - X[j]) for i in range(n) for j in range(i + 1, n)])
    h = LogDistanceHistogram()
    h.add(d)
    assert h.nbytes <= planning.HISTOGRAM_BIN_BYTES * d.size  # was 3 MB for any n
    # the values are those of the pairs themselves (brute force over the pairs)
    s = np.array([0.5, 2.0, 8.0])
    ref = np.array([np.mean(d**-si) for si in s])
    np.testing.assert_allclose(h.mean_power(s), ref, rtol=1e-6)
    assert h.mean_distance() == pytest.approx(d.mean(), rel=1e-14)


def test_sparse_histograms_merge_like_their_pooled_pairs():
    rng = np.random.default_rng(1)
    a, b = rng.random(300) + 0.5, 1e3 * (rng.random(200) + 0.5)  # anchors 10 octaves apart
    ha, hb, pooled = LogDistanceHistogram(), LogDistanceHistogram(), LogDistanceHistogram()
    ha.add(a[:150])
    ha.add(a[150:])  # a second block into the same histogram
    hb.add(b)
    pooled.add(np.concatenate([b, a]))  # anchored like the merge (the larger distances)
    merged = ha.merged([hb])
    assert np.array_equal(merged.counts, pooled.counts)
    np.testing.assert_allclose(merged.sum_u, pooled.sum_u, rtol=1e-9, atol=1e-15)
    s = np.array([1.0, 3.0])
    ref = [np.mean(np.concatenate([a, b]) ** -si) for si in s]
    np.testing.assert_allclose(merged.mean_power(s), ref, rtol=1e-6)


def test_many_tiny_sets_take_kilobytes_each_and_the_plan_counts_them():
    import xarray  # noqa: F401  (imported before measuring: its import is not the sets' cost)

    sets = _tiny_sets(300)
    dp.profiles(_tiny_sets(2), representation="r", distance="euclidean", families=["energy"])
    tracemalloc.start()
    try:
        tree = dp.profiles(
            sets, representation="r", distance="euclidean", families=["average_distance", "energy"]
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 300 dense histograms took about 1 GB here; now the plan's own estimate bounds the peak
    estimate = planning.per_set_bytes([2] * 300)
    assert peak < estimate + 8e6, (peak, estimate)
    assert estimate < 2e6  # and that estimate is kilobytes per set
    ref = [np.linalg.norm(X[0] - X[1]) for X in sets.values()]
    np.testing.assert_allclose(tree["r/euclidean"]["average_distance"].values, ref, rtol=1e-12)


def test_ten_thousand_sets_of_two_fit_the_plan_or_are_refused_with_the_estimate(monkeypatch):
    sizes = [2] * 10_000
    kept = planning.per_set_bytes(sizes)
    # an independent count: 10,000 histograms of one bin each, plus the fixed part per set
    assert kept == pytest.approx(10_000 * (planning.PER_SET_BYTES + planning.HISTOGRAM_BIN_BYTES))
    routes = planning.plan(["average_distance", "energy"], sizes, 8, available=16e9)
    assert set(routes) == {"average_distance", "energy"}  # fits in 16 GB (it took 12 GB + fail)
    with pytest.raises(MemoryError, match=r"(?s)kept per set .*10000 sets.*fewer sets per call"):
        planning.plan(["average_distance", "energy"], sizes, 8, available=kept)
    # the call itself is refused up front when memory is short (no histogram is formed)
    monkeypatch.setattr(planning, "available_memory_bytes", lambda: kept)
    with pytest.raises(MemoryError, match=r"kept per set for the whole condition \(10000 sets\)"):
        dp.profiles(
            _tiny_sets(10_000), representation="r", distance="euclidean",
            families=["average_distance"],
        )  # fmt: skip


# --- exact duplicates: passes over the distinct rows and their counts --------------------------


def _with_duplicates(k: int, n: int, d: int = 3, seed: int = 0) -> np.ndarray:
    """n rows drawn (with repeats) from k distinct ones, every distinct row at least once."""
    rng = np.random.default_rng(seed)
    U = rng.normal(size=(k, d))
    pick = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    return U[rng.permutation(pick)]


def _brute_circles(D: np.ndarray, tau: float) -> int:
    """Largest set of rows pairwise farther apart than tau, by trying every subset."""
    n, best = D.shape[0], 1
    for mask in range(1, 2**n):
        rows = [i for i in range(n) if mask >> i & 1]
        if len(rows) > best and all(D[a, b] > tau for a in rows for b in rows if a < b):
            best = len(rows)
    return best


def test_duplicates_give_the_profiles_of_all_their_pairs():
    from scipy.spatial.distance import pdist, squareform

    X = _with_duplicates(5, 13)
    assert len({tuple(r) for r in X}) == 5  # collapsed: 5 of 13 rows are distinct
    tree = dp.profiles(
        {"a": X}, representation="r", distance="euclidean", n_boot=0,
        families=["richness", "average_distance", "circles"], n_points=100,  # the fixed grid
    )  # fmt: skip
    ds = tree["r/euclidean"].ds
    d = pdist(X)  # every one of the 78 pairs, those of copies (at distance 0) included
    assert int(ds["richness"][0]) == 5
    assert float(ds["average_distance"][0]) == pytest.approx(d.mean(), rel=1e-12)
    # the grid is the quantiles of all the pairs (zeros of the copies included), as before
    ref_grid = np.unique(np.concatenate([[0.0], np.quantile(d, np.linspace(0, 1, 99))]))
    np.testing.assert_allclose(ds["tau"].values, ref_grid, rtol=1e-12)
    D = squareform(d)
    for tau in ds["tau"].values[::7]:
        assert int(ds["circles"].sel(tau=tau)[0]) == _brute_circles(D, tau)


def test_the_weighted_average_distance_influence_is_that_of_all_rows():
    from scipy.spatial.distance import pdist, squareform

    X = _with_duplicates(4, 40, seed=2)
    tree = dp.profiles(
        {"a": X}, representation="r", distance="euclidean", families=["average_distance"]
    )
    ds = tree["r/euclidean"].ds
    D = squareform(pdist(X))
    # each sample's influence (its mean distance to the others, centred), brute force
    rows = D.sum(axis=1) / (len(X) - 1)
    h = 2 * (rows - rows.mean())
    se = np.sqrt(np.sum(h**2)) / len(X)
    reps = ds["average_distance_boot"].values[0]
    assert np.std(reps) == pytest.approx(se, rel=0.15)  # 200 normal draws: about 5% off


def test_a_million_copies_take_seconds_not_hours():
    import time

    X = np.repeat(np.random.default_rng(0).normal(size=(2, 16)), 500_000, axis=0)
    start = time.perf_counter()
    tree = dp.profiles(
        {"a": X}, representation="r", distance="euclidean",
        families=["richness", "average_distance", "circles"], max_seconds=60,
    )  # fmt: skip
    assert time.perf_counter() - start < 60  # an O(n²) pass of 5e11 pairs before: ~30 hours
    ds = tree["r/euclidean"].ds
    n = 1_000_000
    gap = float(np.linalg.norm(X[0] - X[-1]))
    assert int(ds["richness"][0]) == 2
    # 500,000² of the n(n - 1)/2 pairs are at distance `gap`, the others are copies
    assert float(ds["average_distance"][0]) == pytest.approx(
        gap * 500_000**2 / (n * (n - 1) / 2), rel=1e-12
    )
    assert ds["circles"].values[0].max() == 2 and ds["circles"].values[0].min() == 1


# --- long passes are estimated and refused up front ---------------------------------------------


def test_a_long_pass_over_the_pairs_is_refused_up_front_with_its_estimate():
    import time

    X = np.random.default_rng(0).normal(size=(12_000, 16))  # 7.2e7 pairs, all distinct
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"(?s)would take about \d+ s for its passes over the "
                       r"pairs.*max_seconds=0.01.*leave out 'average_distance'"):  # fmt: skip
        dp.profiles(
            {"a": X}, representation="r", distance="euclidean",
            families=["average_distance"], max_seconds=0.01,
        )  # fmt: skip
    assert time.perf_counter() - start < 0.5 * 60  # refused after a probe, not after the pass
    # the cosine average distance is a closed form (O(n d)): nothing to refuse
    tree = dp.profiles(
        {"a": X}, representation="r", distance="cosine", families=["average_distance"],
        max_seconds=0.01, n_boot=0,
    )  # fmt: skip
    assert np.isfinite(tree["r/cosine"]["average_distance"].values).all()


# --- compare and summary of many sets -----------------------------------------------------------


def _many_set_comparison(k: int):
    rng = np.random.default_rng(3)
    sets = {f"g{i:02d}": rng.normal(size=(40, 3)) * (1.0 + 0.1 * i) for i in range(k)}
    tree = dp.profiles(
        sets, representation="r", distance="euclidean", families=["average_distance", "energy"]
    )
    return dp.compare(tree)


def test_a_summary_of_many_sets_leads_with_a_ranking_and_counts_the_findings():
    import time

    from diversity_profiles.comparison import summary

    cmp = _many_set_comparison(30)  # 435 pairs
    start = time.perf_counter()
    text = summary(cmp)
    assert time.perf_counter() - start < 5  # every pair through xarray took ~20 s here
    ds = cmp["r/euclidean"].to_dataset()
    labels = [str(s) for s in ds.set_a.values]
    # not every pair: no pair block ("these samples ...") but one ranking line per family
    assert "these samples (no confidence):" not in text
    assert "summary(comparison, every_pair=True)" in text
    finding = ds["finding"].sel(family="average_distance").values
    wins, losses = (finding == "dominates").sum(axis=1), (finding == "dominated").sum(axis=1)
    assert wins.sum() > 0  # the sets differ enough for findings to rank
    line = next(x for x in text.splitlines() if x.startswith("- **average pairwise distance**: "))
    # the sets named in the ranking's order: most dominated minus dominating first
    score = {labels[i]: int(wins[i] - losses[i]) for i in range(30)}
    named = re.findall(r"g\d\d", line)
    assert [score[x] for x in named] == sorted((score[x] for x in named), reverse=True)
    top = max(range(30), key=lambda i: (score[labels[i]], -i))
    first_group = line.split(": ", 1)[1].split(")")[0] + ")"
    assert labels[top] in first_group and first_group.endswith(f"(+{wins[top]} −{losses[top]})")
    # the count of pairs with a finding in some family, from the comparison itself
    claims = np.isin(ds["finding"].values, ["dominates", "dominated", "crosses"]).any(axis=2)
    assert f"{int(np.triu(claims, 1).sum())} of the 435 pairs hold a finding" in text
    # every pair on request, fast as well
    start = time.perf_counter()
    full = summary(cmp, every_pair=True)
    assert time.perf_counter() - start < 10
    assert full.count("these samples (no confidence):") == 435
    with pytest.raises(TypeError, match="'every_pair' argument of summary"):
        summary(cmp, every_pair="yes")


def test_a_summary_of_a_few_sets_still_writes_every_pair():
    from diversity_profiles.comparison import summary

    text = summary(_many_set_comparison(4))
    assert text.count("these samples (no confidence):") == 6
    assert "ranked per family" not in text


def _familywise_z_by_loops(centred, level, seed=0):
    """The family-wise z written out point by point (an independent reference)."""
    from diversity_profiles.comparison._verdict import RECOMBINATIONS

    rng = np.random.default_rng(seed)
    draws, sds = [], []
    for c in centred:
        ok = np.isfinite(c).all(axis=0)
        clean = np.where(ok, c, 0.0)
        w = rng.standard_normal((RECOMBINATIONS, c.shape[0]))
        draws.append(w @ clean / np.sqrt(c.shape[0] - 1))
        sds.append(np.where(ok, np.sum(clean**2, axis=0) / (c.shape[0] - 1), np.nan))
    stat = np.zeros(RECOMBINATIONS)
    for i in range(len(centred)):
        for j in range(i + 1, len(centred)):
            for p in range(centred[0].shape[1]):
                sd = np.sqrt(sds[i][p] + sds[j][p])
                if np.isfinite(sd) and sd > 0:
                    stat = np.maximum(stat, np.abs(draws[i][:, p] - draws[j][:, p]) / sd)
    return float(np.quantile(stat, level))


def test_the_familywise_z_is_that_of_every_pair_and_point():
    from diversity_profiles.comparison._verdict import familywise_z

    rng = np.random.default_rng(5)
    centred = [rng.standard_normal((30, 7)) * (1 + k) for k in range(5)]
    centred[1][:, 2] = np.nan  # a point without a band
    centred[2][:, 4] = 0.0  # ... and one that never varies
    assert familywise_z(centred, 0.99) == pytest.approx(
        _familywise_z_by_loops(centred, 0.99), rel=1e-12
    )
