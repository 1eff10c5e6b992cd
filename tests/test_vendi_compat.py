"""``diversity_profiles.vendi_compat``, vendi-score 0.0.3's API, against independent references:
vendi-score's README examples, closed forms, 40-digit eigenvalues (mpmath), brute-force
double sums, and each of vendi-score's defects shown fixed. Where vendi-score itself is
installed (the benchmark environment, benchmarks/setup.sh), the last tests check agreement
with it wherever it is right and the documented difference where it is not; elsewhere they
are skipped.

Run alone: ``python -m pytest tests/test_vendi_compat.py``.
"""

import inspect

import mpmath
import numpy as np
import pytest
import scipy.sparse
from scipy.linalg import block_diag

import diversity_profiles as dp
from diversity_profiles import vendi_compat as vendi

ORDERS = [0.0, 0.5, 1.0, 2.0, 10.0, np.inf]


def reference_vendi(K, q, p=None):
    """Vendi score from a 40-digit eigendecomposition of diag(sqrt p) K diag(sqrt p)."""
    mpmath.mp.dps = 40
    n = len(K)
    p = [mpmath.mpf(1) / n] * n if p is None else [mpmath.mpf(float(v)) for v in p]
    A = mpmath.matrix(
        [
            [mpmath.sqrt(p[i]) * mpmath.mpf(float(K[i][j])) * mpmath.sqrt(p[j]) for j in range(n)]
            for i in range(n)
        ]
    )
    lam = [x for x in mpmath.eigsy(A)[0] if x > mpmath.mpf(10) ** -25]
    total = sum(lam)
    lam = [x / total for x in lam]
    if q == 0:
        return float(len(lam))
    if q == 1:
        return float(mpmath.exp(-sum(x * mpmath.log(x) for x in lam)))
    if q == np.inf:
        return float(1 / max(lam))
    return float(sum(x ** mpmath.mpf(q) for x in lam) ** (1 / (1 - mpmath.mpf(q))))


def unit_rows(rng, n, d):
    X = rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def hill(shares, q):
    """The order-q Hill number of a distribution, by its closed form."""
    shares = np.asarray(shares, dtype=float)
    if q == 0:
        return float(np.count_nonzero(shares))
    if q == 1:
        return float(np.exp(-np.sum(shares * np.log(shares))))
    if q == np.inf:
        return float(1 / shares.max())
    return float(np.sum(shares**q) ** (1 / (1 - q)))


def brute_intdiv(K, q, p=None):
    """1 - sum_ij p_i p_j K_ij^q by a plain double loop."""
    n = len(K)
    p = [1 / n] * n if p is None else [v / sum(p) for v in p]
    return 1 - sum(p[i] * p[j] * float(K[i][j]) ** q for i in range(n) for j in range(n))


# --- vendi-score's README ------------------------------------------------------------------


