"""Adaptive grids (pipeline/_adaptive.py): crossings against closed forms and mpmath, one grid
for every set, user grids honoured exactly, the cap, the ``domain`` attribute, bands at the
added points.

References are independent of the package: the magnitude of points on a line is
1 + sum tanh(t g / 2) over the gaps g (Leinster, "The magnitude of metric spaces", 2013,
Prop. 2.4.15); Vendi's values are the eigenvalues of the Gaussian kernel in mpmath at 30
digits; Circles on a line are counted by hand.
"""

from __future__ import annotations

import re

import mpmath as mp
import numpy as np
import pytest

import diversity_profiles as dp
from diversity_profiles.pipeline._adaptive import COARSE_POINTS, LARGE_POINTS, MAX_POINTS

mp.mp.dps = 30
KW = dict(representation="line", distance="euclidean")
QUICK = {"A": [[1.0], [2.0], [3.0]], "B": [[0.0], [4.0]]}  # notebooks/01_quickstart.ipynb
PATTERN = re.compile(r"adaptive: (\d+) coarse \+ (\d+) bend \+ (\d+) crossing points")


def _vendi_mp(points, h, q):
    n = len(points)
    K = mp.matrix(n, n)
    for i in range(n):
        for j in range(n):
            K[i, j] = mp.e ** (-((mp.mpf(points[i]) - points[j]) ** 2) / (2 * h * h))
    lam = [x / n for x in mp.eigsy(K)[0] if x > 0]
    if q == 1:
        return mp.exp(-sum(x * mp.log(x) for x in lam))
    return sum(x**q for x in lam) ** (1 / (1 - q))


def _magnitude_line(points, t):
    gaps = np.diff(np.sort(np.asarray(points, dtype=float)))
    return 1 + sum(mp.tanh(t * mp.mpf(g) / 2) for g in gaps)


def _crossings(tree, a="A", b="B"):
    path = tree.dp.conditions[0]
    res = dp.compare(tree)[path].to_dataset().sel(set_a=a, set_b=b)
    return {
        str(f): [float(x) for x in res.crossings.sel(family=f).values if np.isfinite(x)]
        for f in res.family.values
    }


def _line(sets):
    return {k: [p[0] for p in v] for k, v in sets.items()}


@pytest.fixture(scope="module")
def quick_tree():
    return dp.profiles(QUICK, **KW, n_boot=0)


def test_quick_start_crossings_agree_with_the_closed_forms_to_1e_4(quick_tree):
    """The issue's example: a straight line between two of 100 points said 0.6577 (Vendi) and
    1.0607 (magnitude) where the closed forms say 0.6576 and 1.0613."""
    pts = _line(QUICK)
    h = mp.mpf(1.5)  # the median of the pooled distances 1, 1, 2, 4
    assert quick_tree["line/euclidean"].attrs["bandwidth"] == 1.5
    vendi = mp.findroot(lambda q: _vendi_mp(pts["A"], h, q) - _vendi_mp(pts["B"], h, q), 0.66)
    magnitude = mp.findroot(lambda t: 2 * mp.tanh(t / 2) - mp.tanh(2 * t), 1.06)
    assert abs(float(vendi) - 0.657634494) < 1e-8 and abs(float(magnitude) - 1.061275062) < 1e-8
    found = _crossings(quick_tree)
    assert len(found["vendi"]) == 1 and abs(found["vendi"][0] - float(vendi)) < 1e-5
    assert len(found["magnitude"]) == 1 and abs(found["magnitude"][0] - float(magnitude)) < 1e-5
    # Circles on the line: A has 3 for τ < 1, 2 for τ in [1, 2), 1 above; B has 2 up to 4.
    # They tie on [1, 2), read as the middle of the tied run.
    assert len(found["circles"]) == 1 and abs(found["circles"][0] - 1.5) < 1e-5


def test_a_second_pair_crosses_where_mpmath_says():
    sets = {"A": [[x] for x in (0.0, 0.5, 1.0, 1.5, 2.0)], "B": [[0.0], [2.5], [5.0]]}
    tree = dp.profiles(sets, **KW, bandwidth=1.0, n_boot=0, families=["vendi", "magnitude"])
    pts, h = _line(sets), mp.mpf(1)
    vendi = mp.findroot(lambda q: _vendi_mp(pts["A"], h, q) - _vendi_mp(pts["B"], h, q), 0.35)
    magnitude = mp.findroot(
        lambda t: _magnitude_line(pts["A"], t) - _magnitude_line(pts["B"], t), 3.0
    )
    found = _crossings(tree)
    assert len(found["vendi"]) == 1 and abs(found["vendi"][0] - float(vendi)) < 1e-5
    assert len(found["magnitude"]) == 1 and abs(found["magnitude"][0] - float(magnitude)) < 1e-5


