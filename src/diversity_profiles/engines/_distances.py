"""Pairwise distances and the similarity kernels that go with them.

Distances come from one GEMM (``|x|^2 + |y|^2 - 2 x.y`` or ``1 - x.y``), which
loses all relative accuracy for near-duplicates; those pairs are recomputed from
the difference ``x - y``, and identical rows get an exact 0, so that magnitude
sees duplicates as duplicates and energy's ``d^-s`` is not round-off noise.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike

from ..core import (
    as_finite_array,
    check_pairwise_memory,
    counts_as_pair_work,
    one_of,
    samples_first,
)

#: Distances computed from embeddings; "precomputed" means the user passes D.
EMBEDDING_DISTANCES = ("euclidean", "cosine", "tanimoto", "jaccard")
DISTANCES = (*EMBEDDING_DISTANCES, "precomputed")

#: A pair is "close" (recomputed from the difference) below this share of the norms.
_CLOSE = 1e-4


#: Embeddings whose largest coordinate lies outside [2**-400, 2**400] are rescaled before
#: any square is formed: beyond it |x|^2 over- or underflows float64 for realistic d.
_SAFE_EXPONENT = 400


def _pow2_scale(m: np.ndarray | float) -> np.ndarray:
    """A power of two within a factor 2 of ``m`` (1 where m is 0): dividing by it is exact."""
    m = np.asarray(m, dtype=np.float64)
    _, e = np.frexp(np.where(m > 0, m, 1.0))
    return np.ldexp(1.0, e - 1)


def row_norms(X: np.ndarray) -> np.ndarray:
    """Euclidean row norms that neither overflow nor underflow in the squares.

    Each row is divided by a power of two near its largest entry first (exact), so
    rows with entries near 1e160 or 1e-170 get their norm to full precision.

    Examples
    --------
    >>> row_norms(np.array([[3e200, 4e200], [3e-200, 4e-200], [0.0, 0.0]])).tolist()
    [5e+200, 5e-200, 0.0]
    """
    scale = _pow2_scale(np.max(np.abs(X), axis=1))
    Y = X / scale[:, None]
    return scale * np.sqrt(np.einsum("ij,ij->i", Y, Y))


def _unit_rows(X: np.ndarray, func: str, name: str) -> np.ndarray:
    norms = row_norms(X)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise ValueError(
            f"{func}: {zero.size} row(s) of {name} are all zeros (first: row {zero[0]}); the "
            f"cosine distance is undefined for them. Drop those rows or use distance='euclidean'."
        )
    return X / norms[:, None]


def _check_binary(X: np.ndarray, func: str, name: str) -> None:
    if not np.isin(X, (0.0, 1.0)).all():
        bad = float(X[~np.isin(X, (0.0, 1.0))][0])
        raise ValueError(
            f"{func}: the Tanimoto/Jaccard distance needs binary fingerprints (0/1 or bool) in "
            f"{name}. Got the value {bad!r}. Binarise the features or use distance='cosine'."
        )


def prepare_embeddings(X: ArrayLike, distance: str, func: str, name: str = "X") -> np.ndarray:
    """Validate embeddings for ``distance``; cosine rows come back unit-normalised.

    A DataArray's samples are its ``"sample"`` dimension, else its first (see
    :func:`~diversity_profiles.core.samples_first`).
    """
    arr = as_finite_array(samples_first(X, name, func), name, func, ndim=2)
    if arr.shape[1] == 0:
        raise ValueError(f"The {name!r} argument of {func} has no features (shape {arr.shape}).")
    if distance == "cosine":
        return _unit_rows(arr, func, name)
    if distance in ("tanimoto", "jaccard"):
        _check_binary(arr, func, name)
    return arr


def distance_block(
    A: np.ndarray, B: np.ndarray, distance: str
) -> tuple[np.ndarray, np.ndarray | None]:
    """Distances between the rows of A and B (already prepared), and the mask of close pairs.

    Close pairs (nearly duplicate rows) lose their digits in the GEMM identity and are
    recomputed by :func:`refine_close_pairs`.
    """
    G = A @ B.T
    if distance == "cosine":
        D = np.subtract(1.0, G, out=G)
        np.maximum(D, 0.0, out=D)
        return D, D < _CLOSE
    if distance == "euclidean":
        norms = np.einsum("ij,ij->i", A, A)[:, None] + np.einsum("ij,ij->i", B, B)[None, :]
        sq = G
        sq *= -2.0
        sq += norms
        close = sq < _CLOSE * norms
        np.maximum(sq, 0.0, out=sq)
        return np.sqrt(sq, out=sq), close
    # tanimoto / jaccard on 0/1 rows: 1 - |a & b| / |a | b|; integer counts, so exact.
    union = A.sum(1)[:, None] + B.sum(1)[None, :] - G
    with np.errstate(invalid="ignore", divide="ignore"):
        D = np.where(union > 0, 1.0 - G / np.where(union > 0, union, 1.0), 0.0)
    np.maximum(D, 0.0, out=D)
    return D, None


def refine_close_pairs(
    D: np.ndarray, A: np.ndarray, B: np.ndarray, distance: str, close: np.ndarray | None
) -> None:
    """Recompute near-duplicate pairs from the difference of the rows, in place."""
    if close is None:
        return
    rows, cols = np.nonzero(close)
    for start in range(0, rows.size, 65536):
        r, c = rows[start : start + 65536], cols[start : start + 65536]
        diff = A[r].astype(np.float64) - B[c].astype(np.float64)
        if distance == "cosine":  # |u - v|^2 / 2 for unit rows
            D[r, c] = np.einsum("ij,ij->i", diff, diff) / 2.0
        else:  # scaled: a difference of 1e-170 must not square to 0
            D[r, c] = row_norms(diff)


def _distances(A: np.ndarray, B: np.ndarray, distance: str) -> np.ndarray:
    """Refined distances between the rows of A and B.

    Euclidean inputs with entries beyond 2**±400 are computed on a copy divided by
    a power of two (exact) and scaled back, so squares neither overflow nor
    underflow; a distance beyond the float64 range is refused.
    """
    scale = 1.0
    if distance == "euclidean" and A.size and B.size:
        top = max(float(np.max(np.abs(A))), float(np.max(np.abs(B))))
        if top > 0 and not 2.0**-_SAFE_EXPONENT <= top <= 2.0**_SAFE_EXPONENT:
            scale = float(_pow2_scale(top))
            A, B = A / scale, B / scale
    D, close = distance_block(A, B, distance)
    refine_close_pairs(D, A, B, distance, close)
    if scale != 1.0:
        with np.errstate(over="ignore"):
            D *= scale
        if not np.isfinite(D).all():
            raise ValueError(
                "The Euclidean distances of these embeddings exceed the float64 range "
                f"(coordinates up to {top:.3g}). Divide the embeddings by a constant first; "
                "scale-free families (Vendi with cosine, richness) do not change."
            )
    return D


#: Tile edge of :func:`distance_matrix`: a 2048² float64 tile is 32 MB, large enough for
#: GEMM to run near peak.
TILE = 2048

#: Source rows per strip of :func:`put_transposed`.
TRANSPOSE_STRIP = 64


def put_transposed(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src.T``, by strips of ``src``'s rows.

    numpy's transposed copy of a whole 2048² tile walks the source down its columns, a
    power-of-two stride that thrashes the cache: 30 ms (float32) and 45 ms (float64) per
    tile into a 30,000-wide K on this machine; by strips of 64 rows, 3.7 ms and 9.9 ms.

    >>> dst = np.zeros((3, 2)); put_transposed(dst, np.arange(6.0).reshape(2, 3)); dst
    array([[0., 3.],
           [1., 4.],
           [2., 5.]])
    """
    for i in range(0, src.shape[0], TRANSPOSE_STRIP):
        dst[:, i : i + TRANSPOSE_STRIP] = src[i : i + TRANSPOSE_STRIP].T


