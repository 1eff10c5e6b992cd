"""Vendi score against closed forms, the paper's properties and high-precision spectra."""

import mpmath
import numpy as np
import pytest
from scipy.linalg import block_diag

import diversity_profiles as dp

ORDERS = [0.0, 0.1, 0.5, 1.0, 1.5, 2.0, 10.0, np.inf]


def reference_vendi(K, q, weights=None):
    """Vendi score from a 40-digit eigen-decomposition (mpmath), independent of our code."""
    mpmath.mp.dps = 40
    n = len(K)
    p = np.full(n, 1.0 / n) if weights is None else np.asarray(weights) / np.sum(weights)
    A = mpmath.matrix(
        [[mpmath.sqrt(p[i]) * K[i][j] * mpmath.sqrt(p[j]) for j in range(n)] for i in range(n)]
    )
    lam = [x for x in mpmath.eigsy(A)[0] if x > mpmath.mpf(10) ** -25]
    total = sum(lam)  # exactly 1 in exact arithmetic; float64 inputs are off by ~1e-17,
    lam = [x / total for x in lam]  # which 1/(1-q) would amplify near q = 1
    if q == 0:
        return float(len(lam))
    if q == 1:
        return float(mpmath.exp(-sum(x * mpmath.log(x) for x in lam)))
    if q == np.inf:
        return float(1 / max(lam))
    return float(sum(x ** mpmath.mpf(q) for x in lam) ** (1 / (1 - mpmath.mpf(q))))


def random_cosine_kernel(rng, n, d):
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, X @ X.T


def test_worked_examples_from_the_seed_material():
    K = [[1, 0.9, 0], [0.9, 1, 0], [0, 0, 1]]
    assert dp.vendi_score(K) == pytest.approx(2.1573, abs=5e-5)
    x = np.array([0, 0, 10, 10, 20, 20.0])
    assert dp.vendi_score(np.exp(-np.abs(x[:, None] - x[None, :]))) == pytest.approx(3.0, abs=1e-4)


@pytest.mark.parametrize("q", ORDERS)
def test_effective_number_k_completely_distinct_groups(q):
    # k groups of identical samples, groups completely dissimilar: exactly k at every order.
    K = block_diag(*[np.ones((m, m)) for m in (3, 3, 3, 3)])
    assert dp.vendi_score(K, q) == pytest.approx(4.0, rel=1e-12)
    assert dp.vendi_score(np.eye(7), q) == pytest.approx(7.0, rel=1e-12)
    assert dp.vendi_score(np.ones((5, 5)), q) == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("q", ORDERS)
def test_identical_elements_duplicating_every_sample_changes_nothing(q):
    rng = np.random.default_rng(1)
    _, K = random_cosine_kernel(rng, 12, 5)
    doubled = np.kron(K, np.ones((2, 2)))
    assert dp.vendi_score(doubled, q) == pytest.approx(dp.vendi_score(K, q), rel=1e-9)


def test_partitioning_disjoint_groups_combine_as_in_the_paper():
    # Completely dissimilar groups: VS_1 = exp(H(p)) * prod VS_i ** p_i with p_i = n_i / n.
    rng = np.random.default_rng(2)
    _, K1 = random_cosine_kernel(rng, 10, 4)
    _, K2 = random_cosine_kernel(rng, 30, 6)
    p = np.array([10, 30]) / 40
    expected = (
        np.exp(-np.sum(p * np.log(p))) * dp.vendi_score(K1) ** p[0] * dp.vendi_score(K2) ** p[1]
    )
    assert dp.vendi_score(block_diag(K1, K2)) == pytest.approx(expected, rel=1e-10)


def test_symmetry_permuting_samples_changes_nothing():
    rng = np.random.default_rng(3)
    _, K = random_cosine_kernel(rng, 20, 6)
    perm = rng.permutation(20)
    assert dp.vendi_score(K[perm][:, perm], ORDERS) == pytest.approx(dp.vendi_score(K, ORDERS))


@pytest.mark.parametrize("q", [*ORDERS, 1 - 1e-9, 1 + 1e-7, 0.999, 50.0, 1000.0])
def test_matches_high_precision_reference(q):
    rng = np.random.default_rng(4)
    _, K = random_cosine_kernel(rng, 9, 12)  # full rank: no round-off eigenvalues to judge
    assert dp.vendi_score(K, q) == pytest.approx(reference_vendi(K.tolist(), q), rel=1e-9)


def test_probability_weighted_against_reference_and_special_cases():
    rng = np.random.default_rng(5)
    _, K = random_cosine_kernel(rng, 8, 8)
    w = rng.random(8)
    for q in (0.5, 1.0, 2.0, np.inf):
        assert dp.vendi_score(K, q, weights=w) == pytest.approx(
            reference_vendi(K.tolist(), q, w), rel=1e-9
        )
    assert dp.vendi_score(K, ORDERS, weights=np.ones(8)) == pytest.approx(dp.vendi_score(K, ORDERS))
    # Weight only on two of three orthogonal samples: two equally likely species.
    assert dp.vendi_score(np.eye(3), weights=[0.5, 0.5, 0.0]) == pytest.approx(2.0)


def test_closed_forms_for_q2_and_qinf():
    rng = np.random.default_rng(6)
    _, K = random_cosine_kernel(rng, 40, 7)
    n = len(K)
    assert dp.vendi_score(K, 2) == pytest.approx(n**2 / np.sum(K**2), rel=1e-10)
    assert dp.vendi_score(K, np.inf) == pytest.approx(n / np.linalg.eigvalsh(K).max(), rel=1e-10)
    assert dp.vendi_score(K, float("inf")) == dp.vendi_score(K, np.inf)