def test_the_readme_examples_of_vendi_score():
    # vendi-score 0.0.3 README, "Usage": 2.9999 and 2.1573 (printed to 4 digits).
    samples = [0, 0, 10, 10, 20, 20]
    k = lambda a, b: np.exp(-np.abs(a - b))  # noqa: E731
    assert f"{vendi.score(samples, k):.4f}"[:6] in {"2.9999", "3.0000"}
    assert vendi.score(samples, k) == pytest.approx(2.9999, abs=1e-4)
    K = np.array([[1.0, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert vendi.score_K(K) == pytest.approx(2.1573, abs=5e-5)
    assert vendi.score(samples, k, q=1.0) == pytest.approx(2.9999, abs=1e-4)


# --- closed forms --------------------------------------------------------------------------


@pytest.mark.parametrize("q", [*ORDERS, "inf"])
def test_identity_all_ones_and_equal_blocks(q):
    assert vendi.score_K(np.eye(7), q) == pytest.approx(7.0, rel=1e-12)
    assert vendi.score_K(np.ones((5, 5)), q) == pytest.approx(1.0, rel=1e-12)
    K = block_diag(*[np.ones((3, 3))] * 4)
    assert vendi.score_K(K, q) == pytest.approx(4.0, rel=1e-12)
    # the same from the samples: 4 kinds, 3 copies each, under exact-match similarity
    samples = ["a", "b", "c", "d"] * 3
    assert vendi.score(samples, lambda a, b: float(a == b), q) == pytest.approx(4.0, rel=1e-12)


@pytest.mark.parametrize("q", ORDERS)
def test_unequal_blocks_give_the_hill_numbers_of_the_block_shares(q):
    # Blocks of 1, 2 and 5 identical samples: K/n has eigenvalues 1/8, 2/8, 5/8.
    K = block_diag(np.ones((1, 1)), np.ones((2, 2)), np.ones((5, 5)))
    expected = {0.0: 3.0, np.inf: 8 / 5}.get(q, hill(np.array([1, 2, 5]) / 8, q))
    assert vendi.score_K(K, q) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("q", [0.0, 1.0, 2.0, np.inf])
def test_weights_on_the_identity_give_the_hill_numbers_of_p(q):
    p = np.array([0.5, 0.25, 0.125, 0.125])
    expected = {0.0: 4.0, 1.0: np.exp(-np.sum(p * np.log(p))), 2.0: 1 / np.sum(p**2)}.get(
        q, 1 / p.max()
    )
    assert vendi.score_K(np.eye(4), q, p=p) == pytest.approx(expected, rel=1e-12)
    # p is normalised: vendi-score took it as given (these weights sum to 8)
    assert vendi.score_K(np.eye(4), q, p=8 * p) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("q", [0.5, 1.0, 2.0, np.inf])
def test_a_duplicated_sample_equals_doubling_its_weight(q):
    rng = np.random.default_rng(3)
    X = unit_rows(rng, 6, 3)
    doubled = np.vstack([X, X[:1]])
    p = np.array([2, 1, 1, 1, 1, 1]) / 7
    assert vendi.score_K(doubled @ doubled.T, q) == pytest.approx(
        vendi.score_K(X @ X.T, q, p=p), rel=1e-9
    )


# --- 40-digit references ---------------------------------------------------------------------


@pytest.mark.parametrize("q", [0.5, 1.0, 2.0, np.inf, "inf"])
def test_a_random_psd_kernel_against_mpmath(q):
    rng = np.random.default_rng(7)
    X = unit_rows(rng, 14, 20)  # full rank: no round-off eigenvalues to disagree on
    K = X @ X.T
    qq = np.inf if q == "inf" else q
    assert vendi.score_K(K, q) == pytest.approx(reference_vendi(K, qq), rel=1e-10)
    p = rng.uniform(0.1, 1.0, 14)
    p /= p.sum()
    assert vendi.score_K(K, q, p=p) == pytest.approx(reference_vendi(K, qq, p), rel=1e-10)
    assert vendi.score_X(X, q, p=p) == pytest.approx(reference_vendi(K, qq, p), rel=1e-10)
    assert vendi.score_dual(X, q) == pytest.approx(reference_vendi(K, qq), rel=1e-10)
    rows = list(X)
    cos = lambda a, b: float(a @ b)  # noqa: E731
    assert vendi.score(rows, cos, q, p=p) == pytest.approx(reference_vendi(K, qq, p), rel=1e-9)


def test_an_array_of_orders_gives_the_scores_at_each():
    K = block_diag(np.ones((1, 1)), np.ones((3, 3)))
    got = vendi.score_K(K, q=[0, 2, np.inf])
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, [2.0, 1 / (1 / 16 + 9 / 16), 4 / 3], rtol=1e-12)


def test_normalize_rescales_to_unit_diagonal():
    rng = np.random.default_rng(5)
    X = unit_rows(rng, 9, 12)
    K = X @ X.T
    scale = rng.uniform(0.5, 3.0, 9)
    scaled = K * scale[:, None] * scale[None, :]
    for q in [0.5, 1.0, np.inf]:
        ref = reference_vendi(K, q)
        assert vendi.score_K(scaled, q, normalize=True) == pytest.approx(ref, rel=1e-10)
    # a similarity with k(x, x) = 4: normalize=True makes it the exp kernel again
    samples = [0.0, 1.0, 3.0]
    k4 = lambda a, b: 4 * np.exp(-abs(a - b))  # noqa: E731
    E = np.exp(-np.abs(np.subtract.outer(samples, samples)))
    assert vendi.score(samples, k4, normalize=True) == pytest.approx(reference_vendi(E, 1), 1e-10)


# --- vendi-score's defects, fixed --------------------------------------------------------------


def rank_16_kernel():
    X = unit_rows(np.random.default_rng(0), 200, 16)
    return X, X @ X.T


def test_q0_counts_the_eigenvalues_that_are_not_round_off():
    # vendi-score counted every positive eigenvalue, round-off included (107 here).
    X, K = rank_16_kernel()
    assert vendi.score_K(K, q=0) == 16.0
    assert vendi.score_X(X, q=0) == 16.0
    assert vendi.score_dual(X, q=0) == 16.0


def test_np_inf_and_the_string_inf_both_give_one_over_the_largest_eigenvalue():
    # vendi-score returned NaN for np.inf (its entropy_q compared q with "inf" only).
    X, K = rank_16_kernel()
    expected = 1 / np.linalg.eigvalsh(K / 200).max()
    for q in (np.inf, "inf", float("inf")):
        assert vendi.score_K(K, q) == pytest.approx(expected, rel=1e-10)
        assert vendi.score_X(X, q) == pytest.approx(expected, rel=1e-10)
        assert vendi.score_dual(X, q) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("q", [0.0, 1.0, 2.0, np.inf])
def test_a_sparse_kernel_uses_its_whole_spectrum(q):
    # vendi-score's eigsh returned the 6 largest eigenvalues only (of 10 here).
    K = block_diag(*[np.eye(1)] * 4, *[np.ones((2, 2))] * 3, np.ones((6, 6)))  # n = 16
    shares = np.array([1] * 4 + [2] * 3 + [6]) / 16
    expected = {0.0: 8.0, 1.0: np.exp(-np.sum(shares * np.log(shares))), np.inf: 16 / 6}.get(
        q, 1 / np.sum(shares**2)
    )
    for sparse in (
        scipy.sparse.csr_matrix(K),
        scipy.sparse.csr_array(K),
        scipy.sparse.coo_matrix(K),
    ):
        assert vendi.score_K(sparse, q) == pytest.approx(expected, rel=1e-12)
    assert vendi.score_K(K, q) == pytest.approx(expected, rel=1e-12)


def test_score_X_honours_q():
    # vendi-score's score_X passed q=1 to score_K whatever was asked.
    rng = np.random.default_rng(11)
    X = 3 * unit_rows(rng, 40, 5)  # rows of norm 3
    lam = np.linalg.eigvalsh(X @ X.T / 9 / 40)
    lam = lam[lam > 1e-12]
    expected = 1 / np.sum(lam**2)
    assert vendi.score_X(X, q=2) == pytest.approx(expected, rel=1e-10)
    assert vendi.score_X(X, q=2) == pytest.approx(vendi.score_K(X @ X.T / 9, q=2), rel=1e-10)
    assert vendi.score_X(X, q=2, normalize=False) == pytest.approx(expected, rel=1e-10)
    assert vendi.score_X(X, q=2) < vendi.score_X(X, q=1) - 0.1


@pytest.mark.parametrize("q", [1, 2, 0.5])
def test_intdiv_X_works_and_equals_intdiv_K(q):
    # vendi-score's intdiv_X called intdiv(K, q=q, p=p) and raised TypeError.
    rng = np.random.default_rng(2)
    X = np.abs(rng.standard_normal((12, 4)))  # non-negative cosines, so any q is defined
    Y = X / np.linalg.norm(X, axis=1, keepdims=True)
    p = rng.uniform(0.2, 1.0, 12)
    for weights in (None, p):
        expected = brute_intdiv(Y @ Y.T, q, None if weights is None else list(weights))
        assert vendi.intdiv_X(X, q, p=weights) == pytest.approx(expected, rel=1e-12)
        assert vendi.intdiv_K(Y @ Y.T, q, p=weights) == pytest.approx(expected, rel=1e-12)
    assert vendi.intdiv_X(X, q, normalize=False) == pytest.approx(brute_intdiv(X @ X.T, q), 1e-12)


def test_intdiv_of_samples_and_a_function():
    samples = [0.0, 1.0, 1.0, 4.0]
    k = lambda a, b: np.exp(-abs(a - b))  # noqa: E731
    K = [[k(a, b) for b in samples] for a in samples]
    for q in (1, 2):
        assert vendi.intdiv(samples, k, q) == pytest.approx(brute_intdiv(K, q), rel=1e-12)
    assert vendi.intdiv(samples, k, p=[1, 2, 3, 4]) == pytest.approx(
        brute_intdiv(K, 1, [1, 2, 3, 4]), rel=1e-12
    )


# --- the similarity function -----------------------------------------------------------------


def test_k_is_called_on_the_upper_triangle_and_a_few_reversed_pairs():
    calls = []

    def k(a, b):
        calls.append((a, b))
        return float(a == b)

    n = 30
    vendi.score(list(range(n)), k)
    upper = {(i, j) for i in range(n) for j in range(i, n)}
    assert upper <= set(calls)
    assert len(calls) == n * (n + 1) // 2 + vendi.SYMMETRY_PAIRS
    assert all(a > b for a, b in calls[n * (n + 1) // 2 :])


def test_a_non_finite_similarity_names_the_pair():
    k = lambda a, b: np.nan if {a, b} == {2, 5} else float(a == b)  # noqa: E731
    with pytest.raises(ValueError, match=r"\(i, j\) = \(2, 5\)"):
        vendi.score(list(range(8)), k)
    k_inf = lambda a, b: np.inf if (a, b) == (1, 3) else float(a == b)  # noqa: E731
    with pytest.raises(ValueError, match=r"returned inf at \(i, j\) = \(1, 3\)"):
        vendi.intdiv(list(range(5)), k_inf)


def test_a_similarity_that_is_not_a_number_names_the_pair():
    k = lambda a, b: "close" if (a, b) == (0, 2) else float(a == b)  # noqa: E731
    with pytest.raises(TypeError, match=r"real number; at \(i, j\) = \(0, 2\).*'close'"):
        vendi.score([0, 1, 2], k)
    with pytest.raises(TypeError, match="'k' argument of score must be a similarity function"):
        vendi.score([0, 1, 2], np.eye(3))


def test_a_bad_order_or_p_is_refused_before_k_is_called():
    calls = []
    k = lambda a, b: calls.append(1) or float(a == b)  # noqa: E731
    with pytest.raises(ValueError, match="'q' parameter of score"):
        vendi.score([0, 1, 2], k, q=-1)
    with pytest.raises(ValueError, match="'p' argument of intdiv"):
        vendi.intdiv([0, 1, 2], k, p=[1.0])
    assert calls == []


def test_an_asymmetric_similarity_raises():
    k = lambda a, b: np.exp(-abs(a - b)) * (1.2 if a < b else 1.0)  # noqa: E731
    with pytest.raises(ValueError, match="not symmetric"):
        vendi.score(list(range(6)), k)


def test_self_similarity_other_than_one_says_to_normalize():
    k = lambda a, b: 2 * np.exp(-abs(a - b))  # noqa: E731
    with pytest.raises(ValueError, match=r"k\(samples\[0\], samples\[0\]\) is 2.0.*normalize=True"):
        vendi.score([0, 1, 2], k)
    with pytest.raises(ValueError, match=r"K\[0, 0\] is 2.0.*normalize=True"):
        vendi.score_K(2 * np.eye(3))


def test_a_float32_kernel_is_accepted_at_its_precision():
    X = unit_rows(np.random.default_rng(4), 50, 8).astype(np.float32)
    K32 = X @ X.T
    K64 = X.astype(np.float64) @ X.astype(np.float64).T
    assert vendi.score_K(K32) == pytest.approx(
        vendi.score_K(K64 / np.sqrt(np.outer(np.diag(K64), np.diag(K64)))), rel=1e-4
    )


def test_a_float32_torch_kernel_is_accepted_at_its_precision():
    torch = pytest.importorskip("torch")
    X = unit_rows(np.random.default_rng(4), 50, 8)
    T = torch.nn.functional.normalize(torch.tensor(X, dtype=torch.float32), dim=1)
    assert vendi.score_K(T @ T.T) == pytest.approx(reference_vendi(X @ X.T, 1), rel=1e-4)
    assert vendi.score_X(T) == pytest.approx(reference_vendi(X @ X.T, 1), rel=1e-4)


# --- bad input ---------------------------------------------------------------------------------


def test_a_non_psd_kernel_names_its_most_negative_eigenvalue():
    K = np.array([[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]])
    smallest = np.linalg.eigvalsh(K / 3).min()
    assert smallest < -0.1
    with pytest.raises(ValueError, match=rf"not positive semidefinite.*{smallest:.3g}"):
        vendi.score_K(K)
    with pytest.raises(ValueError, match="not positive semidefinite"):
        vendi.score([0, 1, 2], lambda a, b: K[a, b])


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="'K' argument of score_K must be symmetric"):
        vendi.score_K([[1.0, 0.5], [0.2, 1.0]])
    with pytest.raises(ValueError, match="'p' argument of score_K must hold one probability"):
        vendi.score_K(np.eye(3), p=[0.5, 0.5])
    with pytest.raises(ValueError, match="'p' argument of score_X must be non-negative"):
        vendi.score_X(np.eye(2), p=[1.0, -1.0])
    with pytest.raises(ValueError, match="'K' argument of score_K contains 1 non-finite"):
        vendi.score_K([[1.0, np.nan], [0.0, 1.0]])
    with pytest.raises(ValueError, match="'q' parameter of score_K must be in"):
        vendi.score_K(np.eye(2), q=-1)
    with pytest.raises(ValueError, match=r"all-zero row \(row 1\)"):
        vendi.score_X([[1.0, 0.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match=r"all-zero row \(row 1\)"):
        vendi.intdiv_X([[1.0, 0.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match="'samples' argument of score is empty"):
        vendi.score([], lambda a, b: 1.0)
    with pytest.raises(ValueError, match="'elems' argument of intdiv is empty"):
        vendi.intdiv([], lambda a, b: 1.0)
    with pytest.raises(ValueError, match=r"power q = 0.5, undefined .* \(i, j\) = \(0, 1\)"):
        vendi.intdiv_K([[1.0, -0.5], [-0.5, 1.0]], q=0.5)
    assert vendi.intdiv_K([[1.0, -0.5], [-0.5, 1.0]], q=2) == pytest.approx(1 - 2.5 / 4)


def test_the_librarys_vendi_score_called_like_vendi_scores_score_points_here():
    samples = [0, 0, 10, 10, 20, 20]
    with pytest.raises(TypeError, match=r"vendi_compat\.score\(samples, k\)"):
        dp.vendi_score(samples, lambda a, b: np.exp(-np.abs(a - b)))
    with pytest.raises(TypeError, match="must be a float or an array of floats"):
        dp.vendi_score(np.eye(2), "abc")


# --- the signatures ------------------------------------------------------------------------------

#: vendi-score 0.0.3's signatures, from vendi_score/vendi.py of its PyPI sdist
#: (vendi-score-0.0.3.tar.gz; the GitHub repository vertaix/Vendi-Score at c791c30 has the
#: same file except that it names intdiv's first argument ``samples``).
VENDI_SCORE_0_0_3 = {
    "score": "(samples, k, q=1, p=None, normalize=False)",
    "score_K": "(K, q=1, p=None, normalize=False)",
    "score_X": "(X, q=1, p=None, normalize=True)",
    "score_dual": "(X, q=1, normalize=True)",
    "intdiv": "(elems, k, q=1, p=None)",
    "intdiv_K": "(K, q=1, p=None)",
    "intdiv_X": "(X, q=1, p=None, normalize=True)",
}


def _bare(signature: inspect.Signature) -> str:
    return str(
        signature.replace(
            parameters=[p.replace(annotation=p.empty) for p in signature.parameters.values()],
            return_annotation=inspect.Signature.empty,
        )
    )


@pytest.mark.parametrize("name", sorted(VENDI_SCORE_0_0_3))
def test_every_function_has_vendi_scores_signature(name):
    assert _bare(inspect.signature(getattr(vendi, name))) == VENDI_SCORE_0_0_3[name]


def test_the_module_exports_exactly_vendi_scores_functions():
    assert sorted(vendi.__all__) == sorted(VENDI_SCORE_0_0_3)
    assert dp.vendi_compat is vendi


# --- against vendi-score itself, where installed ------------------------------------------------


#: vendi-score warns on its own NaN (np.inf orders) and on scipy.sparse.csr, deprecated.
quiet = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::DeprecationWarning")


@pytest.fixture
def theirs():
    return pytest.importorskip("vendi_score.vendi", reason="vendi-score is not installed")


def test_signatures_match_the_installed_vendi_score(theirs):
    for name in VENDI_SCORE_0_0_3:
        ours = [
            (p.name, p.default) for p in inspect.signature(getattr(vendi, name)).parameters.values()
        ]
        their = [
            (p.name, p.default)
            for p in inspect.signature(getattr(theirs, name)).parameters.values()
        ]
        assert ours == their, name


@quiet
@pytest.mark.parametrize("q", [0.5, 1, 2, 10, "inf"])
def test_agrees_with_vendi_score_where_it_is_right(theirs, q):
    rng = np.random.default_rng(9)
    X = rng.standard_normal((30, 40))  # d > n: full rank, no round-off eigenvalues
    Y = X / np.linalg.norm(X, axis=1, keepdims=True)
    K = Y @ Y.T
    p = rng.uniform(0.1, 1, 30)
    p /= p.sum()
    assert vendi.score_K(K, q) == pytest.approx(theirs.score_K(K, q), rel=1e-9)
    assert vendi.score_K(K, q, p=p) == pytest.approx(theirs.score_K(K, q, p=p), rel=1e-9)
    assert vendi.score_K(3 * K, q, normalize=True) == pytest.approx(
        theirs.score_K(3 * K, q, normalize=True), rel=1e-9
    )
    tall = rng.standard_normal((60, 8))  # d < n: the d × d covariance has full rank
    assert vendi.score_dual(tall, q) == pytest.approx(theirs.score_dual(tall, q), rel=1e-9)
    samples = [0, 0, 10, 10, 20, 20, 3]
    k = lambda a, b: np.exp(-np.abs(a - b))  # noqa: E731
    assert vendi.score(samples, k, q) == pytest.approx(theirs.score(samples, k, q), rel=1e-9)
    if q != "inf":
        S = np.abs(K)  # non-negative: every power q is defined
        assert vendi.intdiv_K(S, q, p=p) == pytest.approx(theirs.intdiv_K(S, q, p=p), 1e-12)
        kernel = np.array([[k(a, b) for b in samples] for a in samples])
        assert vendi.intdiv(samples, k, q) == pytest.approx(theirs.intdiv_K(kernel, q), 1e-12)
    assert vendi.score_X(X, 1) == pytest.approx(theirs.score_X(X, 1), rel=1e-9)


@quiet
def test_differs_from_vendi_score_where_it_is_wrong(theirs):
    X, K = rank_16_kernel()
    assert theirs.score_K(K, q=0) > 16 and vendi.score_K(K, q=0) == 16
    assert np.isnan(theirs.score_K(K, q=np.inf))
    assert vendi.score_K(K, q=np.inf) == pytest.approx(theirs.score_K(K, q="inf"), rel=1e-9)
    sparse = scipy.sparse.csr_matrix(block_diag(*[np.eye(1)] * 10))
    assert vendi.score_K(sparse) == pytest.approx(10.0) != pytest.approx(theirs.score_K(sparse))
    assert theirs.score_X(X, q=2) == pytest.approx(theirs.score_X(X, q=1))
    assert vendi.score_X(X, q=2) == pytest.approx(theirs.score_K(K, q=2), rel=1e-9)
    with pytest.raises(TypeError):
        theirs.intdiv_X(X)  # calls intdiv(K, q=q, p=p): q is not a function
    with pytest.raises(NameError):
        theirs.intdiv([0, 1], lambda a, b: float(a == b))  # takes elems, reads samples
    assert vendi.intdiv([0, 1], lambda a, b: float(a == b)) == 0.5
    assert vendi.intdiv_X(X) == pytest.approx(theirs.intdiv_K(K), abs=1e-12)
