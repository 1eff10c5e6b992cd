"""The two-sample permutation test (``dp.permutation_test``): exact size, power, the
smallest p-value, a known answer, Holm's adjustment, its errors, and that relabelling
slices one pooled distance matrix instead of recomputing distances.

Run alone: ``python -m pytest tests/test_permutation.py`` (about a minute).
"""

import numpy as np
import pytest
from scipy import stats

import diversity_profiles as dp
from diversity_profiles.pipeline import holm, rank_p_value, studentised_sup

PATH = "g/euclidean"
LEVELS = (0.05, 0.1, 0.25)


def gaussian_pair(rng, n=30, d=3, scale_b=1.0, n_b=None):
    return {
        "A": rng.standard_normal((n, d)),
        "B": scale_b * rng.standard_normal((n_b or n, d)),
    }


def run(sets, families, R, seed=0, n_points=12, **kwargs):
    profiler = dp.Profiler(sets, representation="g", distance="euclidean")
    # No replicates: the permutation test recomputes the curves itself and never reads them.
    tree = profiler.profiles(families=families, n_points=n_points, n_boot=0)
    return dp.permutation_test(tree, profiler, n_permutations=R, seed=seed, **kwargs)[PATH]


def outside_binomial(p_values, reps):
    """Levels whose share of p <= level falls outside the central 99.9% binomial range."""
    p_values = np.asarray(p_values)
    bad = []
    for level in LEVELS:
        lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, level)
        count = int(np.sum(p_values <= level + 1e-12))
        if not lo <= count <= hi:
            bad.append((level, count, (int(lo), int(hi))))
    return bad


@pytest.fixture(scope="module")
def power_p_values():
    """p-values of sets with clearly different spread (scale 1 vs 2), 20 repetitions."""
    rng = np.random.default_rng(2024)
    fams = ["vendi", "energy", "average_distance"]
    out = {f: [] for f in [*fams, "any"]}
    for _ in range(20):
        res = run(gaussian_pair(rng, scale_b=2.0), fams, R=39)
        pair = res.sel(set_a="A", set_b="B")
        for f in fams:
            out[f].append(float(pair.p_value.sel(family=f)))
        out["any"].append(float(pair.p_any_family))
    return out


def test_p_values_are_uniform_when_both_sets_come_from_one_distribution(power_p_values):
    # Exactness: with R = 39 the p-value is k/40 and P(p <= k/40) = k/40 exactly under the
    # null, so 0.05, 0.1 and 0.25 are attained levels. 200 repetitions, n = 30 per set.
    rng = np.random.default_rng(7)
    reps, fams = 200, ["vendi", "magnitude"]
    found = {f: [] for f in [*fams, "any"]}
    for _ in range(reps):
        pair = run(gaussian_pair(rng), fams, R=39).sel(set_a="A", set_b="B")
        for f in fams:
            found[f].append(float(pair.p_value.sel(family=f)))
        found["any"].append(float(pair.p_any_family))
    for name, p_values in found.items():
        assert outside_binomial(p_values, reps) == [], name
        assert min(p_values) >= 1 / 40
    # The check can fail: the same criterion rejects p-values that are not uniform
    # (those of the power case, rescaled to as many repetitions).
    assert outside_binomial(np.resize(power_p_values["vendi"], reps), reps) != []


def test_clearly_different_spread_is_found(power_p_values):
    for name, p_values in power_p_values.items():
        assert np.mean(np.asarray(p_values) < 0.05) >= 0.9, (name, p_values)


def test_the_smallest_p_value_is_one_over_r_plus_one():
    rng = np.random.default_rng(3)
    res = run(gaussian_pair(rng, scale_b=10.0), ["vendi", "average_distance"], R=19)
    p = res.p_value.sel(set_a="A", set_b="B").values
    assert np.all(p >= 1 / 20)
    assert p.tolist() == [1 / 20, 1 / 20]
    assert float(res.p_any_family.sel(set_a="A", set_b="B")) == 1 / 20
    assert res.attrs["n_permutations"] == 19


def test_identical_sets_give_statistic_zero_and_p_one():
    X = np.random.default_rng(4).standard_normal((25, 3))
    res = run({"A": X, "B": X.copy()}, ["vendi", "magnitude", "average_distance"], R=29)
    pair = res.sel(set_a="A", set_b="B")
    assert np.all(pair.points_used.values > 0)  # the relabellings do vary
    np.testing.assert_allclose(pair.statistic.values, 0.0, atol=1e-6)
    assert pair.p_value.values.tolist() == [1.0, 1.0, 1.0]
    assert pair.p_holm.values.tolist() == [1.0, 1.0, 1.0]
    assert float(pair.p_any_family) == 1.0


