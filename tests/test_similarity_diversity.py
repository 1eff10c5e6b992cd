"""Leinster–Cobbold similarity-sensitive diversity against closed forms, hand-worked
examples, 50-digit references and the theorems it has to obey."""

import mpmath
import numpy as np
import pytest
import xarray as xr

import diversity_profiles as dp
from diversity_profiles.families._similarity_diversity import similarity_diversity

ORDERS = [0.0, 0.5, 1 - 1e-9, 1.0, 1 + 1e-9, 2.0, 7.5, 50.0, np.inf]


def reference(Z, p, q):
    """D_q^Z(p) straight from the definition at 50 digits (inputs taken exactly)."""
    mpmath.mp.dps = 50
    n = len(p)
    total = mpmath.fsum(mpmath.mpf(float(x)) for x in p)
    P = [mpmath.mpf(float(x)) / total for x in p]
    support = [i for i in range(n) if P[i] > 0]
    zp = {i: mpmath.fsum(mpmath.mpf(float(Z[i][j])) * P[j] for j in range(n)) for i in support}
    if q == np.inf:
        return 1 / max(zp.values())
    if q == 1:
        return mpmath.exp(-mpmath.fsum(P[i] * mpmath.log(zp[i]) for i in support))
    q = mpmath.mpf(q)  # q = 1 +- 1e-9 by the generic formula: 50 digits absorb the cancellation
    return mpmath.fsum(P[i] * zp[i] ** (q - 1) for i in support) ** (1 / (1 - q))


def gaussian_similarity(rng, n, d=2, scale=1.0):
    X = rng.standard_normal((n, d)) * scale
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    return np.exp(-D)


def random_unit_similarity(rng, n):
    """Symmetric, entries in [0, 1], unit diagonal, and (generically) not PSD."""
    A = rng.uniform(0, 1, (n, n)) ** 3
    Z = (A + A.T) / 2
    np.fill_diagonal(Z, 1.0)
    return Z


def hill(p, q):
    """Hill numbers of a distribution by their closed forms."""
    p = np.asarray(p, float) / np.sum(p)
    p = p[p > 0]
    if q == 0:
        return float(p.size)
    if q == 1:
        return float(np.exp(-np.sum(p * np.log(p))))
    if q == 2:
        return float(1 / np.sum(p**2))
    if q == np.inf:
        return float(1 / p.max())
    logs = q * np.log(p)  # sum p_i^q in logs: p_i^1000 underflows
    top = logs.max()
    return float(np.exp((top + np.log(np.sum(np.exp(logs - top)))) / (1 - q)))


# --- closed forms and hand-worked examples ---------------------------------------------


@pytest.mark.parametrize("q", [0.0, 1.0, 2.0, np.inf, 0.3, 3.0])
def test_identity_similarity_gives_the_hill_numbers_of_p(q):
    rng = np.random.default_rng(3)
    for n in (1, 2, 5, 12):
        p = rng.dirichlet(np.ones(n))
        p[rng.random(n) < 0.3] = 0.0  # samples outside the support do not count
        if p.sum() == 0:
            p[0] = 1.0
        assert similarity_diversity(np.eye(n), q, weights=p) == pytest.approx(hill(p, q), rel=1e-12)
        assert similarity_diversity(np.eye(n), q) == n  # uniform: exactly n, every order


@pytest.mark.parametrize("q", ORDERS)
def test_all_ones_is_one_and_blocks_count_as_one_each(q):
    assert similarity_diversity(np.ones((5, 5)), q) == 1.0
    # Three groups of identical samples, groups completely dissimilar: the Hill number of the
    # group sizes (2, 3, 5) / 10, as if each group were one species.
    sizes = [2, 3, 5]
    Z = np.zeros((10, 10))
    start = 0
    for m in sizes:
        Z[start : start + m, start : start + m] = 1.0
        start += m
    want = reference(np.eye(3), sizes, q)  # Z = I over the groups: their Hill number
    assert abs(similarity_diversity(Z, q) - want) <= 1e-13 * want


