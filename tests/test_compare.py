"""Verdicts, crossings and shares on curves with known relations."""

import numpy as np
import pytest
import xarray as xr

import diversity_profiles as dp
from diversity_profiles.comparison import _verdict as rule


def tree_from_curves(curves: dict[str, np.ndarray], family="vendi", grid=None, extra=None):
    """A profile tree holding hand-made curves (what dp.profiles would store)."""
    param = dp.FAMILIES[family].parameter
    grid = np.geomspace(0.1, 10, 41) if grid is None else np.asarray(grid, float)
    labels = list(curves)
    ds = xr.Dataset(
        {family: (("set", param), np.array([curves[k] for k in labels]), {"family": family})},
        coords={"set": labels, param: grid},
        attrs={"representation": "r", "distance": "euclidean"},
    )
    for name, values in (extra or {}).items():
        ds[name] = ("set", np.array([values[k] for k in labels]), {"family": name})
    return xr.DataTree.from_dict({"r/euclidean": ds})


def result(tree, **kw):
    return dp.compare(tree, **kw)["r/euclidean"].to_dataset()


def test_shifted_copy_dominates_and_equal_curves_tie():
    grid = np.geomspace(0.1, 10, 41)
    base = 5 / (1 + grid)
    res = result(tree_from_curves({"up": base + 0.5, "base": base, "same": base.copy()}))
    v = res.verdict.sel(family="vendi")
    assert v.sel(set_a="up", set_b="base") == "dominates"
    assert v.sel(set_a="base", set_b="up") == "dominated"
    assert v.sel(set_a="base", set_b="same") == "tied"
    assert float(res.share_ahead.sel(set_a="up", set_b="base", family="vendi")) == 1.0
    assert float(res.share_ahead.sel(set_a="base", set_b="same", family="vendi")) == 0.0
    assert res.agreement.sel(set_a="up", set_b="base") == "a_ahead"


def test_crossing_on_a_log_axis_is_located_by_interpolation():
    # a - b = log(theta / 1.7): A is behind below 1.7 and ahead above it, crossing exactly there.
    grid = np.geomspace(0.1, 10, 41)
    res = result(tree_from_curves({"a": 3 + np.log(grid / 1.7), "b": np.full(41, 3.0)}))
    sel = dict(set_a="a", set_b="b", family="vendi")
    assert res.verdict.sel(**sel) == "crosses"
    assert float(res.crossings.sel(**sel, crossing=0)) == pytest.approx(1.7, rel=1e-9)
    assert int(res.n_crossings.sel(**sel)) == 1
    # Ahead on log(10) - log(1.7) of log(10) - log(0.1).
    expected = np.log(10 / 1.7) / np.log(100)
    assert float(res.share_ahead.sel(**sel)) == pytest.approx(expected, rel=1e-9)
    reverse = dict(set_a="b", set_b="a", family="vendi")
    assert float(res.crossings.sel(**reverse, crossing=0)) == pytest.approx(1.7, rel=1e-9)
    assert float(res.share_ahead.sel(**reverse)) == pytest.approx(1 - expected, rel=1e-9)


def test_two_crossings_on_a_linear_axis():
    grid = np.linspace(0, 4, 81)
    a = (grid - 1) * (grid - 3)  # positive, negative between 1 and 3, positive
    res = result(tree_from_curves({"a": a, "b": np.zeros(81)}, family="circles", grid=grid))
    locs = res.crossings.sel(set_a="a", set_b="b", family="circles").values
    # Circles is a step family: the crossing is the midpoint between the grid points around it.
    assert locs == pytest.approx([1.0, 3.0], abs=0.05 / 2 + 1e-12)


def test_step_functions_with_a_tied_plateau_cross_in_the_middle_of_the_plateau():
    tau = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    a = np.array([6, 4, 3, 3, 2, 1])
    b = np.array([5, 4, 3, 3, 3, 1])
    res = result(tree_from_curves({"a": a, "b": b}, family="circles", grid=tau))
    sel = dict(set_a="a", set_b="b", family="circles")
    assert res.verdict.sel(**sel) == "crosses"
    assert float(res.crossings.sel(**sel, crossing=0)) == 2.0  # plateau 1..3 tied
    # Step family: A ahead on [0, 1), behind on [4, 5): share 1/5.
    assert float(res.share_ahead.sel(**sel)) == pytest.approx(0.2)


def test_ties_within_tolerance_and_plateaus_are_not_verdicts():
    grid = np.geomspace(0.1, 10, 11)
    base = np.linspace(5, 1, 11)
    res = result(tree_from_curves({"a": base * (1 + 1e-9), "b": base}, grid=grid))
    assert res.verdict.sel(set_a="a", set_b="b", family="vendi") == "tied"
    res = result(tree_from_curves({"a": base * (1 + 1e-3), "b": base}, grid=grid), rtol=1e-2)
    assert res.verdict.sel(set_a="a", set_b="b", family="vendi") == "tied"
    # Touching without crossing: dominates (ahead somewhere, never behind).
    touch = base.copy()
    touch[:5] += 1
    res = result(tree_from_curves({"a": touch, "b": base}, grid=grid))
    assert res.verdict.sel(set_a="a", set_b="b", family="vendi") == "dominates"


