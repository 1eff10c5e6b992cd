"""The Vendi score family: Hill numbers of a similarity kernel's eigenvalues.

One eigendecomposition serves every order q; the order only changes how the
eigenvalue vector is summarised.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core import (
    as_finite_array,
    check_parameter,
    check_similarity_matrix,
    check_weights,
    samples_first,
)

#: Eigenvalues of K/n below ``-PSD_TOL * lambda_max`` mean K is not positive semidefinite.
PSD_TOL = 1e-6

#: Rows per block when forming X^T X, small enough to stay cache friendly.
_BLOCK_ROWS = 4096


def rank_cutoff(lam_max: float, size: int) -> float:
    """Eigenvalues below this are round-off, not diversity.

    A symmetric eigensolver returns each eigenvalue with absolute error about
    ``size * eps * lambda_max``; counting those as real inflates low orders
    (q = 0 would count round-off and q -> 0 explodes), so they are zeroed.
    """
    return 10.0 * size * np.finfo(np.float64).eps * lam_max


def clean_spectrum(eigenvalues: np.ndarray, func: str, size: int) -> np.ndarray:
    """Clip round-off, reject clearly non-PSD input, renormalise to a distribution."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    lam_max = float(lam.max())
    if lam_max <= 0:
        raise ValueError(
            f"{func}: the similarity has no positive eigenvalue; it cannot be a kernel."
        )
    most_negative = float(lam.min())
    if most_negative < -PSD_TOL * lam_max:
        raise ValueError(
            f"The similarity passed to {func} is not positive semidefinite: the most negative "
            f"eigenvalue of K/n is {most_negative:.3g} (relative to the largest "
            f"{most_negative / lam_max:.3g}, tolerance {PSD_TOL:g}). Use a PSD kernel "
            f"(cosine, Tanimoto, Gaussian), or project K onto the "
            f"PSD cone by clipping its negative eigenvalues."
        )
    lam = lam[lam > rank_cutoff(lam_max, size)]
    return lam / lam.sum()


