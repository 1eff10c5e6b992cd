"""Verdicts read values at their own scale: multiplying one family's values and
replicates by a positive constant changes none of compare's answers for it."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import diversity_profiles as dp
from diversity_profiles.comparison import _verdict as rule

ANSWERS = ("verdict", "verdict_ci", "finding", "n_needed")


def _answers(tree, family):
    (path,) = [n.path for n in tree.subtree if "verdict" in n.to_dataset()]
    res = tree[path].to_dataset().sel(family=family)
    return {k: res[k].values.tolist() for k in ANSWERS}


def _scaled(tree, family, factor):
    """The same tree with every variable of ``family`` (values, replicates, bands)
    multiplied by ``factor``."""
    out = tree.copy(deep=True)
    for node in out.subtree:
        ds = node.to_dataset()
        names = [v for v in ds.data_vars if v == family or v.startswith(f"{family}_")]
        if names:
            node.update({v: ds[v] * factor for v in names})
    return out


@pytest.fixture(scope="module")
def tree():
    rng = np.random.default_rng(3)
    sets = {
        "A": rng.normal(size=(40, 4)),
        "B": 1.1 * rng.normal(size=(40, 4)),
        "C": rng.normal(size=(40, 4)) + 0.05,
    }
    return dp.profiles(
        sets, representation="normal", distance="euclidean", families=["energy", "vendi"]
    )


def test_the_scaled_tree_scales_every_energy_variable(tree):
    scaled = _scaled(tree, "energy", 1e-200)
    (path,) = [n.path for n in tree.subtree if "energy" in n.to_dataset()]
    before, after = tree[path].to_dataset(), scaled[path].to_dataset()
    assert "energy_boot" in before
    np.testing.assert_array_equal(after["energy_boot"].values, before["energy_boot"] * 1e-200)
    np.testing.assert_array_equal(after["vendi"].values, before["vendi"].values)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(exponent=st.floats(min_value=-250.0, max_value=250.0))
def test_answers_do_not_depend_on_a_familys_scale(tree, exponent):
    base = _answers(dp.compare(tree), "energy")
    got = _answers(dp.compare(_scaled(tree, "energy", 10.0**exponent)), "energy")
    np.testing.assert_equal(got, base)


def test_the_answers_vary_in_the_tree_used(tree):
    """The invariance above is not that of an answer that is always the same."""
    got = _answers(dp.compare(tree), "energy")
    assert len({v for row in got["finding"] for v in row}) >= 2


def test_a_quarter_apart_is_not_a_tie_at_any_scale():
    a, b = np.array([-3e-20, -3e-300, 3e200]), np.array([-4e-20, -4e-300, 4e200])
    assert rule.signs(a, b).tolist() == [1, 1, -1]
    assert (rule.margins(a, b, "relative", 0.01, 100) < np.abs(a - b)).all()


def test_spreads_that_square_to_zero_or_inf_keep_their_size():
    rng = np.random.default_rng(0)
    c = rng.standard_normal((50, 3))
    want = np.sqrt(np.sum(c**2, axis=0) / 49)  # centred errors: no mean taken
    for factor in (1e-300, 1e-170, 1e250):
        np.testing.assert_allclose(rule.replicate_sd(c * factor) / factor, want, rtol=1e-12)
        lo, hi = rule.band_of_difference(np.zeros(3), np.zeros(3), c * factor, 0 * c, 0.9)
        ref = rule.band_of_difference(np.zeros(3), np.zeros(3), c, 0 * c, 0.9)
        np.testing.assert_allclose(lo / factor, ref[0], rtol=1e-12)
        np.testing.assert_allclose(hi / factor, ref[1], rtol=1e-12)
        z = rule.familywise_z([c * factor, c[::-1] * factor], 0.9)
        assert z == pytest.approx(rule.familywise_z([c, c[::-1]], 0.9), rel=1e-9)
    np.testing.assert_allclose(
        rule.combined_sd(np.array([3e-200, 3e200]), np.array([4e-200, 4e200])), [5e-200, 5e200]
    )


def test_raw_and_rescaled_digit_pixels_give_the_same_energy_findings():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    sets = {"zeros": X[y == 0][:60], "ones": X[y == 1][:60]}
    grid = list(np.linspace(40, 73, 12))
    got = []
    for factor in (1.0, 1e-4):
        tree = dp.profiles(
            {k: v * factor for k, v in sets.items()},
            representation="pixels",
            distance="euclidean",
            families=["energy"],
            domains={"energy": grid},
        )
        got.append(_answers(dp.compare(tree), "energy"))
    np.testing.assert_equal(got[0], got[1])
    # Energies 20% and more apart are not read as tied at either scale.
    assert got[0]["verdict"][0][1] == "dominated"
