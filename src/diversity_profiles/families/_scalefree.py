"""Scale-free diversity: average pairwise distance (IntDiv) and richness."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core import as_finite_array, check_distance_matrix, check_real, samples_first


def average_distance(D: ArrayLike) -> float:
    """Mean distance over pairs of distinct samples (internal diversity, IntDiv).

    Parameters
    ----------
    D : array_like, shape (n, n)
        Pairwise distances, n >= 2.

    Returns
    -------
    float
        ``sum_{i != j} D_ij / (n (n - 1))``.

    Examples
    --------
    >>> average_distance([[0, 1, 2], [1, 0, 1], [2, 1, 0]])   # (1 + 2 + 1) / 3
    1.3333333333333333
    """
    D = check_distance_matrix(D, "average_distance", min_size=2)
    n = D.shape[0]
    return float(D.sum() / (n * (n - 1)))


def group_duplicate_rows(X: np.ndarray, tol: float) -> np.ndarray:
    """Label each row by its group of rows identical up to ``tol`` (max-abs distance).

    Groups are the connected components of "within tol", so a chain of close rows
    counts once: the count does not depend on the order of the rows.
    """
    if tol == 0:
        _, labels = np.unique(X, axis=0, return_inverse=True)
        return labels.ravel()
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    pairs = cKDTree(X).query_pairs(r=tol, p=np.inf, output_type="ndarray")
    n = X.shape[0]
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def _count_items(items: list) -> int:
    """Distinct hashable items (strings, SMILES, ...)."""
    if not items:
        raise ValueError("The 'X' argument of richness is empty; give at least one item.")
    try:
        return len(set(items))
    except TypeError:
        bad = next(type(v).__name__ for v in items if not _hashable(v))
        raise TypeError(
            f"The 'X' argument of richness must be an (n, d) numeric array or a sequence of "
            f"hashable items (strings, SMILES). Got an item of type {bad}."
        ) from None


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def richness(X, *, tol: float = 0.0) -> int:
    """Number of distinct items in a set.

    Parameters
    ----------
    X : array_like or sequence of hashables
        Either an (n, d) numeric array of embeddings (rows are compared), or a
        sequence of hashable items such as strings or SMILES (compared with ``==``).
    tol : float, default 0.0
        For embeddings: rows whose largest coordinate difference is at most
        ``tol`` are the same item (chains of such rows merge). ``0`` means exact
        equality.

    Returns
    -------
    int

    Examples
    --------
    >>> richness([[0, 0], [0, 0], [1, 0]])
    2
    >>> richness([[0, 0], [1e-9, 0], [1, 0]], tol=1e-6)
    2
    >>> richness(["CCO", "CCO", "c1ccccc1"])
    2
    """
    tol = check_real(tol, "tol", "richness", low=0.0, high=np.inf, high_open=True)
    if isinstance(X, (list, tuple)) and X and isinstance(X[0], (str, bytes)):
        return _count_items(list(X))
    try:
        arr = np.asarray(samples_first(X, "X", "richness"))
    except ValueError:  # ragged: a sequence of items of different lengths
        return _count_items(list(X))
    if arr.dtype.kind in "OUS" and arr.ndim == 1:
        return _count_items(arr.tolist())
    arr = as_finite_array(arr, "X", "richness", ndim=2)
    if arr.shape[0] == 0:
        raise ValueError("The 'X' argument of richness is empty; give at least one item.")
    return int(np.unique(group_duplicate_rows(arr, tol)).size)


def average_distance_influence(row_means: np.ndarray) -> np.ndarray:
    """Influence of every sample on the average distance, from the mean distance of each
    sample to the others: ``2 (r_i - mean r)`` (the U-statistic's Hoeffding projection;
    ``sum h^2 / n^2`` is its first-order variance ``4 var(r) / n``).

    >>> average_distance_influence(np.array([1.5, 1.0, 1.5])).round(6).tolist()
    [0.333333, -0.666667, 0.333333]
    """
    r = np.asarray(row_means, dtype=np.float64)
    return 2.0 * (r - r.mean())
