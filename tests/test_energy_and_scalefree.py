"""Energy, the log-distance histogram, average distance and richness."""

import math
import warnings

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

import diversity_profiles as dp
from diversity_profiles.engines._histogram import LogDistanceHistogram
from diversity_profiles.families._energy import energy_from_histogram, energy_scale_range


def direct_energy(points_1d, s):
    """-(1/(n(n-1))) sum_{i != j} |x_i - x_j|^-s with math.fsum over pairs."""
    n = len(points_1d)
    terms = [
        abs(a - b) ** -s for i, a in enumerate(points_1d) for j, b in enumerate(points_1d) if i != j
    ]
    return -math.fsum(terms) / (n * (n - 1))


def test_energy_matches_a_direct_sum():
    x = [0.0, 0.3, 1.7, 2.0, 5.5]
    D = np.abs(np.subtract.outer(x, x))
    for s in (0.1, 0.5, 1.0, 2.0, 7.0):
        assert dp.energy(D, s) == pytest.approx(direct_energy(x, s), rel=1e-13)
    assert isinstance(dp.energy(D, 1.0), float)
    assert dp.energy(D, [1.0, 2.0]).shape == (2,)


def test_energy_large_exponent_does_not_overflow():
    x = [0.0, 1e-3, 1.0]
    D = np.abs(np.subtract.outer(x, x))
    # Dominated by the closest pair: 2 * (1e-3)^-60 / 6 = 1e180 / 3.
    assert dp.energy(D, 60.0) == pytest.approx(-(1e180) / 3, rel=1e-12)


def test_coincident_points_give_minus_inf_with_a_warning():
    D = squareform(pdist(np.array([[0.0], [0.0], [1.0]])))
    with pytest.warns(
        dp.CoincidentPointsWarning, match=r"1 pair\(s\) of samples are at distance 0"
    ):
        assert dp.energy(D, 1.0) == -np.inf


def test_energy_bad_input():
    with pytest.raises(ValueError, match=r"'s' parameter of energy must be in \(0, inf\)"):
        dp.energy(np.array([[0.0, 1], [1, 0]]), 0.0)
    with pytest.raises(ValueError, match=r"at least 2 sample"):
        dp.energy([[0.0]], 1.0)
    with pytest.raises(ValueError, match=r"non-negative distances"):
        dp.energy([[0.0, -1], [-1, 0]], 1.0)


def test_histogram_energy_within_1e6_of_the_exact_sum():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 32))
    d = pdist(X)
    hist = LogDistanceHistogram()
    hist.add(d)
    ss = np.geomspace(0.05, 10, 40)
    exact = np.array([-np.mean(d**-s) for s in ss])
    assert energy_from_histogram(hist, ss) == pytest.approx(exact, rel=1e-6)
    assert hist.mean_distance() == pytest.approx(d.mean(), rel=1e-12)


def test_histogram_added_in_pieces_is_the_block_added_whole(monkeypatch):
    """A block larger than ADD_PIECE is added piece by piece, with the anchor of the whole
    block: the same occupied bins and counts as one piece (pieces of 997 pairs against one
    of all 79,800), sums to rounding, the mean of d^-s within 1e-6 of the exact one, weights too."""
    from diversity_profiles.engines import _histogram

    rng = np.random.default_rng(5)
    d = np.sort(pdist(rng.standard_normal((400, 32))))  # first piece below 8, the rest to 13
    d[[3, 500]] = 0.0  # duplicates: counted apart, never binned
    w = rng.uniform(0.5, 2.0, d.size)
    whole, whole_w = LogDistanceHistogram(), LogDistanceHistogram()
    whole.add(d)
    whole_w.add(d, w)
    monkeypatch.setattr(_histogram, "ADD_PIECE", 997)
    pieces, pieces_w = LogDistanceHistogram(), LogDistanceHistogram()
    pieces.add(d.astype(np.float32).astype(np.float64))  # float32 blocks are cast per piece
    pieces.add(d)
    pieces_w.add(d, w)
    twice = LogDistanceHistogram()
    twice.add(np.r_[d, d])
    assert pieces.anchor == whole.anchor
    assert pieces.bins.tolist() == twice.bins.tolist()
    assert pieces_w.bins.tolist() == whole_w.bins.tolist()
    assert pieces_w._counts == pytest.approx(whole_w._counts, rel=1e-12)
    assert pieces.n_zero == 4 and pieces_w.n_pairs == pytest.approx(w.sum(), rel=1e-12)
    ss = np.geomspace(0.05, 10, 20)
    keep = d > 0
    exact = np.array([np.sum(w[keep] * d[keep] ** -s) / w[keep].sum() for s in ss])
    assert pieces_w.mean_power(ss) == pytest.approx(exact, rel=1e-6)


