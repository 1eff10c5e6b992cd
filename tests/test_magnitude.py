"""Magnitude against independent references: closed forms, 50-digit mpmath, direct solves."""

from __future__ import annotations

import importlib
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.distance import cdist

from diversity_profiles.families._magnitude import (
    magnitude,
    magnitude_scale_range,
    magnitude_values,
)

# Scales relative to the median distance: from the ill-conditioned 1e-8 to fully scattered.
REL_SCALES = np.geomspace(1e-8, 100.0, 21)


def line(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return np.abs(x[:, None] - x[None, :])


def median_distance(D: np.ndarray) -> float:
    return float(np.median(D[np.triu_indices(len(D), 1)]))


def mp_magnitude(D: np.ndarray, t: float, dps: int = 50) -> mp.mpf:
    """Sum of the entries of exp(-tD)^-1, computed with ``dps`` significant digits."""
    with mp.workdps(dps):
        n = len(D)
        tt = mp.mpf(float(t))
        Z = mp.matrix(n, n)
        for i in range(n):
            for j in range(n):
                Z[i, j] = mp.exp(-tt * mp.mpf(float(D[i, j])))
        return mp.fsum(mp.lu_solve(Z, mp.matrix([1] * n)))


def direct_magnitude(D: np.ndarray, t: float) -> float:
    """Plain float64 solve; only used where exp(-tD) is well-conditioned."""
    return float(np.linalg.solve(np.exp(-t * D), np.ones(len(D))).sum())


# --- closed forms -----------------------------------------------------------------------


@pytest.mark.parametrize("r", [1e-3, 0.7, 25.0])
def test_two_points(r):
    D = line([0.0, r])
    ts = REL_SCALES / r
    np.testing.assert_allclose(magnitude(D, ts), 2.0 / (1.0 + np.exp(-ts * r)), rtol=1e-13)


@pytest.mark.parametrize("n", [3, 7, 40])
def test_simplex(n):
    r = 2.5
    D = np.full((n, n), r) - r * np.eye(n)
    ts = REL_SCALES / r
    expected = n / (1.0 + (n - 1) * np.exp(-ts * r))
    np.testing.assert_allclose(magnitude(D, ts), expected, rtol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_points_on_a_line(seed):
    # Subsets of R: Mag(t) = 1 + sum over consecutive gaps g of tanh(t·g/2).
    x = np.sort(np.random.default_rng(seed).uniform(-3, 3, size=30))
    D = line(x)
    ts = REL_SCALES / median_distance(D)
    expected = 1.0 + np.tanh(np.outer(ts, np.diff(x)) / 2).sum(axis=1)
    np.testing.assert_allclose(magnitude(D, ts), expected, rtol=1e-12)


@pytest.mark.parametrize(
    ("m", "k", "pole"), [(3, 2, math.log(math.sqrt(2))), (4, 2, math.log(math.sqrt(3)))]
)
def test_complete_bipartite_graphs_are_not_positive_definite(m, k, pole):
    # Path metric of K_{m,k}. By symmetry the weighting takes one value per part; solving
    # that 2 × 2 system gives, with q = e^(−t),
    # Mag = (m + k − 2mkq + (2mk − m − k)q²) / ((1 + (m−1)q²)(1 + (k−1)q²) − mkq²).
    # K_{3,2} has a pole at t = ln √2 (Sherman–Morrison range), K_{4,2} at t = ln √3
    # (Cholesky range), and negative magnitudes just below each.
    n = m + k
    D = np.full((n, n), 1.0)
    D[:m, :m] = D[m:, m:] = 2.0
    np.fill_diagonal(D, 0.0)
    ts = np.array([0.01, 0.1, 0.3, 0.34, 0.36, 0.5, 0.53, 0.57, 0.7, 1.0, 3.0, 30.0])
    q = np.exp(-ts)
    num = m + k - 2 * m * k * q + (2 * m * k - m - k) * q**2
    den = (1 + (m - 1) * q**2) * (1 + (k - 1) * q**2) - m * k * q**2
    np.testing.assert_allclose(magnitude(D, ts), num / den, rtol=1e-10)
    with pytest.warns(RuntimeWarning, match=rf"singular.*t={pole!r}"):
        at_pole = magnitude(D, [pole, 1.0])
    assert math.isnan(at_pole[0]) and at_pole[1] == pytest.approx(num[9] / den[9], rel=1e-12)


# --- 50-digit references ----------------------------------------------------------------


def _reference_sets():
    rng = np.random.default_rng(2024)
    yield "gauss-2d", cdist(*[rng.normal(size=(10, 2))] * 2)
    yield "gauss-20d", cdist(*[rng.normal(size=(12, 20))] * 2)
    yield "line", line(rng.uniform(size=9))
    clusters = np.vstack([rng.normal(size=(5, 3)) * 1e-3, rng.normal(size=(5, 3)) * 1e-3 + 4])
    yield "two-tight-clusters", cdist(clusters, clusters)
    yield "manhattan", cdist(*[rng.uniform(size=(14, 3))] * 2, metric="cityblock")
    bad = rng.uniform(0.5, 1.0, size=(8, 8))  # not a metric: Z_t indefinite at some t
    bad = (bad + bad.T) / 2
    np.fill_diagonal(bad, 0.0)
    yield "non-metric", bad


@pytest.mark.parametrize(("name", "D"), list(_reference_sets()), ids=lambda v: str(v)[:20])
def test_against_mpmath(name, D):
    ts = REL_SCALES / median_distance(D)
    got = magnitude(D, ts)
    for t, value in zip(ts, got, strict=True):
        ref = mp_magnitude(D, t)
        assert abs(value - ref) <= 1e-10 * abs(ref), (name, t, value, ref)


def test_indefinite_z_against_mpmath():
    # A non-metric D whose Z_t is indefinite at some t above the Sherman–Morrison range:
    # Cholesky fails there and the symmetric indefinite solve of Z_t takes over.
    rng = np.random.default_rng(17)
    D = rng.uniform(0.0, 1.0, size=(8, 8))
    D = (D + D.T) / 2
    np.fill_diagonal(D, 0.0)
    ts = np.geomspace(0.3, 30, 41) / median_distance(D)
    mean = D.sum() / 56
    assert any(t * mean >= 0.5 and np.linalg.eigvalsh(np.exp(-t * D))[0] < 0 for t in ts)
    for t, value in zip(ts, magnitude(D, ts), strict=True):
        ref = mp_magnitude(D, t)
        assert abs(value - ref) <= 1e-10 * abs(ref), (t, value, ref)


def test_small_t_keeps_digits_of_mag_minus_one():
    # The Sherman–Morrison rewrite keeps Mag − 1 to the resolution of a float near 1,
    # where solving exp(−tD) directly leaves only the leading digits.
    rng = np.random.default_rng(7)
    D = cdist(*[rng.normal(size=(12, 3))] * 2)
    for t in (1e-9, 1e-6, 1e-3):
        ref = mp_magnitude(D, t)
        assert abs(magnitude(D, t) - ref) <= 2 * np.finfo(float).eps


# --- duplicates -------------------------------------------------------------------------


def test_duplicate_on_a_line():
    D = line([0.0, 0.0, 1.0])
    ts = np.geomspace(1e-6, 1e3, 30)
    np.testing.assert_allclose(magnitude(D, ts), 2.0 / (1.0 + np.exp(-ts)), rtol=1e-13)


def test_duplicated_rows_equal_deduplicated_set():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 4))
    rows = rng.permutation(np.concatenate([np.arange(25), rng.integers(0, 25, size=15)]))
    D_dup, D = cdist(X[rows], X[rows]), cdist(X, X)
    ts = np.geomspace(1e-7, 1e3, 40)
    np.testing.assert_allclose(magnitude(D_dup, ts), magnitude(D, ts), rtol=1e-12)
    np.testing.assert_allclose(magnitude_values(D_dup, ts), magnitude(D, ts), rtol=1e-12)


