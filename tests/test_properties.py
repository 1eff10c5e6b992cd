"""Invariants that every registered family must satisfy, checked with hypothesis."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import diversity_profiles as dp
from diversity_profiles.pipeline._registry import FAMILIES

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def point_sets(draw, min_n=2, max_n=10):
    """Small point sets on an integer-ish grid, so duplicates and ties occur."""
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(1, 3))
    X = draw(arrays(np.float64, (n, d), elements=st.integers(-4, 4).map(float)))
    if len(np.unique(X, axis=0)) < 2:  # energy needs two distinct points... and so do we
        X[0, 0] += 1.0
    return X


def _profile(X, family, seed=0):
    tree = dp.profiles(
        {"s": X},
        representation="r",
        distance="euclidean",
        families=[family],
        n_points=12,
        seed=seed,
    )
    return tree["r/euclidean"].to_dataset()


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.filterwarnings("ignore::diversity_profiles.CoincidentPointsWarning")  # duplicates
@SETTINGS
@given(X=point_sets(), data=st.data())
def test_every_family_is_invariant_to_the_order_of_samples(family, X, data):
    perm = data.draw(st.permutations(range(len(X))))
    a, b = _profile(X, family), _profile(X[list(perm)], family)
    for name, var in a.data_vars.items():
        if var.attrs.get("role") in ("replicates", "ci_lower", "ci_upper"):
            continue  # random draws per sample position: invariant in distribution only
        if name == "energy" and np.isinf(var.values).any():
            assert np.array_equal(var.values, b[name].values)
            continue
        np.testing.assert_allclose(b[name].values, var.values, rtol=1e-9, atol=1e-12)


@SETTINGS
@given(X=point_sets(min_n=3))
def test_vendi_is_nonincreasing_in_q(X):
    v = _profile(X, "vendi").vendi.values[0]
    assert np.all(np.diff(v) <= 1e-9 * v[:-1])


@SETTINGS
@given(X=point_sets(min_n=3))
def test_circles_is_a_nonincreasing_step_function_between_its_bounds(X):
    ds = _profile(X, "circles")
    lower, upper = ds.circles.values[0], ds.circles_upper.values[0]
    assert np.all(np.diff(lower) <= 0) and np.all(np.diff(upper) <= 0)
    assert np.all(lower <= upper) and lower[-1] == 1
    assert lower[0] == dp.richness(X)  # tau = 0: every distinct point is its own circle


@SETTINGS
@given(X=point_sets())
def test_magnitude_tends_to_one_and_to_the_number_of_distinct_points(X):
    D = dp.pairwise_distances(X)
    distinct = dp.richness(X)
    small, large = dp.magnitude(D, [1e-9, 1e4])
    assert small == pytest.approx(1.0, abs=1e-6)
    assert large == pytest.approx(distinct, rel=1e-6)


@SETTINGS
@given(X=point_sets())
def test_scale_free_families_against_direct_formulas(X):
    D = dp.pairwise_distances(X)
    n = len(X)
    ds = _profile(X, "average_distance")
    assert float(ds.average_distance[0]) == pytest.approx(D.sum() / (n * (n - 1)), rel=1e-12)
    assert int(_profile(X, "richness").richness[0]) == len({tuple(r) for r in X})
