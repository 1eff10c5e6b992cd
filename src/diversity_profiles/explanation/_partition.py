r"""How diversity splits between and within categories (Reeve et al. 2016).

A set's samples are the "species" (each of abundance 1/n) and a category mapping
(class labels, prompts, scaffolds) splits them into subcommunities. With a similarity
Z between samples (entries in [0, 1], unit diagonal), P[i, j] = 1/n when sample i is
in category j, w_j = Σ_i P_ij (the category's share), P̄_·j = P_·j / w_j and p = P 1:

========================  ================================  ===========================
measure                   per sample i, category j           meaning
========================  ================================  ===========================
raw alpha α               1 / (Z P)_ij                       diversity of j, counted in
                                                             the whole set's units
normalised alpha ᾱ        1 / (Z P̄)_ij                       diversity of j on its own
raw rho ρ                 (Z p)_i / (Z P)_ij                 redundancy of j
normalised rho ρ̄          (Z p)_i / (Z P̄)_ij                 representativeness of j
raw beta β = 1/ρ          (Z P)_ij / (Z p)_i                 distinctiveness of j
normalised beta β̄ = 1/ρ̄   (Z P̄)_ij / (Z p)_i                 distinct categories: N when
                                                             they share nothing, 1 alike
gamma γ                   1 / (Z p)_i                        contribution to the whole
========================  ================================  ===========================

Subcommunity values are power means of order 1 − q with weights P̄_·j; metacommunity
values (A, Ā, R, R̄, B, B̄, G) power means of those with weights w. G is the
Leinster–Cobbold diversity of the pooled set, and with Z = I, Ā is Jost's alpha (equal
category weights), G his gamma, and B̄ = G / Ā at q = 1.

References
----------
.. [1] R. Reeve et al., "How to partition diversity", arXiv:1404.6520 (2016), Table 1
   and eqs. (6)–(13).
.. [2] T. Leinster and C. A. Cobbold, "Measuring diversity: the importance of species
   similarity", Ecology 93 (2012).
.. [3] L. Jost, "Partitioning diversity into independent alpha and beta components",
   Ecology 88 (2007).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core import check_parameter

#: Per-category measures, in the order they are returned.
SUBCOMMUNITY = ("raw_alpha", "alpha", "raw_rho", "rho", "raw_beta", "beta", "gamma")


def _power_mean(weights: np.ndarray, values: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """M_{1−q}(weights, values) along the first axis, every q at once.

    ``weights`` (k, m) sum to 1 along k; entries with zero weight are left out (they may
    hold inf). Computed on logs so that large orders neither overflow nor underflow.
    """
    out = np.empty((len(qs), *weights.shape[1:]))
    present = weights > 0
    logx = np.where(present, np.log(np.where(present, values, 1.0)), 0.0)
    logw = np.where(present, np.log(np.where(present, weights, 1.0)), -np.inf)
    for k, q in enumerate(qs):
        r = 1.0 - q
        if q == 1:
            out[k] = np.sum(weights * logx, axis=0)
        elif np.isinf(q):
            out[k] = np.where(present, logx, np.inf).min(axis=0)
        else:
            terms = logw + r * logx
            top = terms.max(axis=0)
            out[k] = (top + np.log(np.exp(terms - top).sum(axis=0))) / r
    return np.exp(out)


def _partition(Z: np.ndarray, groups: np.ndarray, qs: np.ndarray) -> dict[str, np.ndarray]:
    """Subcommunity (q, N) and metacommunity (q,) measures; ``groups`` are ids 0..N−1."""
    n = len(groups)
    N = int(groups.max()) + 1
    P = np.zeros((n, N))
    P[np.arange(n), groups] = 1.0 / n
    w = P.sum(axis=0)
    Pbar = P / w
    p = P.sum(axis=1)
    ZP, ZPbar, Zp = Z @ P, Z @ Pbar, (Z @ p)[:, None]
    with np.errstate(divide="ignore"):  # zero where the sample is absent: weight 0 there
        per_sample = {
            "raw_alpha": 1.0 / ZP,
            "alpha": 1.0 / ZPbar,
            "raw_rho": Zp / ZP,
            "rho": Zp / ZPbar,
            "raw_beta": ZP / Zp,
            "beta": ZPbar / Zp,
            "gamma": np.broadcast_to(1.0 / Zp, P.shape),
        }
    out = {}
    for name in SUBCOMMUNITY:
        sub = _power_mean(Pbar, per_sample[name], qs)
        out[name] = sub
        # Column k of sub.T holds order q_k: average it with the same order.
        weights = np.broadcast_to(w[:, None], sub.T.shape)
        out[f"meta_{name}"] = _power_mean(weights, sub.T, qs).diagonal().copy()
    return out


def partition_diversity(
    Z: ArrayLike, categories: ArrayLike, q: ArrayLike = (0.0, 1.0, 2.0, np.inf)
) -> dict:
    """Alpha, beta (rho) and gamma diversity of one set split into categories.

    Parameters
    ----------
    Z : array_like, shape (n, n)
        Similarity between samples: entries in [0, 1], unit diagonal (Z = I counts
        samples as distinct species).
    categories : array_like, shape (n,)
        Category of each sample (any hashable labels).
    q : float or array_like
        Orders in [0, inf].

    Returns
    -------
    dict
        ``"categories"`` (the labels, sorted), each name in :data:`SUBCOMMUNITY` as an
        array (q, category) and ``"meta_<name>"`` as an array (q,).

    Examples
    --------
    Two categories with nothing in common, two distinct samples each:

    >>> import numpy as np
    >>> out = partition_diversity(np.eye(4), ["a", "a", "b", "b"], q=[0, 1, 2])
    >>> out["meta_gamma"].round(6).tolist(), out["meta_alpha"].tolist(), out["meta_beta"].tolist()
    ([4.0, 4.0, 4.0], [2.0, 2.0, 2.0], [2.0, 2.0, 2.0])
    """
    func = "partition_diversity"
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim != 2 or Z.shape[0] != Z.shape[1] or not np.isfinite(Z).all():
        raise ValueError(f"The 'Z' argument of {func} must be a finite square matrix.")
    if (Z < 0).any() or (Z > 1 + 1e-12).any() or not np.allclose(np.diag(Z), 1.0):
        raise ValueError(
            f"The 'Z' argument of {func} must hold similarities in [0, 1] with a unit "
            f"diagonal. Got entries in [{Z.min():.3g}, {Z.max():.3g}]."
        )
    labels = np.asarray(categories)
    if labels.shape != (Z.shape[0],):
        raise ValueError(
            f"The 'categories' argument of {func} needs one label per sample ({Z.shape[0]}). "
            f"Got shape {labels.shape}."
        )
    qs, _ = check_parameter(q, "q", func, low=0.0, allow_inf=True)
    names, groups = np.unique(labels, return_inverse=True)
    return {"categories": names, **_partition(Z, groups.ravel(), np.atleast_1d(qs))}