def test_rank_ignores_round_off_eigenvalues():
    # A rank-3 kernel: q=0 is exactly 3 and small orders stay near 3 (round-off would explode them).
    rng = np.random.default_rng(7)
    X = rng.standard_normal((300, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    values = dp.vendi_score(X @ X.T, [0.0, 0.01, 0.1])
    assert values[0] == 3.0
    assert 2.5 < values[2] <= values[1] <= 3.0


def test_low_orders_on_a_full_rank_cosine_kernel_match_the_dual_form():
    # n=600 samples in d=32: at most 32 nonzero eigenvalues, so every order is <= 32.
    rng = np.random.default_rng(8)
    X, K = random_cosine_kernel(rng, 600, 32)
    primal = dp.vendi_score(K, [0.0, 0.01, 0.1, 1.0])
    assert primal[0] == 32
    assert primal[1] <= 32
    assert primal == pytest.approx(dp.vendi_score_dual(X, [0.0, 0.01, 0.1, 1.0]), rel=1e-9)


def test_nonincreasing_in_q_and_returns_types():
    rng = np.random.default_rng(9)
    _, K = random_cosine_kernel(rng, 30, 5)
    qs = np.concatenate([[0], np.logspace(-3, 3, 200), [np.inf]])
    values = dp.vendi_score(K, qs)
    assert isinstance(values, np.ndarray) and values.shape == qs.shape
    assert np.all(np.diff(values) <= 1e-9 * values[:-1])
    assert isinstance(dp.vendi_score(K, 1), float)
    assert dp.vendi_score(K, [[1.0, 2.0]]).shape == (1, 2)


@pytest.mark.parametrize("n,d", [(200, 16), (10, 40)])
def test_dual_equals_the_cosine_kernel(n, d):
    rng = np.random.default_rng(10)
    X = rng.standard_normal((n, d)) * rng.random((n, 1))  # unnormalised rows
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.random(n)
    for q in ORDERS:
        assert dp.vendi_score_dual(X, q) == pytest.approx(dp.vendi_score(Xn @ Xn.T, q), rel=1e-9)
        assert dp.vendi_score_dual(X, q, weights=w) == pytest.approx(
            dp.vendi_score(Xn @ Xn.T, q, weights=w), rel=1e-9
        )
    # float32 input gives the same answer to float32 accuracy.
    assert dp.vendi_score_dual(X.astype(np.float32)) == pytest.approx(
        dp.vendi_score_dual(X), rel=1e-5
    )


def test_dual_linear_kernel_without_normalisation_is_trace_normalised():
    X = np.array([[1.0, 0], [2.0, 0], [0, 5]])
    K = X @ X.T
    lam = np.linalg.eigvalsh(K / np.trace(K))
    lam = lam[lam > 1e-12]
    assert dp.vendi_score_dual(X, normalize=False) == pytest.approx(
        np.exp(-np.sum(lam * np.log(lam)))
    )


@pytest.mark.parametrize(
    "K, match",
    [
        (
            [[1, 2], [2, 1]],
            r"not positive semidefinite: the most negative eigenvalue of K/n is -0.5",
        ),
        ([[2, 0], [0, 1]], r"unit diagonal.*K\[0, 0\] = 2\.0"),
        ([[1, np.nan], [np.nan, 1]], r"non-finite.*NaN"),
        ([[1, 0.5], [0.2, 1]], r"must be symmetric"),
        ([[1, 0, 0], [0, 1, 0]], r"square n × n.*\(2, 3\)"),
        (np.zeros((0, 0)), r"empty"),
    ],
)
def test_bad_kernels_get_specific_errors(K, match):
    with pytest.raises(ValueError, match=match):
        dp.vendi_score(K)


def test_bad_orders_and_weights():
    with pytest.raises(
        ValueError, match=r"'q' parameter of vendi_score must be in \[0, inf\]. Got -1"
    ):
        dp.vendi_score(np.eye(2), -1)
    with pytest.raises(ValueError, match=r"one entry per sample \(2\)"):
        dp.vendi_score(np.eye(2), weights=[1, 1, 1])
    with pytest.raises(ValueError, match=r"all-zero row"):
        dp.vendi_score_dual([[0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match=r"non-finite"):
        dp.vendi_score_dual(np.array([[np.inf, 0.0], [1.0, 0.0]], dtype=np.float32))


def test_slightly_negative_eigenvalues_are_clipped_not_rejected():
    # A rank-4 cosine kernel pushed to an eigenvalue of -1e-9 along one of its null directions.
    rng = np.random.default_rng(11)
    _, K = random_cosine_kernel(rng, 20, 4)
    null = np.linalg.eigh(K)[1][:, 0]
    K_bad = K - 1e-9 * np.outer(null, null)
    assert np.linalg.eigvalsh(K_bad).min() < -5e-10
    assert dp.vendi_score(K_bad, ORDERS) == pytest.approx(dp.vendi_score(K, ORDERS), rel=1e-6)
    assert dp.vendi_score(K_bad, 0) == 4


def test_dual_float32_norms_survive_underflowing_squares():
    # Rows of ~1e-25 next to rows of ~1e5 (the global scale leaves them as they are): their
    # squares underflow in float32, so their norms come from the rescaled float64 path.
    # Reference: the cosine kernel built in float64 from explicitly normalised rows.
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 6)) * np.repeat([1e-25, 1e5], 20)[:, None]
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    qs = [0.5, 1.0, 2.0]
    expected = dp.vendi_score(U @ U.T, qs)
    got = dp.vendi_score_dual(X.astype(np.float32), qs)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