@counts_as_pair_work
def distance_matrix(X: np.ndarray, distance: str) -> np.ndarray:
    """Full n × n distances of prepared embeddings (symmetric, exact zero diagonal).

    Formed tile by tile over the upper triangle, each tile mirrored: no second n × n
    matrix and no full-size temporaries. One GEMM over all n² pairs with a symmetrised
    copy took 7.3–9.3 s at n = 10,000, d = 768 on the 2-core machine; the tiles 2.1 s.
    """
    n = X.shape[0]
    D = np.empty((n, n))
    for i in range(0, n, TILE):
        rows = slice(i, min(i + TILE, n))
        for j in range(i, n, TILE):
            cols = slice(j, min(j + TILE, n))
            T = _distances(X[rows], X[cols], distance)
            if i == j:
                T = (T + T.T) / 2  # GEMM round-off can differ between (i, j) and (j, i)
                np.fill_diagonal(T, 0.0)
            D[rows, cols] = T
            if i != j:
                put_transposed(D[cols, rows], T)
    return D


def pairwise_distances(X: ArrayLike, distance: str = "euclidean") -> np.ndarray:
    """Pairwise distance matrix of embeddings.

    Parameters
    ----------
    X : array_like, shape (n, d)
        One sample per row; for ``"tanimoto"``/``"jaccard"`` binary fingerprints.
    distance : {"euclidean", "cosine", "tanimoto", "jaccard"}
        ``"cosine"`` is ``1 - cos(x, y)`` in [0, 2]; ``"tanimoto"`` and
        ``"jaccard"`` are ``1 - |a & b| / |a | b|`` (identical on binary data).

    Returns
    -------
    numpy.ndarray, shape (n, n)
        Symmetric, zero diagonal; identical rows are at distance exactly 0.

    Examples
    --------
    >>> pairwise_distances([[0, 0], [3, 4]])
    array([[0., 5.],
           [5., 0.]])
    >>> pairwise_distances([[1, 1, 0], [1, 0, 0]], "tanimoto")
    array([[0. , 0.5],
           [0.5, 0. ]])
    """
    func = "pairwise_distances"
    one_of(distance, "distance", func, EMBEDDING_DISTANCES)
    arr = prepare_embeddings(X, distance, func)
    check_pairwise_memory(arr.shape[0], func, what="the distance matrix", copies=2)
    return distance_matrix(arr, distance)