def test_hand_worked_non_psd_similarity():
    # Z has eigenvalues 1 - sqrt 2 < 0, 1, 1 + sqrt 2: fine here (not for Vendi).
    # Uniform p: Zp = (2/3, 1, 2/3).
    Z = np.array([[1.0, 1, 0], [1, 1, 1], [0, 1, 1]])
    assert np.linalg.eigvalsh(Z).min() < 0
    assert similarity_diversity(Z, 0) == pytest.approx(4 / 3, rel=1e-15)  # (3/2 + 1 + 3/2) / 3
    assert similarity_diversity(Z, 2) == pytest.approx(9 / 7, rel=1e-15)  # 1 / ((2/3+1+2/3)/3)
    assert similarity_diversity(Z, np.inf) == 1.0  # 1 / max (Zp)_i
    shannon = np.exp(-(2 * np.log(2 / 3)) / 3)  # exp(-sum p_i log (Zp)_i)
    assert similarity_diversity(Z, 1) == pytest.approx(shannon, rel=1e-15)


@pytest.mark.parametrize("q", ORDERS)
def test_two_points_at_uniform_p_are_two_over_one_plus_z_at_every_order(q):
    for z in (0.0, 0.1, 0.5, 0.999, 1.0):
        Z = np.array([[1.0, z], [z, 1.0]])
        assert similarity_diversity(Z, q) == pytest.approx(2 / (1 + z), rel=1e-14)
        # Any other p is less diverse (the maximum over p is 2 / (1 + z), attained only there).
        if 0 < z < 1:
            assert similarity_diversity(Z, q, weights=[0.7, 0.3]) < 2 / (1 + z)


@pytest.mark.parametrize("q", ORDERS)
def test_a_twin_counts_as_one_sample_with_the_summed_abundance(q):
    # Uniform p over {a, a, b} is p = (2/3, 1/3) over {a, b} (Leinster–Cobbold's naive model).
    for z in (0.0, 0.3, 0.9):
        twin = np.array([[1.0, 1.0, z], [1.0, 1.0, z], [z, z, 1.0]])
        pair = np.array([[1.0, z], [z, 1.0]])
        merged = similarity_diversity(pair, q, weights=[2, 1])
        assert similarity_diversity(twin, q) == pytest.approx(merged, rel=1e-13)
        if q == 2:  # hand-worked: Zp = ((2+z)/3, (1+2z)/3), D_2 = 1 / sum p_i (Zp)_i
            assert merged == pytest.approx(9 / (5 + 4 * z), rel=1e-15)
    # Weights zero outside the support: the same as leaving those samples out.
    rng = np.random.default_rng(5)
    Z = random_unit_similarity(rng, 6)
    w = np.array([0.2, 0, 0.5, 0.1, 0, 0.2])
    keep = w > 0
    assert similarity_diversity(Z, q, weights=w) == pytest.approx(
        similarity_diversity(Z[np.ix_(keep, keep)], q, weights=w[keep]), rel=1e-13
    )


# --- high precision ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["gaussian", "non-psd", "near-ones", "near-identity"])
def test_against_a_50_digit_reference_at_every_order(kind):
    rng = np.random.default_rng(
        {"gaussian": 1, "non-psd": 2, "near-ones": 3, "near-identity": 4}[kind]
    )
    n = 9
    if kind == "gaussian":
        Z = gaussian_similarity(rng, n)
    elif kind == "non-psd":
        Z = random_unit_similarity(rng, n)
    elif kind == "near-ones":  # tightly clustered: every (Zp)_i near 1, D near 1
        Z = gaussian_similarity(rng, n, scale=1e-3)
    else:  # far apart: Z near I, D near the Hill numbers
        Z = gaussian_similarity(rng, n, scale=20.0)
    for p in (None, rng.dirichlet(np.full(n, 0.5)) * np.array([1, 1, 0, 1, 1, 1, 0, 1, 1])):
        got = similarity_diversity(Z, ORDERS, weights=p)
        weights = np.full(n, 1.0 / n) if p is None else p
        for q, value in zip(ORDERS, got, strict=True):
            want = reference(Z, weights, q)
            assert abs(value - want) <= 2e-14 * want, (kind, q, value, float(want))


