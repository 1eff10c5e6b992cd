"""Leftovers of issue 22's hardening, each checked against an independent reference."""

import warnings

import numpy as np
import pytest

import diversity_profiles as dp


@pytest.mark.parametrize("scale", [1e160, 1e-170])
def test_large_method_streams_extreme_coordinates(scale):
    # Reference: distances 1, 0.3, 0.7 (times scale), by hand.
    X = np.array([[0.0], [1.0], [0.3]]) * scale
    d = np.array([1.0, 0.3, 0.7]) * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        tree = dp.profiles(
            {"A": X},
            representation="r",
            distance="euclidean",
            families=["average_distance", "energy"],
            method="large",
        )
    ds = tree["r/euclidean"].to_dataset()
    assert float(ds.average_distance[0]) == pytest.approx(d.mean(), rel=1e-12)
    s = ds.s.values
    ref = -np.mean(d[None, :] ** -s[:, None], axis=1)
    np.testing.assert_allclose(ds.energy.values[0], ref, rtol=1e-6)


def test_float32_pass_refuses_distances_beyond_its_range():
    from diversity_profiles.engines import _streaming

    with pytest.raises(ValueError, match="float32 range"):
        _streaming.distance_pass(np.array([[0.0], [1e160]]), "euclidean", precision="float32")