def test_the_domain_attribute_counts_the_points_of_every_refined_grid(quick_tree):
    ds = quick_tree["line/euclidean"].to_dataset()
    for dim in ("q", "t", "tau", "s"):
        text = ds[dim].attrs["domain"]
        m = PATTERN.search(text)
        assert m, text
        coarse, bend, crossing = map(int, m.groups())
        touch = re.search(r"; (\d+) points where two sets' bands go from apart", text)
        touched = int(touch.group(1)) if touch else 0
        assert coarse + bend + crossing + touched == ds[dim].size <= MAX_POINTS
        assert coarse <= COARSE_POINTS and "crossing tolerance 1e-05" in text
    assert int(PATTERN.search(ds.t.attrs["domain"]).group(3)) > 0  # the crossing got points
    assert PATTERN.search(ds.tau.attrs["domain"]).group(2) == "0"  # a step function: no bends


def test_every_set_is_evaluated_at_every_added_point(quick_tree):
    """The same grid for every set: recomputing on the adaptive grid given point by point
    (never refined) gives each set's values at every point, and the closed form agrees."""
    ds = quick_tree["line/euclidean"].to_dataset()
    grid = ds.t.values
    fixed = dp.profiles(QUICK, **KW, n_boot=0, families="magnitude", domains={"magnitude": grid})
    again = fixed["line/euclidean"].to_dataset()
    assert np.array_equal(again.t.values, grid) and again.t.attrs["domain"] == "user grid"
    np.testing.assert_allclose(again.magnitude.values, ds.magnitude.values, rtol=1e-12)
    pts = _line(QUICK)
    for k, label in enumerate(("A", "B")):
        ref = [float(_magnitude_line(pts[label], t)) for t in grid]
        np.testing.assert_allclose(ds.magnitude.values[k], ref, rtol=1e-10)


def test_linear_interpolation_between_points_is_within_the_margin():
    """Between neighbours of the refined grid, the line is within the family's 1% margin of
    the closed form (the rule asks for a tenth of it)."""
    sets = {"A": [[x] for x in (0.0, 0.5, 1.0, 1.5, 2.0)], "B": [[0.0], [2.5], [5.0]]}
    ds = dp.profiles(sets, **KW, n_boot=0, families="magnitude")["line/euclidean"].to_dataset()
    t = ds.t.values
    mid = np.sqrt(t[:-1] * t[1:])
    for k, label in enumerate(("A", "B")):
        line = np.interp(np.log(mid), np.log(t), ds.magnitude.values[k])
        ref = np.array([float(_magnitude_line(_line(sets)[label], x)) for x in mid])
        assert np.max(np.abs(line - ref) / ref) < 0.01


def test_a_user_grid_is_honoured_exactly_and_an_int_n_points_is_a_fixed_grid():
    grid = [0.3, 0.7, 1.1, 5.0]
    tree = dp.profiles(QUICK, **KW, n_boot=0, domains={"magnitude": grid}, n_points=30)
    ds = tree["line/euclidean"].to_dataset()
    assert ds.t.values.tolist() == grid and ds.t.attrs["domain"] == "user grid"
    assert ds.q.size == 30 and "adaptive" not in ds.q.attrs["domain"]
    auto = dp.profiles(QUICK, **KW, n_boot=0, domains={"magnitude": grid, "energy": (0.5, 4.0)})
    ds = auto["line/euclidean"].to_dataset()
    assert ds.t.values.tolist() == grid and ds.t.attrs["domain"] == "user grid"
    # a range is refined like a default domain, inside its ends
    assert "adaptive" in ds.s.attrs["domain"] and ds.s.values[[0, -1]].tolist() == [0.5, 4.0]


def test_the_cap_holds_with_many_crossing_sets():
    rng = np.random.default_rng(3)
    sets = {f"S{i}": rng.normal(size=(8, 2)) for i in range(8)}  # 28 pairs, many crossings
    tree = dp.profiles(
        sets, representation="x", distance="euclidean", n_boot=0, families=["circles", "vendi"]
    )
    ds = tree["x/euclidean"].to_dataset()
    assert ds.tau.size <= MAX_POINTS and ds.q.size <= MAX_POINTS
    assert "stopped at the cap of 100 points" in ds.tau.attrs["domain"]


def test_bands_are_finite_at_the_added_points():
    rng = np.random.default_rng(0)
    sets = {"A": rng.normal(size=(60, 2)), "B": 1.1 * rng.normal(size=(60, 2)) + 0.2}
    tree = dp.profiles(sets, representation="x", distance="euclidean")  # n_boot="auto"
    ds = tree["x/euclidean"].to_dataset()
    coarse = dp.profiles(sets, representation="x", distance="euclidean", n_points=25, n_boot=0)
    base = coarse["x/euclidean"].to_dataset()
    for var, dim in (("vendi", "q"), ("magnitude", "t"), ("energy", "s"), ("circles", "tau")):
        added = ~np.isin(ds[dim].values, base[dim].values) & np.isfinite(ds[dim].values)
        if var != "energy":
            assert added.any(), (dim, ds[dim].attrs["domain"])
        for side in ("ci_lower", "ci_upper"):
            band = ds[f"{var}_{side}"].values[:, added]
            assert np.isfinite(band).all(), (var, side)
        assert (ds[f"{var}_ci_lower"] <= ds[f"{var}_ci_upper"]).values[:, added].all()


