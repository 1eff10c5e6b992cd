"""vendi-score's ``vendi`` module, drop-in: the same functions, arguments and defaults as
vendi-score 0.0.3, computed by this library's Vendi family, with vendi-score's defects
fixed. Changing one import line moves code over:

.. code-block:: python

    from vendi_score import vendi                          # before
    from diversity_profiles import vendi_compat as vendi   # after

>>> import numpy as np
>>> from diversity_profiles import vendi_compat as vendi
>>> samples = [0, 0, 10, 10, 20, 20]
>>> round(vendi.score(samples, lambda a, b: np.exp(-np.abs(a - b))), 4)
3.0

Where the numbers differ from vendi-score's, vendi-score's are wrong; each function's
docstring lists its differences under *Differences from vendi-score*. Common to all:

- ``q`` may be any order in [0, inf] (``"inf"``, ``np.inf`` and ``float("inf")`` alike)
  or an array of orders (one eigendecomposition serves them all; an array comes back).
- ``p`` is normalised to sum 1 (vendi-score uses it as given, so weights that do not sum
  to 1 gave a number that is no Vendi score).
- Bad input (NaN/inf, an asymmetric or clearly non-positive-semidefinite similarity, a
  similarity without unit diagonal) raises an error naming the argument and the fix,
  where vendi-score returned a number or NaN.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .core import (
    MATRIX_RTOL,
    as_finite_array,
    check_pairwise_memory,
    check_parameter,
    samples_first,
)
from .families import clean_spectrum, dual_kernel_spectrum, spectrum_of_kernel, vendi_from_spectrum

__all__ = ["intdiv", "intdiv_K", "intdiv_X", "score", "score_K", "score_X", "score_dual"]

#: Pairs (i < j) on which a similarity function's symmetry is checked: each costs one extra
#: call, a sample rather than all n(n - 1)/2 (which would double the work).
SYMMETRY_PAIRS = 8


# --- checks ------------------------------------------------------------------------------


def _tolerance(dtype: Any) -> float:
    """Unit-diagonal and symmetry tolerance for a matrix held in ``dtype``: the library's
    ``MATRIX_RTOL``, or the square root of the precision's epsilon when coarser (a float32
    cosine kernel's diagonal is off by ~1e-7..1e-5)."""
    try:  # a torch dtype (torch.float32) goes by its name
        kind = np.dtype(dtype if isinstance(dtype, np.dtype | type) else str(dtype).split(".")[-1])
    except TypeError:
        kind = np.dtype(np.float64)
    eps = np.finfo(kind).eps if np.issubdtype(kind, np.floating) else 0.0
    return max(MATRIX_RTOL, float(np.sqrt(eps)))


def _orders(q: Any, func: str) -> tuple[np.ndarray, bool]:
    return check_parameter(q, "q", func, low=0.0, allow_inf=True)


def _weights(p: Any, n: int, func: str) -> np.ndarray | None:
    """vendi-score's ``p`` checked and normalised to sum 1."""
    if p is None:
        return None
    w = as_finite_array(p, "p", func, ndim=1)
    if w.shape[0] != n:
        raise ValueError(
            f"The 'p' argument of {func} must hold one probability per sample ({n}). "
            f"Got {w.shape[0]} entries."
        )
    if (w < 0).any() or w.sum() <= 0:
        raise ValueError(
            f"The 'p' argument of {func} must be non-negative with a positive sum (it is "
            f"normalised to sum 1). Got min {float(w.min())!r} and sum {float(w.sum())!r}."
        )
    return w / w.sum()


def _matrix(K: Any, func: str) -> tuple[np.ndarray, float]:
    """``K`` (dense, scipy.sparse or anything array-like) as a finite square float64 array,
    and the tolerance of the precision it came in."""
    tol = _tolerance(getattr(K, "dtype", np.float64))
    arr = as_finite_array(K, "K", func, ndim=2)  # densifies scipy.sparse (memory checked)
    if arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise ValueError(
            f"The 'K' argument of {func} must be a square n × n similarity matrix with at "
            f"least one sample. Got shape {arr.shape}."
        )
    return arr, tol


