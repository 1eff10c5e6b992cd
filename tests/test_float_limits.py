"""Inputs near the limits of float64, unusual array types, argument checks and resource
estimates (issue 10). References are independent: mpmath at 50 digits, scale
invariance of the scale-free families, closed forms."""

import mpmath
import numpy as np
import pytest

import diversity_profiles as dp

mpmath.mp.dps = 50
RNG = np.random.default_rng(10)
X = RNG.normal(size=(30, 5))


def _mp_distances(Y):
    rows = [[mpmath.mpf(float(v)) for v in r] for r in Y]
    n = len(rows)
    return [
        [
            mpmath.sqrt(sum((a - b) ** 2 for a, b in zip(rows[i], rows[j], strict=True)))
            for j in range(n)
        ]
        for i in range(n)
    ]


def _profile(sets, distance, families):
    tree = dp.profiles(sets, representation="r", distance=distance, families=families)
    return tree[f"r/{distance}"].to_dataset()


@pytest.mark.parametrize("scale", [1e160, 1e-160, 1e300])
def test_cosine_rows_with_extreme_norms_keep_every_sample(scale):
    ds = _profile({"a": X * scale, "b": X}, "cosine", ["richness", "average_distance", "vendi"])
    # cosine is scale-free: both sets are the same set
    assert ds.richness.values.tolist() == [30, 30]
    assert ds.average_distance.values[0] == pytest.approx(ds.average_distance.values[1], rel=1e-12)
    np.testing.assert_allclose(ds.vendi.values[0], ds.vendi.values[1], rtol=1e-9)
    D = dp.pairwise_distances(X * scale, "cosine")
    np.testing.assert_allclose(D, dp.pairwise_distances(X, "cosine"), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("scale", [1e-170, 1e170, 1e-300])
def test_euclidean_distances_at_extreme_scales_match_high_precision(scale):
    Y = X[:8] * scale
    D = dp.pairwise_distances(Y)
    ref = _mp_distances(Y)
    for i in range(8):
        for j in range(8):
            assert D[i, j] == pytest.approx(float(ref[i][j]), rel=1e-13, abs=0)


def test_near_duplicates_differing_by_1e_minus_170_are_distinct_and_at_the_right_distance():
    Y = np.array([[1.0, 0.0], [1.0, 1e-170], [0.0, 1.0]])
    D = dp.pairwise_distances(Y)
    assert D[0, 1] == pytest.approx(1e-170, rel=1e-15, abs=0)
    assert dp.richness(Y) == 3


@pytest.mark.parametrize("scale", [1e-170, 1e170])
def test_profiles_scale_free_families_do_not_depend_on_units(scale):
    fams = ["richness", "average_distance", "vendi", "magnitude", "circles"]
    Z = RNG.normal(size=(30, 5))
    ref = _profile({"a": X, "b": Z}, "euclidean", fams)
    got = _profile({"a": X * scale, "b": Z * scale}, "euclidean", fams)
    assert got.richness.values.tolist() == [30, 30]
    np.testing.assert_allclose(
        got.average_distance.values / scale, ref.average_distance, rtol=1e-12
    )
    np.testing.assert_allclose(got.vendi.values, ref.vendi.values, rtol=1e-9)
    np.testing.assert_allclose(got.t.values * scale, ref.t.values, rtol=1e-9)
    np.testing.assert_allclose(got.magnitude.values, ref.magnitude.values, rtol=1e-9)
    np.testing.assert_array_equal(got.circles.values, ref.circles.values)


def test_energy_of_tiny_distances_is_exact_where_representable_and_refused_where_not():
    Y = X[:6] * 1e-170
    ref = _mp_distances(Y)
    pairs = [ref[i][j] for i in range(6) for j in range(i + 1, 6)]
    expected = -float(sum(d**-1 for d in pairs) / len(pairs))  # about -1e170
    assert dp.energy(dp.pairwise_distances(Y), 1.0) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match=r"s = 3 overflows float64"):
        dp.energy(dp.pairwise_distances(Y), 3.0)
    # The default grid stops where float64 stops (s ≈ 1.76 here), exact up to there ...
    ds = _profile({"a": Y, "b": X[6:12] * 1e-170}, "euclidean", ["energy"])
    s_end = float(ds.s.values[-1])
    assert 1.5 < s_end < 1.8 and "capped" in ds.s.attrs["domain"]
    mp_end = -sum(d ** -mpmath.mpf(s_end) for d in pairs) / len(pairs)
    assert float(ds.energy.values[0, -1]) == pytest.approx(float(mp_end), rel=1e-12)
    # ... and a user's exponent beyond it is refused, naming the argument
    with pytest.raises(ValueError, match=r"overflows float64.*domains\['energy'\]"):
        dp.profiles(
            {"a": Y},
            representation="r",
            distance="euclidean",
            families=["energy"],
            domains={"energy": [1.0, 3.0]},
        )