def test_the_papers_one_dimensional_example():
    tree = dp.profiles(
        {"A": [[1.0], [2.0], [3.0]], "B": [[0.0], [4.0]]},
        representation="r",
        distance="euclidean",
        families=["magnitude", "circles", "average_distance", "richness"],
    )
    res = result(tree)
    v = res.verdict.sel(set_a="A", set_b="B")
    assert v.sel(family="richness") == "dominates"
    assert v.sel(family="average_distance") == "dominated"
    assert v.sel(family="circles") == "crosses"
    assert v.sel(family="magnitude") == "crosses"
    assert res.agreement.sel(set_a="A", set_b="B") == "mixed"
    # Magnitude: 1 + 2 tanh(t/2) = 2 / (1 + exp(-4t)) has one root; find it by bisection.
    lo, hi = 0.01, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if 1 + 2 * np.tanh(mid / 2) < 2 / (1 + np.exp(-4 * mid)) else (lo, mid)
    loc = float(res.crossings.sel(set_a="A", set_b="B", family="magnitude", crossing=0))
    grid = tree["r/euclidean"].t.values
    step = np.log(grid[1] / grid[0])
    assert abs(np.log(loc / lo)) < step  # within one grid step on the log axis
    # Circles: A = 3, 2, 1 and B = 2 for tau in [0,1), [1,2), [2,4): crossing in the tie at [1, 2).
    cross = float(res.crossings.sel(set_a="A", set_b="B", family="circles", crossing=0))
    assert 1.0 <= cross <= 2.0


def test_verdicts_do_not_depend_on_the_order_of_the_sets():
    rng = np.random.default_rng(0)
    grid = np.geomspace(0.1, 10, 41)
    curves = {k: rng.random() + np.sin(grid * rng.random() * 3) for k in "pqrs"}
    a = result(tree_from_curves(curves))
    b = result(tree_from_curves(dict(reversed(list(curves.items())))))
    b = b.sel(set_a=a.set_a, set_b=a.set_b)
    assert (a.verdict == b.verdict).all()
    xr.testing.assert_allclose(a.share_ahead, b.share_ahead)
    # Mirror symmetry: (A, B) and (B, A) are opposite readings of one comparison.
    mirror = {
        "dominates": "dominated",
        "dominated": "dominates",
        "tied": "tied",
        "crosses": "crosses",
    }
    for x in "pqrs":
        for y in "pqrs":
            if x != y:
                forward = a.verdict.sel(set_a=x, set_b=y, family="vendi").item()
                assert a.verdict.sel(set_a=y, set_b=x, family="vendi").item() == mirror[forward]


def test_narrowed_domain_changes_the_verdict_and_bad_domains_are_errors():
    grid = np.geomspace(0.1, 10, 41)
    tree = tree_from_curves({"a": 3 + np.log(grid / 1.7), "b": np.full(41, 3.0)})
    res = result(tree, domains={"vendi": (2.0, 10.0)})
    assert res.verdict.sel(set_a="a", set_b="b", family="vendi") == "dominates"
    assert res.attrs["domain_vendi"] == "[2, 10] (narrowed)"
    with pytest.raises(
        ValueError, match=r"reaches outside the grid computed for 'r/euclidean', \[0.1, 10\]"
    ):
        dp.compare(tree, domains={"vendi": (0.01, 1.0)})
    with pytest.raises(ValueError, match=r"holds no grid point"):
        dp.compare(
            tree_from_curves({"a": [1, 2], "b": [2, 1]}, grid=[0.1, 10]), domains={"vendi": (1, 2)}
        )
    with pytest.raises(ValueError, match=r"names families not in"):
        dp.compare(tree, domains={"energy": (1, 2)})
    with pytest.raises(ValueError, match=r"at least two sets"):
        dp.compare(tree_from_curves({"a": np.ones(41)}))
    with pytest.raises(TypeError, match=r"DataTree"):
        dp.compare({"a": 1})


def test_comparison_round_trips_through_netcdf(tmp_path):
    grid = np.geomspace(0.1, 10, 41)
    res = dp.compare(tree_from_curves({"a": 3 + np.log(grid / 1.7), "b": np.full(41, 3.0)}))
    res.to_netcdf(tmp_path / "c.nc")
    back = xr.open_datatree(tmp_path / "c.nc")
    xr.testing.assert_identical(back["r/euclidean"].to_dataset(), res["r/euclidean"].to_dataset())


def test_signs_treat_infinite_values_consistently():
    s = rule.signs(np.array([-np.inf, -np.inf, 1.0]), np.array([-np.inf, -1.0, -np.inf]))
    assert s.tolist() == [0, -1, 1]