def test_large_n_sessions_find_the_closed_form_crossings():
    # The quick-start sets on the large-n methods: Vendi (vendi_large) and magnitude
    # (magnitude_large) are refined from one solver session per set, and find the crossings
    # of the closed forms (Vendi at the large route's own bandwidth) to 1e-5; every refined
    # magnitude value, warm-started between rounds, is the closed form's. Circles has no
    # session: a fixed grid, and the attribute says why.
    tree = dp.profiles(QUICK, **KW, n_boot=0, method="large",
                       families=["vendi", "magnitude", "circles"])  # fmt: skip
    ds = tree["line/euclidean"].to_dataset()
    assert ds.attrs["methods"] == "vendi: large; magnitude: large; circles: large"
    pts, h = _line(QUICK), mp.mpf(ds.attrs["bandwidth"])
    vendi = mp.findroot(lambda q: _vendi_mp(pts["A"], h, q) - _vendi_mp(pts["B"], h, q), 2.0)
    magnitude = mp.findroot(lambda t: 2 * mp.tanh(t / 2) - mp.tanh(2 * t), 1.06)
    found = _crossings(tree)
    assert len(found["vendi"]) == 1 and abs(found["vendi"][0] - float(vendi)) < 1e-5
    assert len(found["magnitude"]) == 1 and abs(found["magnitude"][0] - float(magnitude)) < 1e-5
    for name in ("q", "t"):
        text = ds[name].attrs["domain"]
        assert "one solver session per set" in text and COARSE_POINTS < ds[name].size
        assert int(PATTERN.search(text).group(3)) > 0  # crossing points were added
    truth = [[float(_magnitude_line(pts[s], t)) for t in ds.t.values] for s in ("A", "B")]
    np.testing.assert_allclose(ds.magnitude.values, truth, rtol=1e-6)
    assert "not refined (each round would rerun its solver)" in ds.tau.attrs["domain"]


def test_a_large_n_family_keeps_a_fixed_grid_under_a_time_budget():
    rng = np.random.default_rng(1)
    sets = {"A": rng.normal(size=(40, 2)), "B": rng.normal(size=(40, 2))}
    tree = dp.profiles(sets, representation="x", distance="euclidean", families="magnitude",
                       method="large", time_budget=60)  # fmt: skip
    ds = tree["x/euclidean"].to_dataset()
    assert ds.t.size == LARGE_POINTS
    assert "not refined (a time budget is set" in ds.t.attrs["domain"]


def test_n_points_must_be_auto_or_an_int():
    with pytest.raises(ValueError, match=r"'n_points' argument of profiles must be 'auto'"):
        dp.profiles(QUICK, **KW, n_points="many")


def test_extending_an_adaptive_grid_continues_its_mean_log_spacing():
    profiler = dp.Profiler(QUICK, **KW)
    tree = profiler.profiles(families="magnitude", n_boot=0)
    t = tree["line/euclidean"].t.values
    longer = profiler.extend(tree, "magnitude", "high", points=2)["line/euclidean"].to_dataset()
    step = np.exp(np.log(t[-1] / t[0]) / (t.size - 1))
    np.testing.assert_allclose(longer.t.values[-2:], t[-1] * step ** np.arange(1, 3), rtol=1e-12)
    ref = [float(_magnitude_line(_line(QUICK)["A"], x)) for x in longer.t.values[-2:]]
    np.testing.assert_allclose(longer.magnitude.values[0, -2:], ref, rtol=1e-10)


def test_points_are_added_where_two_sets_bands_go_from_apart_to_overlapping():
    """Large-n Vendi's certified brackets overlap at small q and come apart at larger q
    (B is a narrower copy of A's distribution): the grid locates where they come apart,
    the two neighbouring points within TOUCH_TOL of each other on log q."""
    from diversity_profiles.pipeline._adaptive import TOUCH_TOL

    rng = np.random.default_rng(0)
    sets = {"A": rng.normal(size=(700, 8)), "B": 0.8 * rng.normal(size=(700, 8))}
    tree = dp.profiles(sets, representation="x", distance="euclidean", families=["vendi"],
                       method="large", n_boot=0)  # fmt: skip
    ds = tree["x/euclidean"].to_dataset()
    lo, hi, q = ds.vendi_lower.values, ds.vendi_upper.values, ds.q.values
    apart = (lo[0] > hi[1]) | (hi[0] < lo[1])
    edges = np.flatnonzero(apart[:-1] != apart[1:])
    assert len(edges) and apart[-2] and not apart[1], apart  # overlapping, then apart
    for i in edges:
        assert 0 < np.log(q[i + 1]) - np.log(q[i]) <= TOUCH_TOL, (q[i], q[i + 1])
    assert "points where two sets' bands go from apart to overlapping" in ds.q.attrs["domain"]