def test_the_result_is_symmetric_reproducible_and_nan_on_the_diagonal():
    rng = np.random.default_rng(5)
    sets = {**gaussian_pair(rng, n=20, n_b=27), "C": 1.5 * rng.standard_normal((22, 3))}
    first = run(sets, ["vendi", "circles", "richness"], R=19, seed=11)
    again = run(sets, ["vendi", "circles", "richness"], R=19, seed=11)
    for var in ("p_value", "p_holm", "statistic", "p_any_family"):
        values = first[var].values
        np.testing.assert_array_equal(values, np.swapaxes(values, 0, 1))
        np.testing.assert_array_equal(values, again[var].values)
        assert np.isnan(values[np.arange(3), np.arange(3)]).all()
    # Richness of distinct continuous samples is n_a - n_b under every relabelling: no
    # point varies, so the family gets T = 0, p = 1 (the samples cannot speak to it).
    rich = first.sel(family="richness", set_a="A", set_b="B")
    assert (int(rich.points_used), float(rich.statistic), float(rich.p_value)) == (0, 0.0, 1.0)
    assert first.sizes["family"] == 3 and first.attrs["seed"] == 11


def test_holm_matches_a_hand_computation():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> running max
    np.testing.assert_allclose(holm(p), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(holm(np.array([0.5, 0.9])), [1.0, 1.0])


def test_p_holm_adjusts_every_pair_and_family_once():
    rng = np.random.default_rng(6)
    sets = {**gaussian_pair(rng, n=20), "C": 3.0 * rng.standard_normal((20, 3))}
    res = run(sets, ["vendi", "magnitude"], R=19)
    upper = np.triu_indices(3, k=1)
    p = res.p_value.values[upper]  # (pair, family), each unordered pair once
    np.testing.assert_allclose(res.p_holm.values[upper], holm(p.ravel()).reshape(p.shape))
    assert res.attrs["p_holm"].startswith("Holm over all 6 ")


def test_the_helpers_follow_their_formulas():
    assert rank_p_value(np.array([2.0, 3.0, 1.0, 2.0])) == 3 / 4  # ties count against
    T, used = studentised_sup(np.array([[1.0, 5.0], [3.0, 5.0], [2.0, 5.0]]), np.ones(2), False)
    assert used == 1  # the constant second point is left out
    np.testing.assert_allclose(T[:, 0], np.array([1.0, 1.0, 0.0]) / np.sqrt(2 / 3))
    T, used = studentised_sup(np.array([[1.0, np.inf], [2.0, 1.0]]), np.ones(2), False)
    assert used == 1


def test_relabelling_slices_one_pooled_distance_matrix(monkeypatch):
    import diversity_profiles.pipeline._condition as condition

    rng = np.random.default_rng(8)
    sets = {**gaussian_pair(rng, n=15), "C": rng.standard_normal((12, 3))}
    profiler = dp.Profiler(sets, representation="g", distance="euclidean")
    tree = profiler.profiles(families=["magnitude", "energy", "vendi"], n_points=8)
    calls = []
    real = condition.distance_matrix

    def counted(X, distance):
        calls.append(X.shape[0])
        return real(X, distance)

    def no_stream(*args, **kwargs):
        raise AssertionError("a relabelled half streamed its own distances")

    monkeypatch.setattr(condition, "distance_matrix", counted)
    monkeypatch.setattr(condition, "iter_distance_blocks", no_stream)
    dp.permutation_test(tree, profiler, n_permutations=9)
    assert sorted(calls) == [27, 27, 30]  # one pooled matrix per pair, never again


def test_errors_say_what_is_allowed():
    rng = np.random.default_rng(9)
    sets = gaussian_pair(rng, n=12)
    profiler = dp.Profiler(sets, representation="g", distance="euclidean")
    tree = profiler.profiles(families=["vendi", "energy"], n_points=6)
    other = dp.Profiler(gaussian_pair(rng, n=13), representation="g", distance="euclidean")
    with pytest.raises(ValueError, match=r"profiler.holds\(tree\) is False"):
        dp.permutation_test(other.profiles(families="vendi", n_points=6), profiler)
    with pytest.raises(ValueError, match="holds"):
        dp.permutation_test(tree, other)
    with pytest.raises(TypeError, match=r"dp\.Profiler"):
        dp.permutation_test(tree, tree)
    with pytest.raises(
        ValueError, match=r"list of registered families \('vendi'.*unknown: \['bogus'\]"
    ):
        dp.permutation_test(tree, profiler, families=["vendi", "bogus"])
    with pytest.raises(ValueError, match=r"no profiles of \['magnitude'\]"):
        dp.permutation_test(tree, profiler, families="magnitude")
    with pytest.raises(ValueError, match=r"'n_permutations'.*>= 1"):
        dp.permutation_test(tree, profiler, n_permutations=0)
    with pytest.raises(ValueError, match="condition"):
        dp.permutation_test(tree, profiler, condition="g/cosine")
    with pytest.raises(ValueError, match="max_seconds"):
        dp.permutation_test(tree, profiler, n_permutations=10**7, max_seconds=1.0)
    large = profiler.profiles(families=["energy", "vendi"], n_points=6, method="large")
    with pytest.raises(ValueError, match=r"'energy'.*route 'large'.*method='exact'"):
        dp.permutation_test(large, profiler)
    D = {k: dp.pairwise_distances(v) for k, v in sets.items()}
    given = dp.Profiler(D, representation="g", distance="precomputed")
    with pytest.raises(ValueError, match="given within-set distances"):
        dp.permutation_test(given.profiles(families="energy", n_points=6), given)


# profiles(permutations=R): the same test in the call, stored in the tree.


def test_circles_lower_bound_statistic_is_exact_under_the_null():
    """Circles enters the test through its greedy lower bound (no clique cover, no
    CP-SAT): still a fixed function of each labelling, so p is uniform under the null.
    120 repetitions, n = 30 per set, R = 19 (p = k/20: 0.05, 0.1 and 0.25 are attained)."""
    rng = np.random.default_rng(11)
    reps = 120
    p_values = [
        float(run(gaussian_pair(rng), ["circles"], R=19).p_value.sel(set_a="A", set_b="B")[0])
        for _ in range(reps)
    ]
    assert outside_binomial(p_values, reps) == []
    different = run(gaussian_pair(rng, n=40, scale_b=3.0), ["circles"], R=19)
    assert float(different.p_value.sel(set_a="A", set_b="B")[0]) == 1 / 20


def test_profiles_stores_the_test_and_compare_and_the_summary_read_it(tmp_path):
    rng = np.random.default_rng(12)
    sets = gaussian_pair(rng, n=40, scale_b=3.0)
    fams = ["vendi", "energy", "average_distance"]
    tree = dp.profiles(
        sets, representation="g", distance="euclidean", families=fams, n_points=8,
        permutations=39,
    )  # fmt: skip
    node = tree[f"{PATH}/permutation"].to_dataset()
    profiler = dp.Profiler(sets, representation="g", distance="euclidean")
    alone = dp.permutation_test(tree, profiler, n_permutations=39)[PATH].to_dataset()
    np.testing.assert_array_equal(node.p_holm.values, alone.p_holm.values)
    # 3 families, 1 pair: each p = 1/40 (scale 3 vs 1), Holm multiplies the smallest by 3
    np.testing.assert_allclose(node.p_holm.sel(set_a="A", set_b="B").values, [3 / 40] * 3)
    path = tmp_path / "tested.nc"
    tree.to_netcdf(path)
    res = dp.compare(dp.open_profiles(path))[PATH]
    assert res.attrs["n_permutations"] == 39
    np.testing.assert_array_equal(res.p_holm.values, node.p_holm.values)
    text = tree.dp.summary()
    assert (
        "Permutation test (39 relabellings per pair; exact p-values, Holm-adjusted over every "
        "pair and family): A and B differ in Vendi score (p = 0.075)" not in text
    )  # 0.075 > 0.05: not "differ"
    assert "A vs B: no difference shown (Vendi score p = 0.075" in text
    strong = dp.profiles(
        sets, representation="g", distance="euclidean", families=fams, n_points=8,
        permutations=199,
    )  # fmt: skip
    text = strong.dp.summary()
    assert "A and B differ in Vendi score (p = 0.015), energy (p = 0.015)" in text


def test_same_source_sets_show_no_difference_in_the_summary():
    rng = np.random.default_rng(13)
    tree = dp.profiles(
        gaussian_pair(rng, n=40), representation="g", distance="euclidean",
        families=["vendi", "average_distance"], n_points=8, permutations=99,
    )  # fmt: skip
    p = tree[f"{PATH}/permutation"].p_holm.sel(set_a="A", set_b="B").values
    assert np.all(p > 0.05)
    assert "A vs B: no difference shown (Vendi score p = " in tree.dp.summary()


def test_profiles_permutations_errors_name_the_argument_and_the_fix():
    rng = np.random.default_rng(14)
    sets = gaussian_pair(rng, n=12)
    common = dict(representation="g", distance="euclidean", families=["vendi"], n_points=6)
    with pytest.raises(ValueError, match=r"'permutations' argument of profiles must be an int"):
        dp.profiles(sets, permutations=-1, **common)
    with pytest.raises(ValueError, match=r"there is one set \('A'\); pass permutations=0"):
        dp.profiles({"A": sets["A"]}, permutations=9, **common)
    D = {k: dp.pairwise_distances(v) for k, v in sets.items()}
    with pytest.raises(ValueError, match=r"within-set distances only.*pass permutations=0"):
        dp.profiles(D, representation="g", distance="precomputed", permutations=9)
    with pytest.raises(ValueError, match=r"every family profiled \(vendi\) ran its large-n"):
        dp.profiles(sets, permutations=9, method="large", **common)
    with pytest.raises(ValueError, match="max_seconds"):
        dp.profiles(sets, permutations=10**7, max_seconds=1.0, **common)
