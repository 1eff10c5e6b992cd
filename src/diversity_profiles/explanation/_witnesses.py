"""Which samples make a profile what it is: the witnesses behind each family's value.

Numerical core (numpy/scipy only), on checked input. :func:`explain` stores these in
the profile tree; they are also usable alone.

- Vendi: the leading modes of K/n (eigenvalue share, unit loading vectors) and a
  per-sample split of the order-1 (Shannon) entropy of the spectrum.
- Magnitude: the weighting w = Z_t⁻¹1, whose sum is the magnitude.
- Circles: one τ-separated set of the stated size (exact or greedy witness).
- Nearest-neighbour distances and near-duplicate groups (richness's classes).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..core import (
    as_finite_array,
    check_distance_matrix,
    check_parameter,
    check_similarity_matrix,
    one_of,
    samples_first,
)


class Modes(NamedTuple):
    """Leading eigenpairs of K/n: ``share[k]`` (eigenvalue, a fraction of 1) and
    ``loadings[k]`` (a unit eigenvector over the samples, sign fixed so its largest
    entry is positive)."""

    share: np.ndarray
    loadings: np.ndarray


def _fix_signs(U: np.ndarray) -> np.ndarray:
    """Eigenvectors have no sign; make each row's largest-magnitude entry positive."""
    big = U[np.arange(U.shape[0]), np.abs(U).argmax(axis=1)]
    return U * np.where(big < 0, -1.0, 1.0)[:, None]