def test_energy_profile_histogram_follows_the_data_scale():
    # distances ~1e-25 lie below the old fixed range 2**-64 .. 2**64, which clipped them
    ds = _profile({"a": X[:10] * 1e-25, "b": X[10:20] * 1e-25}, "euclidean", ["energy"])
    D = dp.pairwise_distances(X[:10] * 1e-25)
    s = ds.s.values[[0, len(ds.s) // 2]]
    np.testing.assert_allclose(ds.energy.values[0, [0, len(ds.s) // 2]], dp.energy(D, s), rtol=1e-6)


@pytest.mark.parametrize("scale", [1e19, 1e-30, 1e30])
@pytest.mark.parametrize("normalize", [True, False])
def test_vendi_dual_float32_extremes_match_float64(scale, normalize):
    Y = X * scale
    ref = dp.vendi_score_dual(X, normalize=normalize)
    got = dp.vendi_score_dual(Y.astype(np.float32), normalize=normalize)
    assert got == pytest.approx(ref, rel=1e-5)
    assert dp.vendi_score_dual(Y, normalize=normalize) == pytest.approx(ref, rel=1e-12)


def test_gaussian_bandwidth_far_below_the_distances_gives_the_identity_kernel():
    tree = dp.profiles(
        {"a": X, "b": X[:10]},
        representation="r",
        distance="euclidean",
        families=["vendi"],
        bandwidth=1e-300,
    )
    np.testing.assert_allclose(tree["r/euclidean"].vendi.values[:, :3], [[30] * 3, [10] * 3])


@pytest.mark.parametrize(
    "func",
    [
        lambda Z: dp.pairwise_distances(Z),
        lambda Z: dp.vendi_score_dual(Z),
        lambda Z: dp.richness(Z),
        lambda Z: dp.profiles({"a": Z, "b": Z}, representation="r", distance="cosine"),
    ],
)
def test_complex_input_is_refused_naming_the_argument(func):
    with pytest.raises(TypeError, match=r"must hold real numbers\. Got complex"):
        func(X + 1j)


def test_strings_and_object_complex_are_refused():
    with pytest.raises(TypeError, match="'X' argument of pairwise_distances must hold real"):
        dp.pairwise_distances(np.array([["1", "2"], ["3", "4"]]))
    with pytest.raises(TypeError, match="real numbers"):
        dp.energy(np.array([[0, 1j], [1j, 0]], dtype=object), 1.0)


def test_bool_embeddings_are_zero_one():
    B = np.array([[True, False], [False, True]])
    np.testing.assert_array_equal(dp.pairwise_distances(B, "tanimoto"), [[0, 1], [1, 0]])


def test_sparse_matrices_are_densified_or_refused():
    sparse = pytest.importorskip("scipy.sparse")
    S = sparse.csr_matrix(X)
    np.testing.assert_allclose(dp.pairwise_distances(S), dp.pairwise_distances(X))
    assert dp.vendi_score_dual(S) == pytest.approx(dp.vendi_score_dual(X), rel=1e-12)
    huge = sparse.csr_matrix((10**7, 10**6))
    with pytest.raises(MemoryError, match=r"sparse 10000000 × 1000000 .*TruncatedSVD"):
        dp.pairwise_distances(huge)


S = {"a": X, "b": RNG.normal(size=(20, 5))}


@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        ({"richness_tol": -1}, ValueError, "'richness_tol' argument of profiles"),
        ({"richness_tol": float("nan")}, ValueError, "'richness_tol' argument of profiles"),
        ({"families": []}, ValueError, "'families' argument of profiles"),
        ({"seed": 1.5}, TypeError, "'seed' argument of profiles"),
        ({"bandwidth": [1, 2]}, TypeError, "'bandwidth' argument of profiles"),
        ({"bandwidth": float("nan")}, ValueError, "'bandwidth' argument of profiles"),
        ({"ci": "0.9"}, TypeError, "'ci' argument of profiles"),
        ({"domains": [1, 2]}, TypeError, "'domains' argument of profiles"),
        ({"similarities": 3}, TypeError, "'similarities' argument of profiles"),
        ({"n_boot": True}, ValueError, "'n_boot' argument of profiles"),
        ({"max_seconds": -1}, ValueError, "'max_seconds' argument of profiles"),
    ],
)
def test_profiles_arguments_are_checked(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        dp.profiles(S, representation="r", distance="euclidean", **kwargs)


def test_compare_and_richness_tolerances_are_checked():
    tree = dp.profiles(S, representation="r", distance="euclidean", families="richness")
    with pytest.raises(ValueError, match="'rtol' argument of compare"):
        dp.compare(tree, rtol=float("nan"))
    with pytest.raises(TypeError, match="'atol' argument of compare"):
        dp.compare(tree, atol="0")
    with pytest.raises(TypeError, match="'tol' argument of richness"):
        dp.richness(X, tol="0.1")


def test_bootstrap_beyond_the_time_budget_is_refused_with_an_estimate():
    with pytest.raises(ValueError, match=r"would take about \d+ s for n_boot=100000 .*max_seconds"):
        dp.profiles(
            S,
            representation="r",
            distance="euclidean",
            families=["average_distance"],
            n_boot=100_000,
            max_seconds=0.5,
        )


def test_bootstrap_whose_replicates_cannot_fit_in_memory_is_refused():
    with pytest.raises(MemoryError, match="Lower 'n_boot'"):
        dp.profiles(S, representation="r", distance="euclidean", n_boot=10**9)


def test_pixel_vectors_refuses_a_size_that_cannot_fit():
    images = pytest.importorskip("diversity_profiles.featurisers.images")
    pytest.importorskip("PIL")
    with pytest.raises(MemoryError, match=r"'size' argument of pixel_vectors .*smaller size"):
        images.pixel_vectors(np.zeros((2, 4, 4), np.uint8), size=(10**5, 10**5))


def test_long_resampling_gets_a_progress_bar_and_short_work_does_not():
    import time

    from diversity_profiles.core._budget import plan_repeats

    def one():
        time.sleep(0.01)

    kw = {"arg": "n_boot", "func": "profiles", "result_bytes": 0}
    assert plan_repeats(one, 1000, max_seconds=None, **kw) is True  # ~10 s: show progress
    assert plan_repeats(one, 10, max_seconds=None, **kw) is False
    with pytest.raises(ValueError, match=r"about 10 s for n_boot=1000 .*max_seconds=1"):
        plan_repeats(one, 1000, max_seconds=1, **kw)


def test_plain_progress_line_shows_an_eta(capsys):
    from diversity_profiles.core._progress import _plain

    assert list(_plain(range(3), 3, "resampling")) == [0, 1, 2]
    err = capsys.readouterr().err
    assert "resampling: 3/3" in err and "ETA 0 s" in err


def test_bootstrap_of_two_samples_survives_resamples_without_a_pair():
    # a resample of two samples draws the same one twice half of the time: no pair at all
    sets = {"a": [[0.0], [1.0]], "b": [[0.0], [2.0]]}
    tree = dp.profiles(
        sets,
        representation="r",
        distance="euclidean",
        families=["energy", "average_distance"],
        n_boot=20,
    )
    ds = tree["r/euclidean"].to_dataset()
    boot = ds.average_distance_boot.values
    assert np.isnan(boot).any() and set(np.unique(boot[~np.isnan(boot)])) <= {1.0, 2.0}


def test_energy_profile_refuses_distances_beyond_the_histogram_range():
    # The histogram (the large-n path's values) cannot hold a pair 1e25 times closer than
    # the others; the exact path sums the pairs themselves and is exact there.
    sets = {"a": [[0.0], [1e-25], [1.0]], "b": [[0.0], [0.5], [1.0]]}
    with pytest.raises(ValueError, match="more than a factor 2\\*\\*64 away"):
        dp.profiles(
            sets, representation="r", distance="euclidean", families=["energy"], method="large"
        )
    ds = _profile(sets, "euclidean", ["energy"])
    s = ds.s.values
    assert ds.energy.values[0] == pytest.approx(-(1e25**s + 2) / 3, rel=1e-12)


def test_richness_of_object_arrays_counts_rows_or_refuses():
    assert dp.richness(np.array(["a", "b", "a"], dtype=object)) == 2
    with pytest.raises(ValueError, match="'X' argument of richness is empty"):
        dp.richness(np.array([], dtype=object))
    with pytest.raises(TypeError, match="'X' argument of richness must hold real numbers"):
        dp.richness(np.array([[1, "a"], [1, "a"]], dtype=object))
    with pytest.raises(TypeError, match=r"hashable items .* type list"):
        dp.richness([["a"], "b"])