def _check_symmetric(K: np.ndarray, tol: float, func: str) -> np.ndarray:
    asym = np.abs(K - K.T)
    if asym.max() > tol * max(float(np.abs(K).max()), 1.0):
        i, j = np.unravel_index(int(np.argmax(asym)), asym.shape)
        raise ValueError(
            f"The 'K' argument of {func} must be symmetric: K[{i}, {j}] is {float(K[i, j])!r} "
            f"but K[{j}, {i}] is {float(K[j, i])!r} (vendi-score read one triangle only). "
            f"Symmetrise it, e.g. (K + K.T) / 2, if the difference is round-off."
        )
    return (K + K.T) / 2


def _unit_diagonal(K: np.ndarray, tol: float, normalize: bool, func: str, name: str) -> np.ndarray:
    """K with unit diagonal: rescaled (``normalize``) or checked to have one."""
    d = np.diagonal(K)
    entry = "k(samples[{i}], samples[{i}])" if name == "k" else "K[{i}, {i}]"
    if normalize:
        if (d <= 0).any():
            i = int(np.argmax(d <= 0))
            raise ValueError(
                f"{func}(normalize=True) rescales the similarity to unit diagonal, which needs "
                f"a positive diagonal; {entry.format(i=i)} is {float(d[i])!r}. Drop that "
                f"sample or fix {name!r}."
            )
        root = np.sqrt(d)
        return K / root[:, None] / root[None, :]
    off = np.abs(d - 1.0)
    if off.max() > tol:
        i = int(np.argmax(off))
        raise ValueError(
            f"The {name!r} argument of {func} must have unit self-similarity (k(x, x) = 1, as "
            f"vendi-score requires); {entry.format(i=i)} is {float(d[i])!r}. Pass "
            f"normalize=True to rescale to unit diagonal (K_ij / sqrt(K_ii K_jj))."
        )
    return K


def _embeddings(X: Any, normalize: bool, func: str) -> np.ndarray:
    """X as a finite n × d float array (float32 kept), with no all-zero row if normalising."""
    X = samples_first(X, "X", func)
    if isinstance(X, np.ndarray) and X.dtype == np.float32:
        as_finite_array(X, "X", func, ndim=2)  # the check only: float32 is multiplied as is
        arr = X
    else:
        arr = as_finite_array(X, "X", func, ndim=2)
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(
            f"The 'X' argument of {func} must be a 2-D array (n samples × d features) with at "
            f"least one sample and one feature. Got shape {arr.shape}."
        )
    if normalize:
        zero = ~np.any(arr != 0, axis=1)
        if zero.any():
            raise ValueError(
                f"The 'X' argument of {func} has an all-zero row (row {int(np.argmax(zero))}); "
                f"cosine similarity (normalize=True) is undefined for it (vendi-score kept it "
                f"as a zero row, a sample similar to nothing, not even itself). Drop such rows."
            )
    return arr


def _unit_rows(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


# --- similarity functions ----------------------------------------------------------------


def _items(samples: Any, func: str, name: str = "samples") -> list:
    if isinstance(samples, str | bytes) or not isinstance(samples, Iterable):
        raise TypeError(
            f"The {name!r} argument of {func} must be a sequence of samples (a list of "
            f"strings, numbers, graphs, ...). Got {type(samples).__name__}."
        )
    items = list(samples)
    if not items:
        raise ValueError(f"The {name!r} argument of {func} is empty; give at least one sample.")
    return items


def _pair(items: list, i: int, j: int) -> str:
    return f"(i, j) = ({i}, {j}): k({items[i]!r:.60}, {items[j]!r:.60})"


def _similarities(items: list, k: Any, func: str) -> np.ndarray:
    """The n × n matrix of ``k`` over ``items``, k evaluated on the upper triangle (diagonal
    included) and mirrored, checked finite and, on a sample of pairs, symmetric."""
    if not callable(k):
        raise TypeError(
            f"The 'k' argument of {func} must be a similarity function k(a, b) -> float. "
            f"Got {type(k).__name__}; for a precomputed similarity matrix use score_K(K)."
        )
    n = len(items)
    K = np.empty((n, n))
    for i, a in enumerate(items):
        row = [k(a, b) for b in items[i:]]
        try:
            K[i, i:] = row
        except (TypeError, ValueError):
            for j, value in enumerate(row, start=i):
                try:
                    float(value)
                except (TypeError, ValueError):
                    raise TypeError(
                        f"The similarity function 'k' passed to {func} must return a real "
                        f"number; at {_pair(items, i, j)} it returned {value!r:.80}."
                    ) from None
            raise
    bad = ~np.isfinite(np.triu(K))
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"The similarity function 'k' passed to {func} returned {float(K[i, j])!r} at "
            f"{_pair(items, i, j)}; a similarity must be finite. Fix k for such pairs or drop "
            f"the samples."
        )
    upper = np.triu_indices(n, 1)
    K[upper[1], upper[0]] = K[upper]
    _check_sampled_symmetry(items, k, K, func)
    return K