def test_all_points_identical():
    assert magnitude(np.zeros((4, 4)), 3.0) == 1.0
    assert magnitude_scale_range(np.zeros((3, 3))) == (1.0, 1.0)


def test_near_duplicates_against_mpmath():
    # Pairs 1e-9 and 1e-5 apart: Z_t is far too ill-conditioned for a float32 factor at
    # moderate t, yet the magnitude itself is well-conditioned.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(10, 3))
    X[1], X[3] = X[0] + 1e-9, X[2] + 1e-5
    D = cdist(X, X)
    for t in np.geomspace(1e-6, 1e7, 14):
        ref = mp_magnitude(D, t)
        assert abs(magnitude(D, t) - ref) <= 1e-10 * ref, t


def test_points_closer_than_working_precision_merge():
    X = np.random.default_rng(6).normal(size=(12, 2))
    D = cdist(X, X)
    near = np.zeros((13, 13))  # a 13th point 1e-200 away from point 4
    near[:12, :12] = D
    near[12, :12] = near[:12, 12] = D[4]
    near[4, 12] = near[12, 4] = 1e-200
    ts = np.geomspace(1e-6, 1e6, 25)
    np.testing.assert_allclose(magnitude(near, ts), magnitude(D, ts), rtol=1e-12)


# --- properties -------------------------------------------------------------------------

# Grid points: distances are 0 (duplicates, exercised on purpose) or at least 0.5.
grid_points = st.integers(1, 10).flatmap(
    lambda n: st.integers(1, 3).flatmap(
        lambda d: arrays(np.float64, (n, d), elements=st.integers(-6, 6).map(lambda k: k / 2))
    )
)