def test_large_and_tiny_orders_stay_finite_and_accurate():
    rng = np.random.default_rng(7)
    Z = gaussian_similarity(rng, 8, scale=3.0)
    p = rng.dirichlet(np.ones(8))
    for q in (1e-12, 1e-3, 300.0, 1e4, 1e8):
        want = reference(Z, p, q)
        assert abs(similarity_diversity(Z, q, weights=p) - want) <= 1e-13 * want, q


# --- theorems ----------------------------------------------------------------------------


def test_nonincreasing_in_q_and_between_one_and_the_hill_number():
    rng = np.random.default_rng(11)
    qs = np.concatenate([[0.0], np.geomspace(1e-3, 1e3, 400), [np.inf]])
    for trial in range(12):
        n = int(rng.integers(2, 15))
        Z = random_unit_similarity(rng, n) if trial % 2 else gaussian_similarity(rng, n)
        p = rng.dirichlet(np.full(n, 0.7))
        d = similarity_diversity(Z, qs, weights=p)
        assert np.all(np.diff(d) <= 1e-12 * d[:-1])
        # Zp >= p elementwise, so D^Z_q <= D^I_q (the Hill number) <= support size; Zp <= 1: D >= 1.
        hills = np.array([hill(p, q) for q in qs])
        assert np.all(d <= hills * (1 + 1e-12)) and np.all(d >= 1 - 1e-12)


def test_spread_maximum_diversity_and_magnitude_on_three_points_on_a_line():
    # {0, 1, 2} at scale t: Z = exp(-t |x - y|), z = e^-t. The weighting w = Z^-1 1 is
    # (1, 1 - z, 1) / (1 + z) > 0, so (Leinster–Meckes) the maximum diversity is the magnitude
    # (3 - z) / (1 + z), attained at p* = w / sum w for every q: Zp* = 1 / magnitude.
    for t in (0.3, 1.0, 4.0):
        z = np.exp(-t)
        x = np.array([0.0, 1.0, 2.0])
        D = np.abs(x[:, None] - x[None, :])
        Z = np.exp(-t * D)
        mag = (3 - z) / (1 + z)
        assert dp.magnitude(D, t) == pytest.approx(mag, rel=1e-12)  # the closed form is right
        best = np.array([1, 1 - z, 1]) / (3 - z)
        np.testing.assert_allclose(similarity_diversity(Z, ORDERS, weights=best), mag, rtol=1e-13)
        # The spread is D_0 at uniform p: sum_i 1 / sum_j Z_ij.
        spread = 2 / (1 + z + z**2) + 1 / (1 + 2 * z)
        assert similarity_diversity(Z, 0.0) == pytest.approx(spread, rel=1e-14)
        assert spread <= mag
        rng = np.random.default_rng(int(10 * t))
        for p in rng.dirichlet(np.ones(3), size=50):  # no p beats the maximum
            assert np.all(similarity_diversity(Z, ORDERS, weights=p) <= mag * (1 + 1e-13))


def test_no_distribution_exceeds_the_magnitude_of_a_euclidean_set():
    # Z = exp(-t D) of points in the plane is positive definite, so for every p and q
    # spread <= D_0(uniform) ... and D_q(p) <= max diversity <= magnitude (Leinster–Meckes).
    rng = np.random.default_rng(21)
    X = rng.uniform(0, 3, (6, 2))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    t = 1.3
    Z = np.exp(-t * D)
    mag = float(np.linalg.solve(Z, np.ones(6)).sum())
    assert dp.magnitude(D, t) == pytest.approx(mag, rel=1e-10)
    spread = float(np.sum(1 / Z.sum(axis=1)))
    assert similarity_diversity(Z, 0.0) == pytest.approx(spread, rel=1e-14)
    for p in rng.dirichlet(np.full(6, 0.5), size=200):
        assert np.all(similarity_diversity(Z, ORDERS, weights=p) <= mag * (1 + 1e-12))


# --- conventions and bad input -----------------------------------------------------------