def iter_distance_blocks(X: np.ndarray, distance: str, block: int = 2048) -> Iterator[np.ndarray]:
    """Each unordered pair's distance exactly once, in blocks, never forming n × n.

    Yields 1-D arrays; the product runs in float32 when X is float32.
    """
    n = X.shape[0]
    for i in range(0, n, block):
        A = X[i : i + block]
        for j in range(i, n, block):
            B = X[j : j + block]
            D = _distances(A, B, distance)
            if i == j:
                yield D[np.triu_indices(D.shape[0], k=1)]
            else:
                yield D.ravel()


def median_bandwidth(distance_matrices: list[np.ndarray]) -> float:
    """Median heuristic: the median of the pooled positive pairwise distances."""
    pooled = np.concatenate([D[np.triu_indices(D.shape[0], k=1)] for D in distance_matrices])
    positive = pooled[pooled > 0]
    return float(np.median(positive)) if positive.size else 1.0


def gaussian_kernel(D: np.ndarray, bandwidth: float) -> np.ndarray:
    """``exp(-D^2 / (2 h^2))``: positive semidefinite whenever D is Euclidean."""
    # (D / h)^2, not D^2 / h^2: distances near 1e-170 or 1e170 must not under/overflow.
    with np.errstate(over="ignore"):  # exp(-inf) = 0 is the right similarity there
        scaled = D / bandwidth
        return np.exp(-0.5 * scaled * scaled)