def n_distinct(X: np.ndarray) -> int:
    return len(np.unique(X, axis=0))


@settings(max_examples=60, deadline=None)
@given(grid_points, st.randoms(use_true_random=False), st.floats(1e-3, 1e2))
def test_permutation_invariance(X, random, t):
    order = list(range(len(X)))
    random.shuffle(order)
    D = cdist(X, X)
    assert magnitude(D[np.ix_(order, order)], t) == pytest.approx(magnitude(D, t), rel=1e-11)


@settings(max_examples=60, deadline=None)
@given(grid_points)
def test_limits(X):
    D = cdist(X, X)
    if D.max() == 0:
        assert magnitude(D, [1e-3, 1e3]).tolist() == [1.0, 1.0]
        return
    assert magnitude(D, 1e-9 / D.max()) == pytest.approx(1.0, abs=1e-8)
    smallest = D[D > 0].min()
    assert magnitude(D, 200.0 / smallest) == pytest.approx(n_distinct(X), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(2, 12), elements=st.floats(-50, 50)))
def test_monotone_on_the_line(x):
    D = line(x)
    assume(D.max() > 1e-300)  # the scales below must stay finite
    ts = np.geomspace(1e-6, 1e6, 60) / D.max()
    values = magnitude(D, ts)
    assert np.all(np.diff(values) >= -1e-12 * values[1:])


# --- scale range ------------------------------------------------------------------------


def _normalised(D: np.ndarray, t: float) -> float:
    keep = np.unique(D, axis=0, return_index=True)[1]  # rows of exact duplicates coincide
    Dd = D[np.ix_(keep, keep)]
    return (direct_magnitude(Dd, t) - 1.0) / (len(Dd) - 1)


def _range_sets():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 5))
    yield "gauss", cdist(X, X)
    yield "line", line(rng.uniform(size=200))
    C = np.vstack([rng.normal(size=(40, 8)) * 0.05 + rng.normal(size=8) * 3 for _ in range(6)])
    yield "clusters", cdist(C, C)
    far = np.vstack([rng.normal(size=(195, 3)), rng.normal(size=(5, 3)) * 1e3])
    yield "outliers", cdist(far, far)
    Y = X[rng.integers(0, 300, size=400)]
    yield "duplicates", cdist(Y, Y)


@pytest.mark.parametrize(("name", "D"), list(_range_sets()), ids=lambda v: str(v)[:12])
@pytest.mark.parametrize(("low", "high"), [(0.01, 0.95), (0.1, 0.5)])
def test_scale_range(name, D, low, high, monkeypatch):
    module = importlib.import_module("diversity_profiles.families._magnitude")  # not the function
    calls = []
    original = module._Solver.__call__
    monkeypatch.setattr(module._Solver, "__call__", lambda s, t: calls.append(t) or original(s, t))
    t_lo, t_hi = magnitude_scale_range(D, low=low, high=high)
    assert 0 < t_lo < t_hi
    assert len(calls) <= 8
    assert low / 2 <= _normalised(D, t_lo) <= 2 * low
    assert high - 0.05 <= _normalised(D, t_hi) <= high + 0.04


# --- API and errors ---------------------------------------------------------------------


def test_return_types_and_order():
    D = line([0.0, math.log(3)])
    assert magnitude(D, 1.0) == pytest.approx(1.5, rel=1e-15)
    assert isinstance(magnitude(D, 1.0), float)
    ts = np.array([5.0, 0.1, 1.0])
    out = magnitude(D, ts)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == (3,)
    np.testing.assert_allclose(out, [magnitude(D, t) for t in ts], rtol=0)
    assert magnitude(D, [[1.0, 2.0]]).shape == (1, 2)


def test_extreme_scales():
    D = cdist(*[np.random.default_rng(0).normal(size=(6, 2))] * 2)
    assert magnitude(D, 1e-300) == 1.0
    assert magnitude(D, 1e300) == 6.0


@pytest.mark.parametrize("t", [0.0, -1.0, math.nan, math.inf, [1.0, 0.0]])
def test_bad_scale(t):
    with pytest.raises(ValueError, match=r"'t' parameter of magnitude must be in \(0, inf\)"):
        magnitude(line([0.0, 1.0]), t)


@pytest.mark.parametrize(
    ("D", "match"),
    [
        ([[0.0, math.nan], [math.nan, 0.0]], "non-finite"),
        ([[0.0, 1.0], [2.0, 0.0]], "symmetric"),
        ([[0.0, -1.0], [-1.0, 0.0]], "non-negative"),
        ([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0]], "square"),
        ([[1.0, 1.0], [1.0, 0.0]], "zero diagonal"),
    ],
)
def test_bad_distance_matrix(D, match):
    with pytest.raises(ValueError, match=match):
        magnitude(D, 1.0)