def test_scalar_and_array_orders_follow_vendi_score():
    Z = np.array([[1.0, 0.2], [0.2, 1.0]])
    assert type(similarity_diversity(Z)) is float
    assert type(similarity_diversity(Z, np.float64(2.0))) is float
    out = similarity_diversity(Z, [[0, 1], [2, np.inf]])
    assert isinstance(out, np.ndarray) and out.shape == (2, 2)
    assert similarity_diversity(Z, float("inf")) == similarity_diversity(Z, np.inf)
    assert dp.similarity_diversity is similarity_diversity
    assert not dp.FAMILIES["similarity_diversity"].default  # computed when asked for
    # Round-off just outside [0, 1] is clipped, not rejected.
    noisy = Z + np.array([[0, 1e-9], [1e-9, 0]])
    assert similarity_diversity(noisy, 2.0) == pytest.approx(similarity_diversity(Z, 2.0))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            dict(Z=[[1.0, 0.5]]),
            ValueError,
            r"'Z' argument of similarity_diversity must be a square",
        ),
        (dict(Z=[[1.0, 0.5], [0.2, 1.0]]), ValueError, r"'Z' argument.*must be symmetric"),
        (dict(Z=[[1.0, -0.5], [-0.5, 1.0]]), ValueError, r"'Z'.*in \[0, 1\].*Z\[0, 1\] = -0.5"),
        (dict(Z=[[1.0, 1.5], [1.5, 1.0]]), ValueError, r"'Z'.*in \[0, 1\].*Z\[0, 1\] = 1.5"),
        (dict(Z=[[2.0, 0.5], [0.5, 2.0]]), ValueError, r"'Z'.*unit diagonal.*Z\[0, 0\] = 2.0"),
        (dict(Z=[[1.0, np.nan], [np.nan, 1.0]]), ValueError, r"'Z'.*non-finite.*NaN"),
        (dict(Z=np.zeros((0, 0))), ValueError, r"'Z'.*at least 1 sample"),
        (dict(Z="abc"), TypeError, r"'Z' argument of similarity_diversity must hold real numbers"),
        (dict(q=-1.0), ValueError, r"'q' parameter of similarity_diversity must be in \[0, inf\]"),
        (dict(q=np.nan), ValueError, r"'q' parameter.*Got nan"),
        (dict(q="two"), TypeError, r"'q' parameter.*float"),
        (dict(weights=[1.0]), ValueError, r"'weights'.*one entry per sample \(2\)"),
        (dict(weights=[1.0, -1.0]), ValueError, r"'weights'.*non-negative"),
        (dict(weights=[0.0, 0.0]), ValueError, r"'weights'.*positive sum"),
        (dict(weights=[1.0, np.inf]), ValueError, r"'weights'.*non-finite"),
    ],
)
def test_bad_input_gets_a_specific_error(kwargs, error, match):
    call = dict(Z=[[1.0, 0.5], [0.5, 1.0]], q=1.0, weights=None)
    call.update(kwargs)
    with pytest.raises(error, match=match):
        similarity_diversity(call.pop("Z"), call.pop("q"), **call)


# --- as a family of profiles -------------------------------------------------------------


@pytest.fixture(scope="module")
def sets():
    rng = np.random.default_rng(0)
    return {"wide": rng.standard_normal((15, 3)), "narrow": 0.4 * rng.standard_normal((12, 3))}


