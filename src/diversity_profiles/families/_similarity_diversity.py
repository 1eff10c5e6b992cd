"""Leinster–Cobbold similarity-sensitive diversity: the ecologists' profile over q.

The diversity of order q of a distribution p over samples whose similarities
are Z: an effective number of completely distinct samples that counts near
duplicates as partly the same. One matrix-vector product ``Z p`` serves every
order; the order only changes how the vector ``(Z p)_i`` is averaged.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core import MATRIX_RTOL, check_parameter, check_similarity_matrix, check_weights

#: Orders this close to 1 use log1p/expm1 (the generic formula divides two vanishing terms).
_NEAR_ONE = 0.5


def _check_unit_interval(Z: np.ndarray, name: str, func: str) -> np.ndarray:
    """Entries in [0, 1]; round-off within MATRIX_RTOL outside is clipped back."""
    low, high = float(Z.min()), float(Z.max())
    if low < -MATRIX_RTOL or high > 1.0 + MATRIX_RTOL:
        bad = Z < -MATRIX_RTOL if low < -MATRIX_RTOL else Z > 1.0 + MATRIX_RTOL
        i, j = (int(k) for k in np.argwhere(bad)[0])
        raise ValueError(
            f"The {name!r} argument of {func} must hold similarities in [0, 1] (Leinster–Cobbold "
            f"need 0 <= Z[i, j] <= 1). Got {name}[{i}, {j}] = {float(Z[i, j])!r}. Use a "
            f"similarity in [0, 1], e.g. exp(-t * D) of distances D, or clip a signed one "
            f"with np.clip(Z, 0, 1)."
        )
    return np.clip(Z, 0.0, 1.0)


def _log_diversity(logs: np.ndarray, p: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """``log (sum_i p_i exp((q - 1) a_i))^(1 / (1 - q))`` for every order in ``qs``.

    ``p`` sums to 1 and ``log p_i <= a_i <= 0`` (``a_i = log((Z p)_i / max_j (Z p)_j)``).
    """
    out = np.empty(qs.shape)
    out[qs == 1] = -np.dot(p, logs)
    out[np.isinf(qs)] = -logs.max()  # 0 here; kept so the helper holds for any a
    near = (np.abs(qs - 1) < _NEAR_ONE) & (qs != 1)
    if near.any():
        # sum p_i e^{(q-1) a_i} = 1 + sum p_i expm1((q-1) a_i) because sum p_i = 1.
        q = qs[near][:, None]
        inner = np.expm1((q - 1) * logs[None, :]) @ p
        out[near] = np.log1p(inner) / (1 - qs[near])
    far = ~near & (qs != 1) & np.isfinite(qs)
    if far.any():
        # log p_i joins the exponent: for a tiny p_i, p_i and e^{(q-1) a_i} would underflow
        # and overflow, their product does not. Every exponent is <= 0 (a_i >= log p_i) and the
        # largest p_i's is >= -log n, so subtracting the top only sharpens the sum.
        e = (qs[far][:, None] - 1) * logs[None, :] + np.log(p)[None, :]
        top = e.max(axis=1)
        log_sum = top + np.log(np.exp(e - top[:, None]).sum(axis=1))
        out[far] = log_sum / (1 - qs[far])
    return out


def _diversity_of_order(Z: np.ndarray, p: np.ndarray | None, qs: np.ndarray) -> np.ndarray:
    """D_q^Z(p) at every order in ``qs`` (1-D) for a checked Z in [0, 1] with unit diagonal.

    ``p`` sums to 1 (None: uniform). Only the support p_i > 0 enters the sums; there
    ``(Z p)_i >= p_i > 0`` because Z_ii = 1 and Z >= 0.
    """
    n = Z.shape[0]
    p = np.full(n, 1.0 / n) if p is None else p
    support = p > 0
    zp = Z[support] @ p
    ps = p[support]  # sums to 1 already: only exact zeros were left out
    # D_q = D_inf * (power mean of zp_max / zp_i): exact whenever Zp is constant on the support.
    top = zp.max()
    out = np.exp(_log_diversity(np.log(zp / top), ps, qs)) / top
    # Closed forms with no exp/log, so exact cases come out exact (Z = I, q = 0: the support).
    out[qs == 0] = np.sum(ps / zp)
    out[np.isinf(qs)] = 1.0 / top
    return out


def similarity_diversity(
    Z: ArrayLike, q: ArrayLike = 1.0, *, weights: ArrayLike | None = None
) -> float | np.ndarray:
    r"""Leinster–Cobbold similarity-sensitive diversity of order ``q``.

    The effective number of completely distinct samples when sample ``i`` and
    ``j`` are ``Z[i, j]`` alike: identical samples count as one (with their
    abundances summed), completely dissimilar ones each count in full.

    Parameters
    ----------
    Z : array_like, shape (n, n)
        Similarity matrix: symmetric, entries in [0, 1], unit diagonal. It need
        not be positive semidefinite (unlike the kernel of :func:`vendi_score`).
        Entries within 1e-6 outside [0, 1] are treated as round-off and clipped.
    q : float or array_like of float
        Order(s) in [0, inf]. ``q=0`` weighs rare samples most, ``q=inf`` only the
        most crowded one. ``np.inf`` and ``float("inf")`` are accepted.
    weights : array_like, shape (n,), optional
        Relative abundance of each sample (normalised to sum 1); uniform by
        default. Samples with weight 0 are outside the community.

    Returns
    -------
    float or numpy.ndarray
        A Python float for scalar ``q``, an array with the shape of ``q`` otherwise.

    Notes
    -----
    With :math:`p` the abundances and :math:`(Zp)_i = \sum_j Z_{ij} p_j` the
    ordinariness of sample :math:`i`, summing over the support :math:`p_i > 0`,

    .. math:: {}^qD^Z(p) = \left(\sum_{i:\,p_i>0} p_i\,(Zp)_i^{\,q-1}\right)^{1/(1-q)}

    (Leinster & Cobbold, eq. 1), with the limits
    :math:`\exp(-\sum_i p_i \log (Zp)_i)` at ``q=1`` and
    :math:`1/\max_{i:\,p_i>0} (Zp)_i` at ``q=inf``. It is nonincreasing in q
    and lies in [1, number of samples with p_i > 0]. ``Z = I`` gives the Hill
    numbers of p. Duplicates (equal rows, ``Z[i, j] = 1``) behave as one sample
    carrying their summed abundance, so a set with a twin is not more diverse
    than the set without it.

    For ``Z = exp(-t D)`` of a finite Euclidean point set, the order-0 diversity
    at uniform p is the spread, and the maximum over p of the diversity (the
    same for every q, Leinster & Meckes) lies between the spread and the
    magnitude.

    Orders near 1 are computed with ``log1p``/``expm1`` and other orders in
    logarithms with the largest term factored out, so every order, including
    ``1 ± 1e-9`` and ``q = 50``, is accurate to a few ulps.

    References
    ----------
    .. [1] T. Leinster and C. A. Cobbold, "Measuring diversity: the importance of
       species similarity", Ecology 93(3), 477–489, 2012.
    .. [2] T. Leinster and M. W. Meckes, "Maximizing diversity in biology and
       beyond", Entropy 18(3), 88, 2016.

    Examples
    --------
    >>> import numpy as np
    >>> similarity_diversity(np.eye(3))
    3.0
    >>> similarity_diversity(np.eye(3), q=[0, 1, 2, np.inf])
    array([3., 3., 3., 3.])
    >>> similarity_diversity(np.ones((4, 4)), q=[0, 1, 2, np.inf])
    array([1., 1., 1., 1.])
    >>> similarity_diversity(np.eye(2), q=[0, 2, np.inf], weights=[3, 1])  # Hill numbers of p
    array([2.        , 1.6       , 1.33333333])
    >>> similarity_diversity([[1, .5], [.5, 1]], q=2)  # 2 / (1 + z) at uniform p
    1.3333333333333333
    """
    func = "similarity_diversity"
    qs, scalar = check_parameter(q, "q", func, low=0.0, allow_inf=True)
    Z = check_similarity_matrix(Z, func, "Z")
    Z = _check_unit_interval(Z, "Z", func)
    p = check_weights(weights, Z.shape[0], func)
    out = _diversity_of_order(Z, p, qs)
    return float(out[0]) if scalar else out.reshape(np.shape(q))


# --- As a family of dp.profiles (its registry entry: pipeline/_registry.py) ---

#: How the condition's similarity becomes a Leinster–Cobbold Z (entries in [0, 1]).
Z_OF_KERNEL = {
    "cosine similarity": "max(cosine similarity, 0)",
    "Tanimoto similarity": "Tanimoto similarity",
    "gaussian": "Gaussian kernel exp(-d^2 / (2 h^2)) of the distance",
    "precomputed similarity": "the given similarity, negative entries set to 0",
}


def similarity_diversity_values(
    Z: np.ndarray, p: np.ndarray | None, qs: np.ndarray, where: str
) -> np.ndarray:
    """The family's values on the order grid ``qs`` for a checked similarity ``Z``.

    Entries above 1 are refused (naming ``where``, the matrix's origin); negative ones
    count as no similarity (Leinster–Cobbold need 0 <= Z <= 1).
    """
    if float(Z.max()) > 1.0 + MATRIX_RTOL:
        i, j = np.unravel_index(int(np.argmax(Z)), Z.shape)
        raise ValueError(
            f"{where} passed to profiles has entry ({i}, {j}) = "
            f"{float(Z[i, j])!r} > 1; the similarity_diversity family needs similarities in "
            f"[0, 1]. Rescale the matrix, or leave 'similarity_diversity' out of families."
        )
    return _diversity_of_order(np.clip(Z, 0.0, 1.0), p, qs)