def test_histogram_quantiles_track_the_data():
    rng = np.random.default_rng(1)
    d = rng.lognormal(0.0, 1.0, 100_000)
    hist = LogDistanceHistogram()
    for chunk in np.array_split(d, 7):  # filled block by block
        hist.add(chunk)
    probs = np.array([0.01, 0.1, 0.5, 0.9, 0.99])
    assert hist.quantile(probs) == pytest.approx(np.quantile(d, probs), rel=5e-3)


def test_energy_domain_spans_the_change_of_the_curve():
    rng = np.random.default_rng(2)
    hist = LogDistanceHistogram()
    hist.add(pdist(rng.standard_normal((300, 8))))
    lo, hi = energy_scale_range([hist])
    values = energy_from_histogram(hist, np.array([lo, hi]))
    # Near s_lo the energy is close to -1 (all d^-s ~ 1); by s_hi it is far from it.
    assert abs(values[0] + 1) < 0.2
    assert abs(values[1] + 1) > 1.0 or abs(values[1]) < 0.2


def test_average_distance_and_richness():
    assert dp.average_distance([[0, 1, 2], [1, 0, 1], [2, 1, 0]]) == pytest.approx(4 / 3)
    assert dp.richness([[0, 0], [0, 0], [1, 0]]) == 2
    # Chains merge: 0 ~ 0.5e-6 ~ 1e-6 within tol=0.6e-6, so three rows are one item.
    assert dp.richness([[0.0], [0.5e-6], [1e-6], [1.0]], tol=0.6e-6) == 2
    assert dp.richness(["CCO", "CCO", "c1ccccc1"]) == 2
    with pytest.raises(ValueError, match=r"'tol' argument of richness"):
        dp.richness([[0.0]], tol=-1)
    with pytest.raises(ValueError, match=r"at least 2 sample"):
        dp.average_distance([[0.0]])


def test_distances_match_scipy_and_keep_near_duplicates_accurate():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 6)) * 100
    X[5] = X[9]
    X[7] = X[8] + 1e-9
    for name in ("euclidean", "cosine"):
        D = dp.pairwise_distances(X, name)
        ref = squareform(pdist(X, name))
        off = ~np.eye(40, dtype=bool)
        far = ref > 1e-3
        assert D[far & off] == pytest.approx(ref[far & off], rel=1e-10)
        assert D[5, 9] == 0.0 and D[9, 5] == 0.0
    # 1e-9 apart in each of 6 coordinates: the GEMM identity would give noise of ~1e-5 here.
    assert dp.pairwise_distances(X, "euclidean")[7, 8] == pytest.approx(1e-9 * np.sqrt(6), rel=1e-6)
    B = rng.random((30, 64)) < 0.3
    assert dp.pairwise_distances(B, "tanimoto") == pytest.approx(
        squareform(pdist(B, "jaccard")), abs=1e-15
    )


def test_distance_errors_name_the_fix():
    with pytest.raises(
        ValueError,
        match=r"'distance' argument of pairwise_distances must be one of "
        r"'euclidean', 'cosine', 'tanimoto', 'jaccard'. Got 'manhattan'",
    ):
        dp.pairwise_distances([[0.0], [1.0]], "manhattan")
    with pytest.raises(ValueError, match=r"binary fingerprints"):
        dp.pairwise_distances([[0.5, 1.0], [1.0, 0.0]], "tanimoto")
    with pytest.raises(ValueError, match=r"all zeros"):
        dp.pairwise_distances([[0.0, 0.0], [1.0, 0.0]], "cosine")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            ValueError, match=r"non-finite value\(s\) \(NaN\), first at index \(1, 0\)"
        ):
            dp.pairwise_distances([[0.0, 1.0], [np.nan, 0.0]])