@pytest.mark.parametrize("families", [["vendi", "similarity_diversity"], ["similarity_diversity"]])
def test_profiles_holds_the_family_and_round_trips_through_netcdf(sets, families, tmp_path):
    tree = dp.profiles(
        sets, representation="g", distance="euclidean", families=families, n_points=12
    )
    ds = tree["g/euclidean"].to_dataset()
    var = ds.similarity_diversity
    assert var.dims == ("set", "order") and var.attrs["family"] == "similarity_diversity"
    order = ds.order.values
    assert order[0] == 0 and np.isinf(order[-1]) and {1.0, 2.0} <= set(order)
    # The Gaussian kernel of the recorded bandwidth, straight through the public function.
    h = ds.attrs["bandwidth"]  # recorded on the node: the registry says it uses the kernel
    assert ds.attrs["kernel"] == "gaussian"
    for k, X in enumerate(sets.values()):
        D = dp.pairwise_distances(X)
        want = similarity_diversity(np.exp(-(D**2) / (2 * h**2)), order)
        np.testing.assert_allclose(var.values[k], want, rtol=1e-12)
        assert np.all(np.diff(var.values[k]) <= 1e-12 * var.values[k][:-1])
    if "vendi" in families:
        assert ds.vendi.dims == ("set", "q")
    tree.to_netcdf(tmp_path / "p.nc")
    back = xr.open_datatree(tmp_path / "p.nc")["g/euclidean"].to_dataset()
    xr.testing.assert_identical(back.similarity_diversity, var)
    xr.testing.assert_identical(back.order, ds.order)


def test_profiles_similarities_of_each_condition(sets):
    order = [0.0, 1.0, 2.0, 50.0]
    kw = dict(families="similarity_diversity", domains={"similarity_diversity": order})
    # Cosine: negative cosines count as no similarity (recorded).
    ds = dp.profiles(sets, representation="g", distance="cosine", **kw)["g/cosine"].to_dataset()
    assert ds.similarity_diversity.attrs["similarity"] == "max(cosine similarity, 0)"
    for k, X in enumerate(sets.values()):
        U = X / np.linalg.norm(X, axis=1, keepdims=True)
        want = similarity_diversity(np.clip(U @ U.T, 0, 1), order)
        np.testing.assert_allclose(ds.similarity_diversity.values[k], want, rtol=1e-10)
    # Tanimoto: 1 - Tanimoto distance.
    rng = np.random.default_rng(1)
    fps = {"a": rng.random((10, 16)) < 0.4, "b": rng.random((8, 16)) < 0.2}
    ds = dp.profiles(fps, representation="fp", distance="tanimoto", **kw)["fp/tanimoto"]
    for k, B in enumerate(fps.values()):
        want = similarity_diversity(1 - dp.pairwise_distances(B, "tanimoto"), order)
        np.testing.assert_allclose(ds.similarity_diversity.values[k], want, rtol=1e-12)
    # Given similarities: used as given (Z = I here: the number of samples at every order).
    Ds = {label: dp.pairwise_distances(X) for label, X in sets.items()}
    Ks = {label: np.eye(len(X)) for label, X in sets.items()}
    ds = dp.profiles(Ds, representation="g", distance="precomputed", similarities=Ks, **kw)
    assert ds["g/precomputed"].similarity_diversity.values.tolist() == [[15.0] * 4, [12.0] * 4]


def test_profiles_of_a_set_with_a_twin_and_of_subsamples(sets):
    # Identical rows are at distance exactly 0, so Z = 1 between them: {a, a, b} is
    # (2/3, 1/3) over {a, b}.
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 2.0]])
    order = [0.0, 0.5, 1.0, 2.0, 40.0, np.inf]  # the registry allows inf in its domain
    tree = dp.profiles(
        {"twin": X, "pair": X[1:]},
        representation="p",
        distance="euclidean",
        families="similarity_diversity",
        domains={"similarity_diversity": order},
        bandwidth=1.0,
    )
    ds = tree["p/euclidean"].to_dataset()
    z = np.exp(-5 / 2)  # |(1, 2)|^2 = 5, h = 1
    pair = np.array([[1.0, z], [z, 1.0]])
    np.testing.assert_allclose(
        ds.similarity_diversity.sel(set="twin").values,
        similarity_diversity(pair, order, weights=[2, 1]),
        rtol=1e-13,
    )
    np.testing.assert_allclose(ds.similarity_diversity.sel(set="pair").values, 2 / (1 + z))
    sub = dp.profiles(
        sets,
        representation="g",
        distance="euclidean",
        families="similarity_diversity",
        n_points=8,
        common_n=10,
        n_subsamples=3,
    )["g/euclidean"].to_dataset()
    assert sub.similarity_diversity_sd.dims == ("set", "order")
    assert np.all(sub.similarity_diversity.values >= 1)