def _check_sampled_symmetry(items: list, k: Callable, K: np.ndarray, func: str) -> None:
    """k(b, a) against k(a, b) on up to :data:`SYMMETRY_PAIRS` pairs (fixed seed)."""
    n = len(items)
    if n < 2:
        return
    rng = np.random.default_rng(0)
    m = min(SYMMETRY_PAIRS, n * (n - 1) // 2)
    tol = MATRIX_RTOL * max(float(np.abs(K).max()), 1.0)
    for _ in range(m):
        i, j = sorted(int(v) for v in rng.choice(n, size=2, replace=False))
        back = k(items[j], items[i])
        try:
            ok = abs(float(back) - K[i, j]) <= tol
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(
                f"The similarity function 'k' passed to {func} is not symmetric: "
                f"k(samples[{i}], samples[{j}]) = {float(K[i, j])!r} but "
                f"k(samples[{j}], samples[{i}]) = {back!r:.40} (only the upper triangle "
                f"i <= j is evaluated). Symmetrise it: lambda a, b: (k(a, b) + k(b, a)) / 2."
            )


# --- Vendi -------------------------------------------------------------------------------


def _finish(values: np.ndarray, scalar: bool, q: Any) -> float | np.ndarray:
    return float(values[0]) if scalar else values.reshape(np.shape(q))


def _vendi_of_kernel(
    K: np.ndarray, q: Any, p: Any, tol: float, normalize: bool, func: str, name: str
) -> float | np.ndarray:
    qs, scalar = _orders(q, func)
    K = _unit_diagonal(_check_symmetric(K, tol, func), tol, normalize, func, name)
    w = _weights(p, K.shape[0], func)
    # The whole spectrum, dense or sparse; round-off is dropped and a clearly negative
    # eigenvalue raises, naming it.
    lam = clean_spectrum(spectrum_of_kernel(K, w), func, K.shape[0])
    return _finish(vendi_from_spectrum(lam, qs), scalar, q)


def score(
    samples: Iterable[Any],
    k: Callable[[Any, Any], float],
    q: ArrayLike | str = 1,
    p: ArrayLike | None = None,
    normalize: bool = False,
) -> float | np.ndarray:
    """Vendi score of any objects under a similarity function, as ``vendi.score``.

    Parameters
    ----------
    samples : sequence
        The samples: numbers, strings, graphs, molecules... anything ``k`` takes.
    k : callable
        Similarity ``k(a, b) -> float``, symmetric, with ``k(x, x) = 1``. It is called
        once per pair ``i <= j`` (the upper triangle), plus a few reversed pairs to check
        symmetry.
    q : float, "inf" or array_like of float, default 1
        Order(s) in [0, inf]: 0 the rank, 1 exp(Shannon entropy), inf ``1 / lambda_max``.
    p : array_like, shape (n,), optional
        Probability of each sample (weighted Vendi score: eigenvalues of
        ``diag(sqrt p) K diag(sqrt p)``); uniform ``1/n`` when omitted.
    normalize : bool, default False
        Rescale the similarity matrix to unit diagonal, ``K_ij / sqrt(K_ii K_jj)``.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar ``q``, an array shaped like ``q`` otherwise.

    Raises
    ------
    ValueError
        ``k`` returned NaN/inf (the pair (i, j) is named), is not symmetric on a checked pair,
        has ``k(x, x) != 1`` without ``normalize=True``, or its matrix is clearly not
        positive semidefinite (its most negative eigenvalue is named).

    Notes
    -----
    Differences from vendi-score: ``q=0`` counts the eigenvalues that are not round-off
    (vendi-score counted every positive one, round-off included); ``q=np.inf`` gives
    ``1 / lambda_max`` like ``q="inf"`` (vendi-score returned NaN); NaN/inf similarities,
    asymmetry on the checked pairs, a diagonal other than 1 (without ``normalize``) and a
    non-PSD matrix raise (vendi-score returned a number). The matrix is evaluated row by row
    into one n × n float64 array, as vendi-score does.

    Examples
    --------
    >>> import numpy as np
    >>> samples = [0, 0, 10, 10, 20, 20]
    >>> k = lambda a, b: np.exp(-np.abs(a - b))
    >>> round(score(samples, k), 4)
    3.0
    >>> score(["a", "b", "a"], lambda a, b: float(a == b), q=[0, 1, "inf"]).round(4).tolist()
    [2.0, 1.8899, 1.5]
    """
    items = _items(samples, "score")
    _orders(q, "score")  # checked before the n(n + 1)/2 calls of k, not after
    _weights(p, len(items), "score")
    return _vendi_of_kernel(
        _similarities(items, k, "score"), q, p, MATRIX_RTOL, normalize, "score", "k"
    )


def score_K(
    K: ArrayLike, q: ArrayLike | str = 1, p: ArrayLike | None = None, normalize: bool = False
) -> float | np.ndarray:
    """Vendi score of a similarity matrix, as ``vendi.score_K``.

    Parameters
    ----------
    K : array_like or scipy.sparse matrix, shape (n, n)
        Symmetric positive semidefinite similarity with unit diagonal (or any positive
        diagonal with ``normalize=True``).
    q, p, normalize
        As in :func:`score`.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar ``q``, an array shaped like ``q`` otherwise.

    Notes
    -----
    Differences from vendi-score: a scipy.sparse ``K`` uses its whole spectrum
    (vendi-score's ``eigsh`` returned only the 6 largest eigenvalues, and only for CSR);
    ``q=0`` counts the eigenvalues that are not round-off (vendi-score counted round-off
    too: 107 for the rank-16 kernel of 200 samples in the tests); ``q=np.inf`` equals
    ``q="inf"`` (vendi-score: NaN); a diagonal other than 1 without ``normalize=True`` raises
    (vendi-score's eigenvalues then summed to ``tr K / n``, not 1, and the result was no
    effective number); an asymmetric or clearly non-PSD ``K`` (most negative eigenvalue
    below ``-1e-6 lambda_max``) raises, naming the entry or the eigenvalue. The tolerance of
    the diagonal and symmetry checks is 1e-6, or ``sqrt(eps)`` of a coarser input dtype
    (3.5e-4 for float32).

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[1.0, 0.9, 0.0],
    ...               [0.9, 1.0, 0.0],
    ...               [0.0, 0.0, 1.0]])
    >>> round(score_K(K), 4)
    2.1573
    >>> score_K(np.eye(4), q=np.inf)
    4.0
    """
    arr, tol = _matrix(K, "score_K")
    return _vendi_of_kernel(arr, q, p, tol, normalize, "score_K", "K")


def _vendi_of_embeddings(X: Any, q: Any, p: Any, normalize: bool, func: str) -> float | np.ndarray:
    qs, scalar = _orders(q, func)
    arr = _embeddings(X, normalize, func)
    n, d = arr.shape
    w = _weights(p, n, func)
    # The d × d covariance when d < n, else the n × n Gram matrix: same nonzero spectrum.
    lam = clean_spectrum(dual_kernel_spectrum(arr, w, normalize), func, max(n, d) if d < n else n)
    return _finish(vendi_from_spectrum(lam, qs), scalar, q)


def score_X(
    X: ArrayLike, q: ArrayLike | str = 1, p: ArrayLike | None = None, normalize: bool = True
) -> float | np.ndarray:
    """Vendi score of the cosine (or linear) kernel of embeddings, as ``vendi.score_X``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        One embedding per row (a numpy array, a CPU tensor or a DataArray).
    q, p
        As in :func:`score`.
    normalize : bool, default True
        Scale rows to unit norm: the kernel is the cosine similarity ``X X^T`` of unit rows.
        With ``False`` the linear kernel ``X X^T`` is used as is, its eigenvalues
        normalised by its trace.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar ``q``, an array shaped like ``q`` otherwise.

    Notes
    -----
    Differences from vendi-score: ``q`` is honoured (vendi-score's ``score_X`` passed
    ``q=1`` whatever was asked); the n × n kernel is never formed when d < n (the d × d
    covariance has the same nonzero eigenvalues); with ``normalize=False`` the spectrum is
    normalised by the trace (vendi-score's summed to ``sum |x_i|^2 / n``, so rows that are
    not unit gave no effective number); an all-zero row with ``normalize=True`` raises
    (vendi-score kept it as a zero row); ``q=0`` and ``q=np.inf`` as in :func:`score_K`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 5.0]])
    >>> score_X(X, q=[0, 1, "inf"]).round(4).tolist()
    [2.0, 1.8899, 1.5]
    """
    return _vendi_of_embeddings(X, q, p, normalize, "score_X")


def score_dual(X: ArrayLike, q: ArrayLike | str = 1, normalize: bool = True) -> float | np.ndarray:
    """Vendi score from the d × d covariance of embeddings, as ``vendi.score_dual``.

    The same number as :func:`score_X` without weights (both use the d × d covariance when
    d < n, the n × n Gram matrix otherwise).

    Parameters
    ----------
    X : array_like, shape (n, d)
        One embedding per row.
    q : float, "inf" or array_like of float, default 1
        Order(s) in [0, inf], as in :func:`score`.
    normalize : bool, default True
        As in :func:`score_X`.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar ``q``, an array shaped like ``q`` otherwise.

    Notes
    -----
    Differences from vendi-score: ``q=0`` counts the eigenvalues that are not round-off
    (vendi-score counted every positive one of ``X^T X / n``); ``q=np.inf`` equals
    ``q="inf"``; with ``normalize=False`` the spectrum is normalised by the trace; an
    all-zero row with ``normalize=True`` raises.

    Examples
    --------
    >>> import numpy as np
    >>> score_dual(np.eye(3))
    3.0
    """
    return _vendi_of_embeddings(X, q, None, normalize, "score_dual")


# --- internal diversity ------------------------------------------------------------------


def _intdiv_of_kernel(K: np.ndarray, q: Any, p: Any, func: str) -> float | np.ndarray:
    qs, scalar = check_parameter(q, "q", func, low=0.0)
    w = np.full(K.shape[0], 1.0 / K.shape[0]) if p is None else _weights(p, K.shape[0], func)
    assert w is not None
    if (K < 0).any() and (qs != np.round(qs)).any():
        i, j = (int(v) for v in np.argwhere(K < 0)[0])
        raise ValueError(
            f"{func} raises the similarities to the power q = "
            f"{float(qs[qs != np.round(qs)][0])!r}, undefined for the negative similarity "
            f"{float(K[i, j])!r} at (i, j) = ({i}, {j}). Use an integer q or a non-negative "
            f"similarity."
        )
    out = np.array([1.0 - float(w @ (K**qk) @ w) for qk in qs])
    return _finish(out, scalar, q)


def intdiv_K(K: ArrayLike, q: float = 1, p: ArrayLike | None = None) -> float | np.ndarray:
    """Internal diversity of a similarity matrix, as ``vendi.intdiv_K``:
    ``1 - sum_ij p_i p_j K_ij^q``.

    Parameters
    ----------
    K : array_like or scipy.sparse matrix, shape (n, n)
        Similarities (the diagonal included in the sum, as in vendi-score).
    q : float or array_like of float, default 1
        The power each similarity is raised to (not an order of a Hill number; unlike
        MOSES's IntDiv_p no 1/q-th root is taken, as in vendi-score).
    p : array_like, shape (n,), optional
        Sample probabilities (normalised to sum 1); uniform when omitted.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar ``q``, an array shaped like ``q`` otherwise.

    Notes
    -----
    Differences from vendi-score: NaN/inf in ``K``, and a negative similarity with a
    fractional ``q`` (NaN in vendi-score), raise; ``p`` is normalised.

    Examples
    --------
    >>> import numpy as np
    >>> intdiv_K(np.eye(4))          # 1 - 4 / 16
    0.75
    """
    arr, _ = _matrix(K, "intdiv_K")
    return _intdiv_of_kernel(arr, q, p, "intdiv_K")


def intdiv_X(
    X: ArrayLike, q: float = 1, p: ArrayLike | None = None, normalize: bool = True
) -> float | np.ndarray:
    """Internal diversity of the cosine (or linear) kernel of embeddings, as
    ``vendi.intdiv_X``: :func:`~diversity_profiles.vendi_compat.intdiv_K` of ``X X^T``
    (unit rows with ``normalize``).

    Parameters
    ----------
    X : array_like, shape (n, d)
        One embedding per row.
    q, p
        As in :func:`~diversity_profiles.vendi_compat.intdiv_K`.
    normalize : bool, default True
        Scale rows to unit norm first (cosine similarity).

    Returns
    -------
    float or numpy.ndarray
        A float for scalar ``q``, an array shaped like ``q`` otherwise.

    Notes
    -----
    Differences from vendi-score: it works (vendi-score's called ``intdiv(K, q=q, p=p)``,
    which takes samples and a function, and raised ``TypeError``); at ``q=1`` the n × n
    kernel is never formed (``sum_ij p_i p_j x_i . x_j = |sum_i p_i x_i|^2``).

    Examples
    --------
    >>> import numpy as np
    >>> intdiv_X(np.array([[1.0, 0.0], [0.0, 3.0]]))   # 1 - (1 + 0 + 0 + 1) / 4
    0.5
    """
    func = "intdiv_X"
    qs, scalar = check_parameter(q, "q", func, low=0.0)
    arr = _embeddings(X, normalize, func)
    Y = _unit_rows(arr) if normalize else np.asarray(arr, dtype=np.float64)
    n = Y.shape[0]
    if (qs == 1).all():
        w = np.full(n, 1.0 / n) if p is None else _weights(p, n, func)
        assert w is not None
        mean = w @ Y
        return _finish(np.full(qs.shape, 1.0 - float(mean @ mean)), scalar, q)
    check_pairwise_memory(n, func, what="the similarity matrix and its power", copies=2)
    return _intdiv_of_kernel(Y @ Y.T, q, p, func)


def intdiv(
    elems: Iterable[Any], k: Callable[[Any, Any], float], q: float = 1, p: ArrayLike | None = None
) -> float | np.ndarray:
    """Internal diversity of any objects under a similarity function, as ``vendi.intdiv``:
    :func:`~diversity_profiles.vendi_compat.intdiv_K` of the matrix of ``k``.

    Parameters
    ----------
    elems : sequence
        The samples (named ``elems`` as in vendi-score 0.0.3's released ``intdiv``).
    k : callable
        Symmetric similarity ``k(a, b) -> float``, called once per pair ``i <= j``.
    q, p
        As in :func:`~diversity_profiles.vendi_compat.intdiv_K`.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar ``q``, an array shaped like ``q`` otherwise.

    Notes
    -----
    Differences from vendi-score: it works (vendi-score 0.0.3's released ``intdiv`` takes
    ``elems`` but reads ``samples``, and raises ``NameError``); NaN/inf similarities raise
    naming the pair (i, j), and asymmetry on a few checked pairs raises.

    Examples
    --------
    >>> round(intdiv(["a", "b", "a"], lambda a, b: float(a == b)), 6)   # 1 - 5 / 9
    0.444444
    """
    items = _items(elems, "intdiv", "elems")
    check_parameter(q, "q", "intdiv", low=0.0)  # checked before the calls of k, not after
    _weights(p, len(items), "intdiv")
    return _intdiv_of_kernel(_similarities(items, k, "intdiv"), q, p, "intdiv")