def _hill_logs(lam: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """log of the order-q Hill numbers of the distribution ``lam`` (entries > 0), every q at once.

    Written so that every order is accurate: q near 1 uses log1p/expm1 (the
    generic formula divides two quantities that both vanish), other orders factor
    out lambda_max (lambda^q underflows for large q).
    """
    log_lam = np.log(lam)
    top = log_lam.max()
    out = np.empty(qs.shape)
    out[qs == 0] = np.log(lam.size)
    out[qs == 1] = -np.dot(lam, log_lam)
    out[np.isinf(qs)] = -top
    near = (np.abs(qs - 1) < 0.5) & (qs != 1)
    if near.any():
        # sum(lam^q) = 1 + sum(lam * expm1((q-1) log lam)) because sum(lam) = 1.
        q = qs[near][:, None]
        inner = np.expm1((q - 1) * log_lam[None, :]) @ lam
        out[near] = np.log1p(inner) / (1 - qs[near])
    far = ~near & (qs != 0) & (qs != 1) & np.isfinite(qs)
    if far.any():
        q = qs[far][:, None]
        log_sum = q[:, 0] * top + np.log(np.exp(q * (log_lam[None, :] - top)).sum(axis=1))
        out[far] = log_sum / (1 - qs[far])
    return out


def vendi_from_spectrum(lam: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """Vendi scores at orders ``qs`` from a cleaned, normalised spectrum."""
    out = np.exp(_hill_logs(lam, np.asarray(qs, dtype=np.float64)))
    out[qs == 0] = lam.size  # the rank, exactly (exp(log k) can be off by an ulp)
    return out


def spectrum_of_kernel(K: np.ndarray, p: np.ndarray | None) -> np.ndarray:
    """Eigenvalues of diag(sqrt p) K diag(sqrt p) (p uniform: K / n)."""
    from scipy.linalg import eigvalsh

    n = K.shape[0]
    if p is None:
        A = K / n
    else:
        root = np.sqrt(p)
        A = K * root[:, None] * root[None, :]
    return eigvalsh(A, overwrite_a=True, check_finite=False, driver="evd")


def _finish(values: np.ndarray, scalar: bool) -> float | np.ndarray:
    return float(values[0]) if scalar else values


def vendi_score(
    K: ArrayLike, q: ArrayLike = 1.0, *, weights: ArrayLike | None = None
) -> float | np.ndarray:
    r"""Vendi score of order ``q`` of a similarity matrix.

    The effective number of distinct samples: the exponential of the Rényi
    entropy of order q of the eigenvalues of ``K / n``.

    Parameters
    ----------
    K : array_like, shape (n, n)
        Positive semidefinite similarity with unit diagonal (``K[i, i] == 1``).
    q : float or array_like of float
        Order(s) in [0, inf]. ``q=1`` is exp(Shannon entropy), ``q=0`` the rank,
        ``q=inf`` is ``1 / lambda_max``. ``np.inf`` and ``float("inf")`` are accepted.
    weights : array_like, shape (n,), optional
        Probability of each sample (normalised to sum 1): the probability-weighted
        Vendi score, from the eigenvalues of ``diag(sqrt p) K diag(sqrt p)``.

    Returns
    -------
    float or numpy.ndarray
        A Python float for scalar ``q``, an array with the shape of ``q`` otherwise.

    Notes
    -----
    With eigenvalues :math:`\lambda_i` of :math:`K/n` (they sum to 1),

    .. math:: \mathrm{VS}_q(K) = \left(\sum_i \lambda_i^q\right)^{1/(1-q)},

    with the limits :math:`\exp(-\sum_i \lambda_i\log\lambda_i)` at ``q=1`` and
    :math:`1/\max_i\lambda_i` at ``q=inf`` (Friedman & Dieng, eq. 1 and §3.2).
    The score is nonincreasing in q. Eigenvalues below ``10 n eps lambda_max``
    are round-off and are dropped, so ``q=0`` returns the numerical rank. Slightly
    negative eigenvalues (above ``-1e-6 lambda_max``) are clipped; a clearly
    non-PSD ``K`` raises ``ValueError`` with its most negative eigenvalue.

    References
    ----------
    .. [1] D. Friedman and A. B. Dieng, "The Vendi Score: A Diversity Evaluation
       Metric for Machine Learning", TMLR 2023.

    Examples
    --------
    >>> import numpy as np
    >>> vendi_score(np.eye(3))
    3.0
    >>> vendi_score(np.ones((4, 4)))
    1.0
    >>> vendi_score(np.eye(2), q=[0, 1, 2, np.inf])
    array([2., 2., 2., 2.])
    >>> round(vendi_score([[1, .9, 0], [.9, 1, 0], [0, 0, 1]]), 4)
    2.1573
    """
    func = "vendi_score"
    if callable(q):  # vendi-score's vendi.score(samples, k), called by its old name
        raise TypeError(
            f"The 'q' parameter of {func} must be a float or an array of floats. Got the "
            f"function {q!r}: for samples and a similarity function k(a, b), use "
            f"diversity_profiles.vendi_compat.score(samples, k)."
        )
    qs, scalar = check_parameter(q, "q", func, low=0.0, allow_inf=True)
    K = check_similarity_matrix(K, func)
    p = check_weights(weights, K.shape[0], func)
    lam = clean_spectrum(spectrum_of_kernel(K, p), func, K.shape[0])
    out = vendi_from_spectrum(lam, qs)
    return _finish(out if scalar else out.reshape(np.shape(q)), scalar)


#: Largest |x| (as a power of two) whose squares are safe in each working precision; beyond
#: it, or below its inverse, X is divided by a power of two first (exact; the score of the
#: cosine kernel and the trace-normalised linear kernel does not change).
_SAFE_EXPONENT = {np.dtype(np.float32): 20, np.dtype(np.float64): 400}
#: Row sums of squares below this may have lost terms to underflow in the working dtype.
_TINY_SQUARE = {np.dtype(np.float32): 2.0**-80, np.dtype(np.float64): 2.0**-900}


def _global_scale(X: np.ndarray) -> float:
    with np.errstate(all="ignore"):
        top = float(max(X.max(), -X.min()))  # no |X| copy: two passes that allocate nothing
    limit = _SAFE_EXPONENT[np.dtype(X.dtype)]
    if not np.isfinite(top) or top == 0.0 or 2.0**-limit <= top <= 2.0**limit:
        return 1.0
    return float(np.ldexp(1.0, np.frexp(top)[1] - 1))


def _scaled_blocks(X: np.ndarray, root_w: np.ndarray, normalize: bool, reuse: bool = False):
    """Row blocks of X, each row scaled by sqrt(w_i) (and 1/|x_i| when normalising).

    With ``reuse`` every block is written into the same buffer (the caller must be done with
    a block before asking for the next): no allocation per block.
    """
    from ..engines import row_norms

    work_dtype = np.float32 if X.dtype == np.float32 else np.float64
    # Normalised rows need no global scale: a row whose squares overflow or underflow is
    # scaled in float64 on its own (the two passes over X it takes cost ~10% at n = 100k).
    unit = 1.0 if normalize else _global_scale(X)
    buf = np.empty((_BLOCK_ROWS, X.shape[1]), work_dtype) if reuse else None
    for start in range(0, X.shape[0], _BLOCK_ROWS):
        B: np.ndarray = np.asarray(X[start : start + _BLOCK_ROWS], dtype=work_dtype)
        if unit != 1.0:
            B = B / work_dtype(unit)
        scale = root_w[start : start + _BLOCK_ROWS]
        rows = B.shape[0]
        odd = None
        if normalize:
            # Sums of squares in the working dtype (one einsum pass: relative error ~4e-7 in
            # float32 at d = 768, the size of the float32 product's own; a float64 sum took
            # 3.5x as long); rows whose squares overflow or may have underflowed take exact
            # float64 norms and scaling (a float64 copy of every block costs as much as the
            # product itself).
            with np.errstate(over="ignore"):
                sq = np.einsum("ij,ij->i", B, B).astype(np.float64)
            norms = np.sqrt(sq)
            odd = ~(sq >= _TINY_SQUARE[np.dtype(work_dtype)]) | np.isinf(sq)
            if odd.any():
                norms[odd] = row_norms(B[odd].astype(np.float64))
            else:
                odd = None
            if not norms.all():
                row = start + int(np.flatnonzero(norms == 0)[0])
                raise ValueError(
                    f"The 'X' argument of vendi_score_dual has an all-zero row (row {row}); "
                    f"cosine similarity is undefined for it. Drop such rows or pass "
                    f"normalize=False for the linear kernel."
                )
            scale = scale / norms
        out = np.multiply(
            B, scale.astype(work_dtype)[:, None], out=None if buf is None else buf[:rows]
        )
        if odd is not None:
            out[odd] = B[odd].astype(np.float64) * scale[odd, None]
        yield out


def dual_kernel_spectrum(X: np.ndarray, p: np.ndarray | None, normalize: bool) -> np.ndarray:
    """Nonzero eigenvalues of the (weighted) linear kernel of X.

    Uses the d × d matrix sum_i w_i x_i x_i^T (w_i = p_i or 1/n) when d < n, the
    n × n Gram matrix otherwise; both share their nonzero eigenvalues. Rows are
    scaled one cache-sized block at a time, so the cost stays close to the bare
    X^T X product. Non-finite input shows up as a non-finite product and is
    located only then, sparing a pass over X.
    """
    from ..engines import dual_eigenvalues

    n, d = X.shape
    root_w = np.sqrt(np.full(n, 1.0 / n) if p is None else p)
    with np.errstate(all="ignore"):  # inf/NaN input is reported below, with its location
        if d < n:
            C = np.zeros((d, d))
            for B in _scaled_blocks(X, root_w, normalize, reuse=True):
                C += B.T @ B
        else:
            B = np.concatenate(list(_scaled_blocks(X, root_w, normalize))).astype(np.float64)
            C = B @ B.T
    if not np.isfinite(C).all():
        as_finite_array(X, "X", "vendi_score_dual")  # names the first bad entry
        raise ValueError(
            "vendi_score_dual: the embeddings overflow when multiplied; rescale X (e.g. divide "
            "by its largest absolute value)."
        )
    return dual_eigenvalues(C)


def vendi_score_dual(
    X: ArrayLike,
    q: ArrayLike = 1.0,
    *,
    weights: ArrayLike | None = None,
    normalize: bool = True,
) -> float | np.ndarray:
    r"""Vendi score of the cosine (or linear) kernel, straight from embeddings.

    Never forms the n × n kernel: the nonzero eigenvalues of ``X X^T / n`` are
    those of the d × d matrix ``X^T X / n``, so the cost is ``n d^2 + d^3``.
    When ``n <= d`` the n × n Gram matrix is used instead.

    Parameters
    ----------
    X : array_like, shape (n, d)
        One embedding per row. float32 input is multiplied in float32 (blockwise,
        accumulated in float64); everything else in float64.
    q : float or array_like of float
        Order(s) in [0, inf], as in :func:`vendi_score`.
    weights : array_like, shape (n,), optional
        Sample probabilities (probability-weighted Vendi score).
    normalize : bool, default True
        Scale rows to unit norm, giving the cosine-similarity kernel (unit
        diagonal). With ``False`` the linear kernel ``X X^T`` is used as is and its
        eigenvalues are normalised by its trace.

    Returns
    -------
    float or numpy.ndarray
        A Python float for scalar ``q``, an array otherwise.

    See Also
    --------
    vendi_score : the same score from a precomputed similarity matrix.

    Examples
    --------
    >>> import numpy as np
    >>> vendi_score_dual(np.eye(3))          # three orthogonal samples
    3.0
    >>> vendi_score_dual([[1., 0], [2., 0], [0, 5]], q=[0, np.inf])
    array([2. , 1.5])
    """
    func = "vendi_score_dual"
    qs, scalar = check_parameter(q, "q", func, low=0.0, allow_inf=True)
    if isinstance(X, np.ndarray) and X.dtype in (np.float32, np.float64):
        arr = X  # checked for NaN/inf only if the product is not finite (saves a pass)
    else:
        arr = as_finite_array(samples_first(X, "X", func), "X", func, ndim=2)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(
            f"The 'X' argument of {func} must be a 2-D array (n samples × d features) with at "
            f"least one sample and one feature. Got shape {arr.shape}."
        )
    n, d = arr.shape
    p = check_weights(weights, n, func)
    lam = clean_spectrum(dual_kernel_spectrum(arr, p, normalize), func, max(n, d) if d < n else n)
    out = vendi_from_spectrum(lam, qs)
    return _finish(out if scalar else out.reshape(np.shape(q)), scalar)


# --- sampling influence ------------------------------------------------------


def kernel_eigen_shares(K: np.ndarray, func: str) -> tuple[np.ndarray, np.ndarray]:
    """The spectrum of K/n and each sample's share of every eigen-direction.

    Returns ``(lam, shares)``: the eigenvalues above round-off (not renormalised) and the
    n × r matrix ``shares[i, k] = n lam_k U_ik^2`` (U the eigenvectors of K/n), whose
    column means are ``lam``. ``shares[i] @ f(lam) / lam`` is ``phi_i' f(C) phi_i`` for the
    feature map phi of K and its covariance C (same non-zero spectrum as K/n).
    """
    from scipy.linalg import eigh

    n = K.shape[0]
    lam, U = eigh(K / n, check_finite=False, driver="evd")
    clean_spectrum(lam, func, n)  # the PSD check, with its message
    keep = lam > rank_cutoff(float(lam.max()), n)
    lam, U = lam[keep], U[:, keep]
    return lam, n * lam * U**2


def dual_eigen_shares(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`kernel_eigen_shares` of the cosine kernel of unit rows X, from the d × d
    covariance ``C = X'X / n``: ``shares[i, k] = (x_i . v_k)^2``."""
    from scipy.linalg import eigh

    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    lam, V = eigh(X.T @ X / n, check_finite=False, driver="evd")
    keep = lam > rank_cutoff(float(lam.max()), max(X.shape))
    lam, V = lam[keep], V[:, keep]
    return lam, (X @ V) ** 2


def vendi_log_influence(lam: np.ndarray, shares: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """Influence of every sample on ``log VS_q``: an n × len(qs) matrix (columns mean 0).

    With C the covariance of the kernel's feature map (trace 1, unit diagonal) and phi_i a
    sample's feature, moving mass to phi_i changes ``tr C^q`` by ``q (phi_i' C^{q-1} phi_i
    - tr C^q)``, so ``log VS_q = log(tr C^q) / (1 - q)`` moves by ``q / (1 - q)`` times that
    over ``tr C^q``; q = 1 (Shannon) gives ``-phi_i' log C phi_i - H`` and q = inf
    (``-log lam_max``) gives ``1 - phi_i' v_1 v_1' phi_i / lam_max``. The sample mean of
    the influences over n is the delta method's standard error of the plug-in estimate.
    q = 0 (the rank, a count) has none: NaN.

    Two samples alike in every respect have equal influences, hence zero:

    >>> lam, shares = kernel_eigen_shares(np.array([[1.0, 0.5], [0.5, 1.0]]), "example")
    >>> np.abs(vendi_log_influence(lam, shares, np.array([1.0, 2.0, np.inf]))).max() < 1e-12
    np.True_
    """
    total = float(np.sum(lam))  # 1 for a unit diagonal; the shares follow lam's scale
    lam = np.asarray(lam, dtype=np.float64) / total
    shares = np.asarray(shares, dtype=np.float64) / total
    qs = np.asarray(qs, dtype=np.float64)
    out = np.full((shares.shape[0], qs.size), np.nan)
    for k, q in enumerate(qs):
        if q == 0:
            continue
        if np.isinf(q):
            top = int(np.argmax(lam))
            out[:, k] = 1.0 - shares[:, top] / lam[top]
        elif q == 1:
            log_lam = np.log(lam)
            out[:, k] = -(shares @ log_lam) + float(lam @ log_lam)
        else:
            power = float(np.sum(lam**q))
            out[:, k] = q / (1.0 - q) * (shares @ lam ** (q - 1.0) - power) / power
    return out


def vendi_without_groups(
    groups: list[np.ndarray],
    qs: np.ndarray,
    *,
    K: np.ndarray | None = None,
    X: np.ndarray | None = None,
) -> np.ndarray:
    """Vendi scores at ``qs`` of the set with each group of samples left out (groups × qs),
    from the kernel K, or for unit rows X from the d × d covariance less the group's part.

    The grouped jackknife's values: ``(g - 1)/g sum_k (VS_(k) - mean)^2`` estimates the
    score's variance, and unlike the delta method it sees what removing samples does to the
    small eigenvalues that low orders weigh (the delta method is 10-20% short there at
    n = 150-200 on clustered data, tests/test_findings.py).

    >>> X = np.eye(4)
    >>> vendi_without_groups([np.array([0]), np.array([1, 2])], np.array([1.0]), X=X).tolist()
    [[3.0], [2.0]]
    """
    from scipy.linalg import eigvalsh

    qs = np.asarray(qs, dtype=np.float64)
    out = np.empty((len(groups), qs.size))
    if X is not None:
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        C = X.T @ X
    else:
        assert K is not None
        n = K.shape[0]
    for k, drop in enumerate(groups):
        keep = np.setdiff1d(np.arange(n), drop)
        if X is not None:
            part = X[drop]
            raw = eigvalsh((C - part.T @ part) / keep.size, check_finite=False)
            size = max(keep.size, X.shape[1])
        else:
            assert K is not None
            raw = eigvalsh(K[np.ix_(keep, keep)] / keep.size, check_finite=False)
            size = keep.size
        lam = clean_spectrum(raw, "vendi (grouped jackknife)", size)
        out[k] = vendi_from_spectrum(lam, qs)
    return out
