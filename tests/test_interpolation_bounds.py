"""The stored bound on the error between grid points (issue #24): checked against the true
curve evaluated densely inside every interval, by an independent computation."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist

import diversity_profiles as dp
from diversity_profiles.families import circles


def _hill(lam: np.ndarray, q: float) -> float:
    """Vendi score of order q from the eigenvalues of K/n, written out (no package code)."""
    lam = lam[lam > 1e-12]
    lam = lam / lam.sum()
    if q == 1:
        return float(np.exp(-np.sum(lam * np.log(lam))))
    if np.isinf(q):
        return float(1 / lam.max())
    return float(np.sum(lam**q) ** (1 / (1 - q)))


@pytest.fixture(scope="module")
def profiled():
    rng = np.random.default_rng(5)
    sets = {"A": rng.normal(size=(70, 3)), "B": 0.6 * rng.normal(size=(70, 3))}
    tree = dp.profiles(
        sets, representation="x", distance="euclidean", families=["vendi", "circles"],
        circles_method="exact", n_boot=0, n_points=12,
    )  # fmt: skip
    return sets, tree["x/euclidean"].to_dataset()


def test_vendi_between_points_stays_within_the_stored_bound(profiled):
    sets, ds = profiled
    q = ds.q.values
    for k, label in enumerate(ds.set.values):
        X = sets[str(label)]
        K = np.exp(-0.5 * (cdist(X, X) / float(ds.attrs["bandwidth"])) ** 2)
        lam = np.linalg.eigvalsh(K / len(X))
        values = ds.vendi.values[k]
        bound = ds.vendi_interpolation_error.values[k]
        assert np.isnan(bound[-1]) and np.isfinite(bound[:-1]).all()
        worst = 0.0
        for i in range(q.size - 1):
            if not np.isfinite(q[i + 1]) or q[i] == 0:
                continue
            inside = np.geomspace(q[i], q[i + 1], 40)
            u = np.log(inside / q[i]) / np.log(q[i + 1] / q[i])
            line = values[i] + u * (values[i + 1] - values[i])  # the log-axis line
            truth = np.array([_hill(lam, x) for x in inside])
            err = np.abs(truth - line).max()
            assert err <= bound[i] * (1 + 1e-9) + 1e-9, (label, q[i], err, bound[i])
            worst = max(worst, err / bound[i] if bound[i] > 0 else 0.0)
        assert worst > 0.05  # the bound is not vacuous: the line does use some of it


def test_circles_between_thresholds_stays_within_the_stored_bound(profiled):
    sets, ds = profiled
    tau = ds.tau.values
    for k, label in enumerate(ds.set.values):
        D = cdist(sets[str(label)], sets[str(label)])
        values = ds.circles.values[k]
        bound = ds.circles_interpolation_error.values[k]
        for i in range(tau.size - 1):
            inside = np.linspace(tau[i], tau[i + 1], 9)[1:-1]
            truth = np.array([circles(D, float(t), method="exact") for t in inside])
            err = np.abs(truth - values[i]).max()  # the chart holds the left value
            assert err <= bound[i], (label, tau[i], err, bound[i])


def test_a_grown_grid_bounds_its_new_intervals():
    rng = np.random.default_rng(2)
    profiler = dp.Profiler({"A": rng.normal(size=(40, 2)), "B": rng.normal(size=(40, 2))},
                           representation="x", distance="euclidean")  # fmt: skip
    tree = profiler.profiles(families=["vendi", "magnitude"], n_boot=0, n_points=10)
    grown = profiler.extend(tree, "magnitude", side="high", points=3)
    ds = grown["x/euclidean"]
    assert "magnitude_interpolation_error" not in ds  # not monotone: no certified bound
    assert np.isfinite(ds.vendi_interpolation_error.values[:, :-1]).all()