def _spectrum(K: np.ndarray | None, X: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Every eigenpair of K/n above round-off, largest first: (λ, U with unit rows over samples).

    With unit-row embeddings X (cosine kernel K = X Xᵀ) the d × d dual XᵀX/n is used when
    d < n: its eigenvectors v map to unit sample vectors u = X v / sqrt(n λ).
    """
    from scipy.linalg import eigh

    from ..families import rank_cutoff

    if X is not None:
        n, d = X.shape
        if d < n:
            lam, V = eigh(X.T @ X / n, driver="evd", check_finite=False)
            keep = lam > rank_cutoff(max(lam.max(), 0.0), n)
            lam, V = lam[keep][::-1], V[:, keep][:, ::-1]
            U = (X @ V / np.sqrt(n * lam)).T
            return lam, U
        K = X @ X.T
    assert K is not None  # callers pass K or X
    n = K.shape[0]
    lam, V = eigh(K / n, driver="evd", check_finite=False)
    keep = lam > rank_cutoff(max(lam.max(), 0.0), n)
    return lam[keep][::-1], V[:, keep][:, ::-1].T


def _modes(K, X, n_modes: int) -> tuple[Modes, np.ndarray]:
    """Leading modes and the per-sample Shannon contributions (one eigendecomposition)."""
    lam, U = _spectrum(K, X)
    lam = lam / lam.sum()  # the spectrum Vendi uses (trace 1 for a unit diagonal)
    contrib = (lam * -np.log(lam)) @ (U**2)
    k = min(n_modes, lam.size)
    return Modes(lam[:k], _fix_signs(U[:k])), contrib


def vendi_modes(K: ArrayLike, *, n_modes: int = 5) -> Modes:
    """The leading modes of a similarity kernel: what the Vendi score counts.

    Parameters
    ----------
    K : array_like, shape (n, n)
        Positive semidefinite similarity with unit diagonal.
    n_modes : int, default 5
        How many modes to return (fewer if the rank is lower).

    Returns
    -------
    Modes
        ``share`` (the largest eigenvalues of K/n, each a fraction of the total 1) and
        ``loadings`` (n_modes × n, unit eigenvectors). The samples with the largest
        loadings of a mode are the ones it is made of.

    Examples
    --------
    >>> import numpy as np
    >>> K = np.zeros((4, 4)); K[:3, :3] = 1; K[3, 3] = 1   # three copies and one other
    >>> m = vendi_modes(K, n_modes=2)
    >>> m.share.round(3).tolist(), m.loadings.round(3).tolist()
    ([0.75, 0.25], [[0.577, 0.577, 0.577, 0.0], [0.0, 0.0, 0.0, 1.0]])
    """
    K = check_similarity_matrix(K, "vendi_modes")
    return _modes(K, None, int(n_modes))[0]


def entropy_contributions(K: ArrayLike) -> np.ndarray:
    r"""Each sample's share of the order-1 (Shannon) entropy of the Vendi spectrum.

    With K/n = Σ_k λ_k u_k u_kᵀ (unit eigenvectors u_k),

    .. math:: c_i = \sum_k \lambda_k (-\log\lambda_k)\, u_{ik}^2 .

    Since Σ_i u_ik² = 1, Σ_i c_i = H = −Σ_k λ_k log λ_k = log Vendi₁: every sample gets
    the part of each mode's entropy that its squared loading carries. Samples in a
    crowded mode (large λ, small −log λ) contribute little; isolated samples contribute
    about log(n)/n each. Only q = 1 splits additively this way (other orders are logs
    of power sums, not sums).

    Examples
    --------
    >>> import numpy as np
    >>> c = entropy_contributions(np.eye(4))          # 4 distinct samples: log 4 / 4 each
    >>> np.allclose(c, np.log(4) / 4)
    True
    """
    K = check_similarity_matrix(K, "entropy_contributions")
    return _modes(K, None, 0)[1]


def _duplicate_labels(D: np.ndarray, within: float) -> np.ndarray:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    close = D <= within
    np.fill_diagonal(close, True)
    return connected_components(csr_matrix(close), directed=False)[1]


def _solve_weights(Dd: np.ndarray, t: float, mean: float) -> np.ndarray:
    from scipy.linalg import solve

    from ..families import SM_SWITCH

    ones = np.ones(len(Dd))
    if len(Dd) == 1:
        return ones
    if t * mean < SM_SWITCH:
        # Z_t = 11ᵀ − t·E_t with E_t = −expm1(−tD)/t: Sherman–Morrison gives
        # Z_t⁻¹1 = y / (c − t), y = E_t⁻¹1, c = 1ᵀy (accurate where Z_t ≈ 11ᵀ).
        E = -np.expm1(-t * Dd) / t
        y = solve(E, ones, assume_a="sym", check_finite=False)
        return y / (y.sum() - t)
    return solve(np.exp(-t * Dd), ones, assume_a="sym", check_finite=False)


def weights_on_checked(D: np.ndarray, t: float) -> np.ndarray:
    """w = Z_t⁻¹1 on the distinct points, each point's weight split equally among its copies."""
    from ..families import MERGE_TOL

    n = D.shape[0]
    off = D[~np.eye(n, dtype=bool)]
    mean = float(off.mean()) if n > 1 else 0.0
    labels = _duplicate_labels(D, MERGE_TOL * min(mean, 1.0 / t))
    keep = np.unique(labels, return_index=True)[1]
    Dd = D[np.ix_(keep, keep)]
    try:
        wd = _solve_weights(Dd, t, mean)
    except np.linalg.LinAlgError:
        warnings.warn(
            f"magnitude_weights: Z_t is singular at t={t!r} (a pole of the magnitude function; "
            f"D is not Euclidean). The weights are NaN at this scale; choose another t.",
            RuntimeWarning,
            stacklevel=3,
        )
        return np.full(n, np.nan)
    copies = np.bincount(labels)
    return wd[labels] / copies[labels]  # component labels are 0..m-1, in keep's order


def magnitude_weights(D: ArrayLike, t: float) -> np.ndarray:
    """The magnitude weighting w = Z_t⁻¹1 (Z_t = exp(−t D)) at one scale.

    Its sum is the magnitude at t. Samples with large weights carry the effective size;
    weights can be negative (points "shadowed" by others; kept as they are). Copies of
    one point (closer than magnitude's merge threshold) share that point's weight equally.

    Examples
    --------
    >>> magnitude_weights([[0, 1], [1, 0]], 1.0).round(4).tolist()   # 1 / (1 + e^-1) each
    [0.7311, 0.7311]
    >>> magnitude_weights([[0, 0, 1], [0, 0, 1], [1, 1, 0]], 1.0).round(4).tolist()
    [0.3655, 0.3655, 0.7311]
    """
    D = check_distance_matrix(D, "magnitude_weights")
    check_parameter(t, "t", "magnitude_weights", low=0.0, low_open=True)
    return weights_on_checked(D, float(t))


def packing_on_checked(
    D: np.ndarray,
    tau: float,
    above: np.ndarray,
    method: str,
    seed: int,
    time_limit: float | None = None,
) -> tuple[np.ndarray, str]:
    """A τ-separated set (boolean mask) and how it was found ("exact" or "greedy").

    ``above`` are the grid thresholds ≥ τ of the stored sweep: the greedy witness
    repeats the sweep's downward pass (a set independent at τ' stays so below τ'), so
    its size is the stored lower bound. The exact witness is CP-SAT's optimum at τ
    (``method`` as in :func:`circles`; a CP-SAT search stopped by ``time_limit`` gives
    its best set, labelled "greedy": valid, not proved maximum).
    """
    from ..families import (
        AUTO_EXACT_MAX_N,
        clique_cover,
        graph_at,
        greedy_independent_set,
        load_cp_model,
        solve_threshold,
    )

    n = D.shape[0]
    if not np.array_equal(D, D.T):
        D = (D + D.T) / 2  # as the sweep does: G_τ must be undirected
    off = D[~np.eye(n, dtype=bool)]
    if tau < off.min():
        return np.ones(n, dtype=bool), "exact"
    if tau >= off.max():
        out = np.zeros(n, dtype=bool)
        out[0] = True
        return out, "exact"
    at = graph_at(D)
    rank = np.random.default_rng(seed).permutation(n)
    best = None
    for thr in sorted(set(np.asarray(above, dtype=float).tolist()) | {tau}, reverse=True):
        if thr < tau or thr >= off.max():
            continue
        A, lab, ncomp, hard = at(thr)
        own = greedy_independent_set(A, lab, hard, rank)
        if best is not None:
            kept = np.bincount(lab[best], minlength=ncomp)
            own = np.where((kept > np.bincount(lab[own], minlength=ncomp))[lab], best, own)
        best = own
    assert best is not None  # tau < max(off) is tried, so some threshold set best
    graph = at(tau)
    cover = np.unique(clique_cover(graph[0], graph[1], graph[3], rank), return_inverse=True)[1]
    if best.sum() == cover.max() + 1:
        return best, "exact"  # the greedy set meets the clique-cover bound: a certificate
    if not (method == "exact" or (method == "auto" and n <= AUTO_EXACT_MAX_N)):
        return best, "greedy"
    try:
        cp_model = load_cp_model()
    except ImportError:
        return best, "greedy"
    found, lo, hi, _ = solve_threshold(cp_model, graph, cover, best.copy(), seed, time_limit)
    return found, "exact" if lo == hi else "greedy"


def circles_packing(
    D: ArrayLike, tau: float, *, method: str = "auto", seed: int = 0
) -> tuple[np.ndarray, str]:
    """One largest set of samples pairwise farther apart than ``tau`` (a Circles witness).

    Returns
    -------
    (numpy.ndarray of int, str)
        Indices of the chosen samples and ``"exact"`` (a maximum set, proved by CP-SAT)
        or ``"greedy"`` (a valid set, a lower bound).

    Examples
    --------
    >>> idx, how = circles_packing([[0, 1, 3], [1, 0, 1], [3, 1, 0]], 1.5)
    >>> idx.tolist(), how
    ([0, 2], 'exact')
    """
    D = check_distance_matrix(D, "circles_packing", min_size=1)
    check_parameter(tau, "tau", "circles_packing", low=0.0)
    one_of(method, "method", "circles_packing", ("auto", "exact", "greedy"))
    mask, how = packing_on_checked(D, float(tau), np.array([]), method, seed, 10.0)
    return np.flatnonzero(mask), how


def nearest_neighbours(D: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Distance to, and index of, every sample's nearest other sample.

    Examples
    --------
    >>> d, j = nearest_neighbours([[0, 1, 3], [1, 0, 2], [3, 2, 0]])
    >>> d.tolist(), j.tolist()
    ([1.0, 1.0, 2.0], [1, 0, 1])
    """
    D = check_distance_matrix(D, "nearest_neighbours", min_size=2)
    return _nearest(D)


def _nearest(D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    masked = D.copy()
    np.fill_diagonal(masked, np.inf)
    j = masked.argmin(axis=1)
    return masked[np.arange(len(j)), j], j


def _first_seen(labels: np.ndarray) -> np.ndarray:
    """Relabel groups 0, 1, ... in order of first appearance (stable across runs)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inverse.ravel()]


def duplicate_groups(X: np.ndarray | None, D: np.ndarray | None, tol: float = 0.0) -> np.ndarray:
    """Richness's classes: group id of every sample (ids in order of first appearance).

    Embeddings group rows within ``tol`` (max-abs, chained); a distance matrix groups
    samples within distance ``tol``. The number of groups is the richness.

    Examples
    --------
    >>> duplicate_groups(np.array([[1., 0], [0, 1], [1, 0]]), None).tolist()
    [0, 1, 0]
    """
    from ..families import group_duplicate_rows

    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(
            f"The 'tol' argument of duplicate_groups must be a float >= 0. Got {tol!r}."
        )
    if X is not None:
        X = as_finite_array(
            samples_first(X, "X", "duplicate_groups"), "X", "duplicate_groups", ndim=2
        )
        return _first_seen(group_duplicate_rows(X, tol))
    if D is None:
        raise ValueError("duplicate_groups needs embeddings X or a distance matrix D; got neither.")
    return _first_seen(_duplicate_labels(check_distance_matrix(D, "duplicate_groups"), tol))
