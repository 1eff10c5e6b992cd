"""Vendi scores of the Gaussian kernel at large n, with certified brackets and error bars.

The spectrum of ``A = K/n`` is split by a Rayleigh–Ritz basis ``Q`` (a pivoted-Cholesky
Nyström basis refined by subspace iteration): its Ritz values are computed exactly, the
rest of the spectrum (the deflated complement) by stochastic Lanczos quadrature (SLQ).
No n × n float64 matrix is formed; products with K come from float32 tiles (or a held
float32 K when it fits) and the Rayleigh–Ritz pass that certifies the brackets from
float64 tiles.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..core import as_finite_array, check_parameter, one_of, samples_first, timed_progress
from ..engines import (
    DEFAULT_MEMORY,
    PairOperator,
    distinct_rows,
    namespace,
    one_thread,
    pair_operator,
    pivoted_cholesky,
    solver_input,
)
from ._spectral_bounds import vendi_bracket

if TYPE_CHECKING:
    from ..engines import Shipped

__all__ = ["VendiBounds", "VendiSolver", "gaussian_sum_squares", "vendi_large"]

FUNC = "vendi_large"
#: The Gaussian kernel exp(-|x - y|² / 2h²) is of Euclidean distances: it takes no other.
DISTANCES = ("euclidean",)
_EPS = float(np.finfo(np.float64).eps)

#: The defaults: Ritz vectors (a pivoted Cholesky basis), Rademacher probes, Lanczos steps
#: of each probe and of each Ritz vector.
RANK, PROBES, STEPS, RITZ_STEPS = 200, 128, 40, 20
#: Relative floor of the error bar: float64 rounding of sums over the spectrum.
_ROUNDING = 1e-11
#: Ritz values at least this many times the smallest one are deflated from the probes'
#: Lanczos (see _deflated_slq). 2 left a pinching bias of ~1e-5 at q = 1 (n = 4000); 4
#: none measurable.
_SEPARATION = 4.0


@dataclass
class VendiBounds:
    """Vendi score per order with certified brackets; arrays follow the given ``q``.

    ``lower ≤ Vendi_q ≤ upper`` is certified (up to float64 rounding). ``value`` is the
    estimate and ``error`` its estimated half-width (3 probe standard errors plus the
    quadrature error); ``kind`` is ``"exact"`` (q = 2), ``"certified"`` (bracket narrower
    than 1e-6 relative), ``"estimate"``, or ``"bounds"`` (time budget spent before the
    estimate: value and error are the bracket's midpoint and half-width).
    """

    q: np.ndarray
    value: np.ndarray
    error: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    kind: list[str]
    n_distinct: int = 0
    details: dict = field(default_factory=dict)
    #: Where the products with K ran: ``"numpy"`` (this process), ``"torch"`` or ``"dask"``.
    engine: str = "numpy"


def _gaussian(c: float, D: np.ndarray, out: np.ndarray) -> None:
    """``out = exp(c·D²)``: numpy, or tensors on a device (module level: it pickles)."""
    xp = namespace(D)
    xp.square(D, out=out)
    out *= c
    xp.exp(out, out=out)


def _gaussian_entry(bandwidth: float) -> partial:
    """The Gaussian kernel's entry function, picklable (dask workers receive it)."""
    return partial(_gaussian, -1.0 / (2.0 * bandwidth * bandwidth))


def _operator(X, bandwidth: float, weights, device=None, shipped=None) -> tuple[PairOperator, int]:
    X, shipped = solver_input(X, shipped, FUNC)
    arr = as_finite_array(samples_first(X, "X", FUNC), "X", FUNC, ndim=2)
    n = arr.shape[0]
    if weights is None:
        Xd, counts = distinct_rows(arr)
        p = counts / n
    else:
        Xd, p = arr, np.asarray(weights, dtype=np.float64) / float(np.sum(weights))
    entry = _gaussian_entry(bandwidth)
    op = pair_operator(Xd, "euclidean", entry, scale=np.sqrt(p), device=device, shipped=shipped)
    return op, n


def gaussian_sum_squares(
    X: ArrayLike,
    bandwidth: float,
    *,
    weights: ArrayLike | None = None,
    shipped: Shipped | None = None,
) -> float:
    r"""``‖K/n‖_F² = Σ_ij K_ij²/n²`` of the Gaussian kernel, from float64 tiles.

    This is ``Σ λ_i²`` of ``K/n`` (weighted: ``Σ p_i p_j K_ij²``), so the order-2 Vendi
    score is exactly its inverse; one pass over the tiles, never n × n.

    Examples
    --------
    Two points far apart: K = I, ‖K/2‖_F² = 1/2, Vendi_2 = 2.

    >>> gaussian_sum_squares([[0.0], [100.0]], 1.0)
    0.5
    """
    op, _ = _operator(X, float(bandwidth), weights, shipped=shipped)
    return float(op.matmat(np.zeros(op.n), double=True, sum_squares=True)[1])


def vendi_large(
    X: ArrayLike,
    q: ArrayLike,
    *,
    bandwidth: float,
    rank: int = RANK,
    probes: int = PROBES,
    steps: int = STEPS,
    ritz_steps: int = RITZ_STEPS,
    power_iterations: int = 2,
    seed: int = 0,
    memory_limit: float | None = None,
    weights: ArrayLike | None = None,
    precision: str = "auto",
    precision_n: int | None = None,
    device: str | None = None,
    shipped: Shipped | None = None,
    time_budget: float | None = None,
    progress: bool | None = None,
) -> VendiBounds:
    r"""Vendi scores of the Gaussian kernel ``exp(−|x−y|²/2h²)`` of ``X`` at orders ``q``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Embeddings (Euclidean distance). Identical rows are merged with their multiplicity
        as weight, which leaves the nonzero spectrum of K/n unchanged. A dask array (or
        chunked DataArray) is gathered once and shipped to the dask workers, where the
        products with K then run (see ``shipped``).
    q : float or array_like of float
        Orders in [0, inf].
    bandwidth : float
        The kernel bandwidth h (the profile uses the median pooled distance).
    rank : int, default 200
        Size m of the Rayleigh–Ritz basis (deflated from SLQ).
    probes, steps : int
        Rademacher probes of the complement and their Lanczos steps. Without deflating
        the separated Ritz pairs from the probes' Lanczos (see Notes), the large
        eigenvalues leaking into the probes took most of the steps (50 of 120 nodes):
        at n = 10,000 (clustered data) 60 steps left a Gauss/Gauss–Radau gap of 1.7% at
        q = 0.1 and the midpoint 0.95% low. With it, 30 steps leave 1.6e-4 there, so
        the defaults spend the products on probes (128 × 40 instead of 80 × 60: the
        same number of products, half the reorthogonalisation).
    ritz_steps : int
        Lanczos steps from each Ritz vector (their quadratic forms converge fast: gaps
        of ~5e-8 relative after 30 steps at n = 2000).
    power_iterations : int
        Subspace iterations refining the Nyström basis (more: tighter top eigenvalues).
    memory_limit : float, optional
        Bytes for a float32 copy of K (4 n² bytes; default 4 GiB), and for a float64 one in
        its place (8 n² bytes) during the float64 rerun of the probes; otherwise tiles are
        recomputed at every product.
    weights : array_like, optional
        Sample probabilities (then rows are not merged).
    precision : {"auto", "single", "double"}
        Products of the Lanczos part: float32 (fast) or float64 tiles. ``"auto"`` runs a
        pilot of PILOT_PROBES probes in float32 beside the Ritz vectors, then the other
        probes in float32, or all of them in float64 when the pilot sees spectral mass
        below the float32 noise level.
    precision_n : int, optional
        Decide ``"auto"``'s rerun as a set of this many samples from the same source
        would (default: this set's n). For timing probes on a subset, which must run the
        rerun the whole set will: see Notes.
    device : str, optional
        A torch device (``"cuda:0"``, ``"cpu"``) for the tiles of K and their products
        (the float64 certifying pass too); the Lanczos vectors stay on the host.
    shipped : Shipped, optional
        ``X`` already on the dask workers (:func:`.dask_engine.ship`): the products with
        K (the certifying pass too) run there as upper-triangle row-block tasks and the
        float32 K is held there (:class:`.dask_operator.DaskPairOperator`); pivoted
        Cholesky's columns and the Lanczos vectors stay on the client.
    time_budget : float, optional
        Seconds for the call. The certified bracket is always computed. If the budget is
        spent by then, no estimate is made: ``kind`` is ``"bounds"``, ``value`` the
        bracket's midpoint and ``error`` its half-width. If it runs out during the
        Lanczos part, every column stops at the step reached (at least two): the rules
        of fewer steps still bracket each quadratic form, so the error bar only widens.
    progress : bool, optional
        A bar with an ETA over the Lanczos steps (the bulk of the time); by default when
        the first step, timed, predicts the rest to take more than a few seconds.

    Returns
    -------
    VendiBounds

    Notes
    -----
    **Certified bracket.** With ``Q`` orthonormal (n × m), ``H = QᵀAQ`` has eigenvalues
    θ_1 ≥ … ≥ θ_m, and in the basis ``[U, U⊥]`` (U the Ritz vectors)
    ``A = [[Θ, Bᵀ], [B, C]]`` with ``‖B‖₂ = ρ = ‖AU − UΘ‖₂``. Then, for the i-th
    largest eigenvalue λ_i of A:

    * ``λ_i ≥ θ_i`` (Cauchy interlacing: H is a compression of A);
    * ``λ_i ≤ λ_i(Θ ⊕ C) + ρ`` (Weyl), with ``λ_i(Θ ⊕ C) ≤ max(θ_i, c)`` for i ≤ m and
      ``≤ min(tr C/j, ‖C‖_F/√j)`` for i = m + j, where ``tr C = 1 − Σθ`` and
      ``‖C‖_F² = ‖A‖_F² − Σθ² − 2‖B‖_F²`` (``‖A‖_F²`` from :func:`gaussian_sum_squares`),
      ``c = min(tr C, ‖C‖_F)``; for i = 1 the sharper ``λ_1 ≤ λ_max([[θ_1, ρ], [ρ, c]])``;
    * ``λ_i ≤ 1/i`` and ``Σ λ_i = 1``.

    :mod:`._spectral_bounds` turns these boxes into the extreme spectra in majorisation
    order, which bracket Σλ^q (Schur-convex for q > 1, concave for q < 1) and the entropy.
    Brackets are tight where the Ritz values carry the mass (large q) and wide where the
    unresolved tail dominates (small q). q = 0 is bracketed by the number of Ritz values
    above the rank cutoff and the number of distinct points.

    **Estimate.** ``Σ λ^q = tr f(A) = Σ_i u_iᵀ f(A) u_i + tr((I − UUᵀ) f(A) (I − UUᵀ))``
    (U the Ritz vectors). Each term of the first sum is a quadratic form, computed by
    Lanczos on A from u_i; the second is estimated by stochastic Lanczos quadrature (SLQ)
    from Rademacher probes projected off U [1]_, again with products by A. (Lanczos on
    the deflated ``(I − UUᵀ)A(I − UUᵀ)`` with the Ritz values added, as an earlier version
    did, evaluates f on a pinching of A: one-sided errors up to 0.34% that no error bar
    covered.) Only the Ritz pairs far above the rest (``θ_i ≥ 4θ_m``, residual
    ``β_i ≤ 0.1(θ_i − θ_m)``) are projected out of the probes' Lanczos: otherwise their
    leaked components, however small, each take a Lanczos step and keep the Gauss–Radau
    node at 0 far from the rest, which biased the midpoint low at small q. That pinching
    moves the complement trace, to second order, by at most
    ``Σ_i (β_i/(θ_i − θ_m))² |f(θ_i) − f(λ) − f'(λ)(θ_i − λ)|`` over λ in the probes'
    spectrum, which joins the error bar (measured ~10× above the actual shift at
    n = 4000, and ≤ 7e-6 relative). The dimension ``N − m`` and trace ``1 − Σθ`` of the
    complement are known exactly, so the probes only estimate ``f`` minus its tangent at
    the mean complement eigenvalue (a control variate; near q = 1 also
    ``f(x) = x^q − x``). For each
    quadratic form, the Gauss rule and the Gauss–Radau rule with a node at 0 bracket it
    for 0 < q < 2 (the derivatives of order 2s and 2s + 1 have constant, opposite signs);
    the estimate is their midpoint (for a Ritz vector whose residual is below the float32
    noise, the one-step rules from ``α = θ_i``, ``β = ‖r_i‖`` in float64). The error bar
    is 3 standard errors of the probe mean plus the half-gaps of the two rules (mean over
    probes, sum over Ritz vectors), plus, at q < 1, the most that eigenvalues below the
    resolvable floor could add, plus the pinching term above; it is an estimate, not a
    guarantee: over 20 datasets at n = 2000, d = 768 it covered the exact value in 80 of 80
    cases at q = 0.25 … 1.5 (76 of 80 before the separated pairs were deflated), with
    errors ≤ 0.14% at q ≤ 1 and ≤ 4.3e-8 at q ≥ 2 (benchmarks/large_n_methods.py,
    ``vendi_coverage``); at n = 10,000 errors ≤ 0.11% (clustered), ≤ 0.20% (Gaussian) at q ≤ 1.
    q = 2 is exact (``1/‖A‖_F²``); q = ∞ is ``1/θ_1``. Plain SLQ (no deflation) and
    random Fourier features were measured to be badly wrong at low q and are not used.

    References
    ----------
    .. [1] S. Ubaru, J. Chen and Y. Saad, "Fast estimation of tr(f(A)) via stochastic
       Lanczos quadrature", SIAM J. Matrix Anal. Appl. 38 (2017) 1075–1099.

    Examples
    --------
    Three mutually far points: K = I and every order gives 3.

    >>> r = vendi_large([[0.0], [50.0], [100.0]], [0.5, 1, 2, float("inf")], bandwidth=1.0)
    >>> [round(float(v), 6) for v in r.value], r.kind[2]
    ([3.0, 3.0, 3.0, 3.0], 'exact')
    """
    qs, _ = check_parameter(q, "q", FUNC, low=0.0, allow_inf=True)
    solver = VendiSolver(
        X, bandwidth=bandwidth, rank=rank, probes=probes, steps=steps, ritz_steps=ritz_steps,
        power_iterations=power_iterations, seed=seed, memory_limit=memory_limit,
        weights=weights, precision=precision, precision_n=precision_n, device=device,
        shipped=shipped, time_budget=time_budget, progress=progress,
    )  # fmt: skip
    return solver.solve(qs)


class VendiSolver:
    """:func:`vendi_large` at more orders later: the spectral work (Ritz pass, Lanczos
    quadrature, certified boxes) is done once, at the first :meth:`solve`, and every order
    is then read from it, call after call (an adaptive grid's rounds).

    Takes :func:`vendi_large`'s arguments but ``q``; the same numbers as one call of it
    with all the orders together. The kernel operator (and its held float32 K) is
    released once the spectral work is done.

    Examples
    --------
    >>> solver = VendiSolver([[0.0], [50.0], [100.0]], bandwidth=1.0)
    >>> [round(float(v), 6) for v in solver.solve([1.0, 2.0]).value]
    [3.0, 3.0]
    >>> [round(float(v), 6) for v in solver.solve([0.5]).value]  # no second solve
    [3.0]
    """

    def __init__(
        self,
        X: ArrayLike,
        *,
        bandwidth: float,
        rank: int = RANK,
        probes: int = PROBES,
        steps: int = STEPS,
        ritz_steps: int = RITZ_STEPS,
        power_iterations: int = 2,
        seed: int = 0,
        memory_limit: float | None = None,
        weights: ArrayLike | None = None,
        precision: str = "auto",
        precision_n: int | None = None,
        device: str | None = None,
        shipped: Shipped | None = None,
        time_budget: float | None = None,
        progress: bool | None = None,
    ) -> None:
        h = float(bandwidth)
        if not (math.isfinite(h) and h > 0):
            raise ValueError(f"The 'bandwidth' argument of {FUNC} must be > 0. Got {bandwidth!r}.")
        one_of(precision, "precision", FUNC, ("auto", "single", "double"))
        self._op, self._n_total = _operator(
            X, h, weights, device, None if device is not None else shipped
        )
        if precision_n is not None and not (isinstance(precision_n, int) and precision_n > 0):
            raise ValueError(
                f"The 'precision_n' argument of {FUNC} must be a positive integer (a number "
                f"of samples) or None. Got {precision_n!r}."
            )
        self._settings = (rank, probes, (steps, ritz_steps), power_iterations, seed, memory_limit,
                          (precision, precision_n), time_budget, progress)  # fmt: skip
        self._state: dict | None = None

    def solve(self, q: ArrayLike) -> VendiBounds:
        """Vendi scores at orders ``q`` with their bounds (see :func:`vendi_large`)."""
        qs, _ = check_parameter(q, "q", FUNC, low=0.0, allow_inf=True)
        if self._state is None:
            rank, probes, steps, power, seed, limit, precision, budget, progress = self._settings
            deadline = None if budget is None else time.perf_counter() + float(budget)
            # One BLAS thread: on the shared 2-core machine two threads competing with other
            # processes made a 1500 × 200 QR 100× slower; GEMM loses at most 2× on one idle.
            with one_thread():
                self._state = _spectral_state(
                    self._op, self._n_total, rank, probes, steps, power, seed, limit,
                    precision, deadline, progress,
                )  # fmt: skip
            self._op.release()
        return _bounds_at(self._state, qs)


def _spectral_state(op, n_total, rank, probes, steps, power_iterations, seed, limit, precision,
                    deadline, progress=None) -> dict:  # fmt: skip
    """Everything the orders are read from: Ritz values and boxes, the Lanczos rules
    (``precision``: vendi_large's precision and precision_n)."""
    N = op.n
    limit = DEFAULT_MEMORY if limit is None else float(limit)
    if 4.0 * N * N <= limit:
        op.hold()
    theta, U, beta, rho, r_fro2, fro2 = _ritz_pairs(op, min(rank, N), power_iterations)
    lo, hi = _boxes(theta, rho, r_fro2, fro2, N)
    cut = 10.0 * n_total * _EPS * max(float(theta[0]) if len(theta) else 0.0, 0.0)
    spent = deadline is not None and time.perf_counter() > deadline
    separated = _separated(theta, beta)
    slq = None
    if not spent:
        slq = _deflated_slq(op, U, theta, separated, probes, steps, seed, fro2, precision,
                            deadline, progress, limit, n_total)  # fmt: skip
    if slq is not None and _nodes_beyond(slq["quad"] + slq["ritz"]):
        # The probes' Lanczos lost orthogonality (a numerically low-rank set: Gauss nodes
        # of 78 and 1.7e7 at n = 50, d = 2): their estimate would be rounding, so the
        # orders are read from the certified boxes alone, as when the time budget is spent.
        slq = None
    if slq is not None:  # exactly known moments of the complement: control variates
        slq["count"], slq["trace"] = N - len(theta), max(1.0 - float(theta.sum()), 0.0)
        slq["deflated"] = (theta[separated], beta[separated], theta[-1])
        # One Lanczos step from u_i in float64 (α = θ_i, β = ‖r_i‖): its two rules bracket
        # u_iᵀf(A)u_i too, without the float32 noise of the longer run (see _estimate).
        slq["ritz_one"] = [
            _gauss_rule(np.array([t]), np.array([b]), exhausted=b == 0.0)
            for t, b in zip(theta, beta, strict=True)
        ]
    details = {"rank": len(theta), "rho": rho, "sum_squares": fro2,
               "precision": "none" if slq is None else slq["precision"],
               "held": op.held is not None,
               "steps": 0 if slq is None else slq["steps"]}  # fmt: skip
    return {"theta": theta, "lo": lo, "hi": hi, "cut": cut, "fro2": fro2, "slq": slq, "N": N,
            "details": details, "engine": op.engine}  # fmt: skip


def _ritz_pairs(op, m: int, power_iterations: int):
    """Ritz values θ (descending) and vectors U of A from a rank-m pivoted Cholesky basis
    and a float64 Rayleigh–Ritz pass, with each vector's residual norm β, the residual's
    spectral norm ρ and squared Frobenius norm, and ‖A‖_F² (exact, from the same pass).

    Its own function so that the basis, the products and the residual block (five more
    n × m float64 arrays: 0.37 GiB at n = 50,000) are gone before the Lanczos runs
    beside the held K; only U goes on."""
    N = op.n
    L, _, _ = pivoted_cholesky(op, m, rtol=1e-14)
    Q = np.linalg.qr(L)[0] if L.shape[1] else np.zeros((N, 0))
    del L
    for _ in range(power_iterations if Q.shape[1] else 0):
        Q = np.linalg.qr(op.matmat(Q))[0]
    # The certifying Rayleigh–Ritz pass, in float64, also gives ‖A‖_F² exactly.
    AQ, fro2 = op.matmat(np.column_stack([Q, np.zeros(N)]), double=True, sum_squares=True)
    AQ = AQ[:, :-1]
    H = Q.T @ AQ
    theta, V = np.linalg.eigh((H + H.T) / 2)
    theta, V = theta[::-1], V[:, ::-1]
    U, R = Q @ V, AQ @ V
    del Q, AQ
    R -= U * theta
    rho = math.sqrt(max(float(np.linalg.eigvalsh(R.T @ R)[-1]), 0.0)) if R.size else 0.0
    beta = np.sqrt((R * R).sum(axis=0))
    return theta, U, beta, rho, float((R * R).sum()), fro2


def _bounds_at(state: dict, qs: np.ndarray) -> VendiBounds:
    """The Vendi scores at orders ``qs`` from a :func:`_spectral_state`."""
    theta, lo, hi, cut, fro2, slq = (state[k] for k in ("theta", "lo", "hi", "cut", "fro2", "slq"))
    out = VendiBounds(
        q=qs, value=np.empty(len(qs)), error=np.empty(len(qs)), lower=np.empty(len(qs)),
        upper=np.empty(len(qs)), kind=[""] * len(qs), n_distinct=state["N"],
        details=dict(state["details"]), engine=state["engine"],
    )  # fmt: skip
    rank_floor = int(np.count_nonzero(theta > cut))
    for k, qk in enumerate(qs):
        lower, upper = vendi_bracket(lo, hi, float(qk), max(rank_floor, 1))
        if qk == 2:
            value, err, lower, upper, kind = 1.0 / fro2, 0.0, 1.0 / fro2, 1.0 / fro2, "exact"
        elif slq is None:  # time budget spent: the bracket only, as value ± half its width
            value, err = 0.5 * (lower + upper), 0.5 * (upper - lower)
            kind = "certified" if upper - lower <= 1e-6 * value else "bounds"
        else:
            value, err = _estimate(float(qk), np.maximum(theta, 0.0), slq, cut, fro2)
            value = min(max(value, lower), upper)
            # The error bar is never below the float64 rounding of a sum over the spectrum
            # (measured ~3e-14 relative at n = 1000, where the probe part vanishes for
            # q >= 3), and never above what the certified bracket already guarantees.
            err = min(max(err, _ROUNDING * value), max(value - lower, upper - value, 0.0))
            kind = "certified" if upper - lower <= 1e-6 * value else "estimate"
        out.value[k], out.error[k], out.lower[k], out.upper[k] = value, err, lower, upper
        out.kind[k] = kind
    return out


def _boxes(theta, rho, r_fro2, fro2, N):
    """Per-eigenvalue certified boxes (lo, hi) of length N (see vendi_large Notes)."""
    m = len(theta)
    slack = 1e-13 * (float(theta[0]) if m else 1.0)  # float64 rounding of the Ritz pass
    tr_c = max(1.0 - float(theta.sum()), 0.0) + m * slack
    fro_c = math.sqrt(max(fro2 - float(theta @ theta) - 2.0 * r_fro2, 0.0) + 1e-12 * fro2)
    c = min(tr_c, fro_c)
    lo = np.zeros(N)
    lo[:m] = np.maximum(theta - slack, 0.0)
    hi = np.empty(N)
    hi[:m] = np.maximum(theta, c) + rho + slack
    if m:
        t1 = float(theta[0])
        hi[0] = min(hi[0], 0.5 * (t1 + c + math.sqrt((t1 - c) ** 2 + 4 * rho * rho)) + slack)
    j = np.arange(1, N - m + 1)
    hi[m:] = np.minimum(np.minimum(tr_c / j, fro_c / np.sqrt(j)), c) + rho + slack
    hi = np.minimum(hi, 1.0 / np.arange(1, N + 1))
    return lo, np.maximum(hi, lo)


def _deflated_slq(op, U, theta, separated, probes, steps, seed, fro2, precision,
                  deadline=None, progress=None, limit=DEFAULT_MEMORY, n_total=None):  # fmt: skip
    """Lanczos on A from the Ritz vectors U and from Rademacher probes projected off U
    (the probes' on A with the ``separated`` Ritz vectors projected out: see vendi_large).

    ``tr f(A) = Σ_i u_iᵀ f(A) u_i + tr((I − UUᵀ) f(A) (I − UUᵀ))``: the first sum has one
    quadratic form per Ritz vector (no sampling), the second is estimated by the probes.
    Both take products with A itself, not with the deflated (I − UUᵀ)A(I − UUᵀ): the
    latter's spectrum together with the Ritz values is a pinching of A's, which biases
    every order (measured up to 0.34% at q = 1, one-sided, at n = 2000).
    """
    precision, precision_n = precision
    rng = np.random.default_rng(seed)
    N, m = U.shape
    Z = rng.choice([-1.0, 1.0], size=(N, probes))
    for _ in range(2):
        Z -= U @ (U.T @ Z)
    z2 = (Z * Z).sum(axis=0)
    keep = z2 > 1e-12 * N  # a basis of (nearly) the whole space leaves nothing to probe
    Z, z2 = Z[:, keep], z2[keep]
    Z /= np.sqrt(z2)
    # The Lanczos runs get their start columns as new arrays (they overwrite them): the
    # pilot's [U, first probes], then the probes themselves, never a copy of all of them.
    if not m + Z.shape[1]:
        return {"z2": z2, "quad": [], "ritz": [], "precision": "none", "noise": 0.0, "steps": 0}
    steps = np.r_[np.full(m, steps[1]), np.full(len(z2), steps[0])]
    # u_iᵀAu_i = θ_i is known in float64: at high orders Σ θ^q carries the whole sum, and
    # float32 products alone would leave it ~1e-7 off.
    first = np.r_[theta, np.full(len(z2), np.nan)]
    sep = U[:, separated]
    # "auto" first runs a pilot of the probes beside the Ritz columns and decides the rerun
    # from it: where the rerun follows, the other probes' float32 products would be thrown
    # away (at 30,000 × 64, 112 of the 128 probes' 40 float32 steps a set).
    pilot = m + (min(PILOT_PROBES, len(z2)) if precision == "auto" else len(z2))
    result, done = _lanczos(op, np.column_stack([U, Z[:, : pilot - m]]), steps[:pilot],
                            precision == "double",
                            deadline, first[:pilot], sep, m, progress)  # fmt: skip
    # float32 tiles perturb each entry by ~1e-7 relative, roughly at random: the spectrum
    # of K/n moves by ~2e-7·rms(K)/√N = 2e-7·‖A‖_F/√N. Eigenvalues below 30× that are
    # unresolved; "auto" redoes the Lanczos part in float64 when probes see mass there.
    floor = 6e-6 * math.sqrt(fro2 / N) if precision != "double" else 0.0
    ritz_floor = floor
    in_time = deadline is None or time.perf_counter() < deadline
    if precision == "auto":
        # As a larger set would decide (precision_n): see _rerun_floor.
        below = _rerun_floor(floor, n_total or N, precision_n)
        low = float(np.mean([r[1][r[0] < below].sum() for r in result[m:]] or [0.0]))
        precision = "single"
        if low > 1e-3 and in_time:
            # Only the probes are run in float64: they carry the small eigenvalues. A Ritz
            # vector's weight there is second order in its residual, and what float32
            # leaves unresolved of it still joins the error bar (ritz_noise). When K fits
            # in float64 it is held (the float32 one released first): one formation, then
            # a GEMM per step (at n = 15,000, d = 64, 128 probes: 3.4 s a step from the
            # tiles, 0.9 s held). At n = 10,000, d = 64 (clustered), redoing only the
            # probes took the call from 85 s to 72 s, every value within 1e-6 relative
            # of the all-float64 run.
            if 8.0 * N * N <= limit:
                op.hold_double()
            else:  # float64 products come from the tiles: a held float32 K is dead weight
                op.release()  # (9.3 GiB at n = 50,000) beside the float64 Krylov basis
            redo, done_probes = _lanczos(op, Z, steps[m:], True, deadline,
                                         first[m:], sep, 0, progress)  # fmt: skip
            result, done = result[:m] + redo, max(done, done_probes)
            precision, floor = "double", 0.0
        elif pilot < m + Z.shape[1] and in_time:  # the other probes, in float32 too
            rest, done_rest = _lanczos(op, Z[:, pilot - m :], steps[pilot:], False, deadline,
                                       first[pilot:], sep, 0, progress)  # fmt: skip
            result, done = result + rest, max(done, done_rest)
        else:  # the time budget is spent: the pilot's probes alone
            z2 = z2[: pilot - m]
    return {"z2": z2, "quad": result[m:], "ritz": result[:m], "precision": precision,
            "noise": floor, "ritz_noise": ritz_floor, "steps": done}  # fmt: skip


#: Probes run in float32 beside the Ritz columns before ``precision="auto"`` decides on the
#: float64 rerun (their products are lost when it follows). 16 of 128: the decision reads
#: their mean mass below the noise level, and either outcome is sound (a float32 run
#: counts that mass into its error bar).
PILOT_PROBES = 16


def column_bytes_per_point(stage: str) -> int:
    """Bytes a point of vendi_large's column blocks (with the defaults) at its two largest
    stages, for the planner: ``"rerun"``, the float64 Lanczos of the probes (their Krylov
    basis of PROBES × STEPS float64 values, and about 7 blocks of PROBES columns: products,
    the last two vectors, temporaries); ``"pilot"``, the float32 Lanczos of the Ritz
    vectors and PILOT_PROBES probes beside a held float32 K (a basis of RANK × RITZ_STEPS
    + PILOT_PROBES × STEPS float32 values, about 7 blocks of RANK + PILOT_PROBES columns).
    What memray showed beside K at n = 50,000, d = 768.

    >>> column_bytes_per_point("rerun"), column_bytes_per_point("pilot")
    (48128, 30656)
    >>> column_bytes_per_point("pilots")
    Traceback (most recent call last):
    ValueError: The 'stage' argument must be 'rerun' or 'pilot'. Got 'pilots'.
    """
    if stage == "rerun":
        return PROBES * STEPS * 8 + 7 * PROBES * 8
    if stage == "pilot":
        return (RANK * RITZ_STEPS + PILOT_PROBES * STEPS) * 4 + 7 * (RANK + PILOT_PROBES) * 8
    raise ValueError(f"The 'stage' argument must be 'rerun' or 'pilot'. Got {stage!r}.")

#: How fast the probes' small Gauss nodes approach the float32 noise level as the set
#: grows: the level at which they see 1e-3 of the mass, in units of the noise level, went
#: as n^(-0.6) to n^(-1.5) from 750 to 12,000 samples of the benchmarks' clustered sets
#: (d = 768 and d = 64). The steeper end: a timing probe then errs towards the rerun.
RERUN_GROWTH = 1.5


def _rerun_floor(floor: float, n: int, precision_n: int | None) -> float:
    """The level below which probe mass calls for the float64 rerun, on a set of ``n``
    samples standing for one of ``precision_n``.

    The noise level falls as n^(-1/2), the probes' small nodes faster: the rerun a set of
    30,000 ran (d = 64) was not seen by probes of its 1,500-sample subsets at the noise
    level of 1,500, and an estimate from them missed the rerun's time (117 s against
    1,451 s). Read on the subset, a node at ``floor (precision_n / n)^RERUN_GROWTH`` is at
    about ``floor`` at ``precision_n`` samples. An estimate's guide, not a bound: the run
    itself decides at its own n.

    >>> _rerun_floor(1e-7, 1500, None), _rerun_floor(1e-7, 1500, 1500)
    (1e-07, 1e-07)
    >>> round(_rerun_floor(1e-7, 1500, 6000) / 1e-7, 3)  # (6,000 / 1,500)^1.5
    8.0
    """
    if precision_n is None or precision_n <= n:
        return floor
    return floor * (precision_n / n) ** RERUN_GROWTH


def _separated(theta, beta):
    """Which Ritz pairs the probes' Lanczos deflates: far above the rest of the spectrum
    (θ_i ≥ 4 θ_m, θ_m the smallest Ritz value) with a residual well below that gap."""
    if not len(theta):
        return np.zeros(0, dtype=bool)
    gap = theta - theta[-1]
    return (theta >= _SEPARATION * theta[-1]) & (gap > 0) & (beta <= 0.1 * gap)


def _lanczos(op, V, steps, double, deadline=None, first=None, sep=None, start=0, progress=None):
    """Per-column Lanczos on A (full reorthogonalisation) from unit columns V, column j
    for ``steps[j]`` steps (it leaves the products once done); returns per column the
    Gauss rule and the Gauss–Radau rule (see _gauss_rule), and the steps taken.

    Past ``deadline`` (after at least two steps) every column stops where it is: the
    rules of fewer steps still bracket each quadratic form, only wider. ``first``: known
    values of the first diagonal entry ``vᵀAv`` (NaN where unknown), which replace the
    float32 ones in the rules. ``sep``: orthonormal columns projected out of the products
    of columns ``start`` on (Lanczos on ``PAP`` there, P = I − sep sepᵀ)."""
    P = V.shape[1]
    steps = np.broadcast_to(np.asarray(steps, dtype=np.int64), (P,))
    S = int(steps.max()) if P else 0
    basis = _KrylovBasis(V, steps, np.float64 if double else np.float32)
    alphas, betas = np.zeros((S, P)), np.zeros((S, P))
    prev, beta = np.zeros_like(V), np.zeros(P)
    alive = np.ones(P, dtype=bool)  # Krylov space not exhausted
    length = steps.copy()
    desc = (
        f"vendi_large: Lanczos steps ({'float64' if double else 'float32'}), {V.shape[0]:,} points"
    )
    for k in timed_progress(range(S), total=S, desc=desc, enabled=progress, unit="step"):
        act = np.flatnonzero(alive & (k < steps))
        if not len(act):
            break
        Va = V[:, act]
        basis.put(k, act, Va)
        W = op.matmat(Va, double=double)
        if sep is not None and sep.shape[1]:
            probe = act >= start
            if probe.any():
                Wp = W[:, probe]
                for _ in range(2):
                    Wp -= (sep @ (sep.T @ Wp)).astype(Wp.dtype)
                W[:, probe] = Wp
        a = (Va * W).sum(axis=0)
        # One n × columns temporary at a time (each is 82 MiB at n = 50,000, 216 columns).
        W -= Va * a
        W -= prev[:, act] * beta[act]
        # Full reorthogonalisation, per column, twice where once is not enough: where the
        # first pass took more than 1 − 1/√2 of the norm (the DGKS test; "twice is
        # enough"). Each pass reads the whole Krylov basis: both passes took 30 of 240 s
        # at 30,000 × 64, and the second is rarely needed.
        before = (W * W).sum(axis=0)
        basis.project_out(k, act, W)
        b2 = (W * W).sum(axis=0)
        again = b2 < 0.5 * before
        if again.all():
            basis.project_out(k, act, W)
            b2 = (W * W).sum(axis=0)
        elif again.any():
            redo = W[:, again]
            basis.project_out(k, act[again], redo)
            W[:, again] = redo
            b2[again] = (redo * redo).sum(axis=0)
        alphas[k, act] = a
        b = np.sqrt(b2)
        betas[k, act] = b
        stop = b <= 1e-10 * np.maximum(np.abs(a), 1e-300)
        length[act[stop]] = k + 1
        alive[act[stop]] = False
        late = k >= 1 and deadline is not None and time.perf_counter() > deadline
        if k == S - 1 or late:
            length = np.minimum(length, k + 1)
            break
        b = np.where(b > 0, b, 1.0)
        W /= b
        prev[:, act], V[:, act], beta[act] = Va, W, b
    if first is not None:
        alphas[0] = np.where(np.isnan(first), alphas[0], first)
    rules = [
        _gauss_rule(alphas[: length[j], j], betas[: length[j], j], exhausted=not alive[j])
        for j in range(P)
    ]
    return rules, int(length.max()) if P else 0


class _KrylovBasis:
    """The Lanczos vectors of every column, for full reorthogonalisation.

    Columns that run the same number of steps share one array of shape
    (columns, steps, n), so that projecting a step's vectors off their own earlier ones is
    one batched BLAS product per group (a column's vectors are contiguous rows), not a
    Python loop over steps with elementwise products: measured 0.48 s → 0.07 s per step at
    n = 10,000, 328 columns and 20 steps. Storage is float32 for float32 runs (it
    dominates the memory at large n); the coefficients are then float32 products too, as
    accurate as the float32 kernel products they orthogonalise.
    """

    def __init__(self, V: np.ndarray, steps: np.ndarray, dtype) -> None:
        n = V.shape[0]
        self.dtype = dtype
        self.group = np.empty(len(steps), dtype=np.int64)
        self.slot = np.empty(len(steps), dtype=np.int64)
        self.arrays: list[np.ndarray] = []
        for g, s in enumerate(np.unique(steps)):
            cols = np.flatnonzero(steps == s)
            self.group[cols], self.slot[cols] = g, np.arange(len(cols))
            self.arrays.append(np.empty((len(cols), int(s), n), dtype=dtype))

    def _parts(self, act: np.ndarray):
        """(array, slots, positions in act) per group with active columns; slots is a
        slice where the whole group is active (a view instead of a copy)."""
        for g, B in enumerate(self.arrays):
            where = np.flatnonzero(self.group[act] == g)
            if not len(where):
                continue
            slots = self.slot[act[where]]
            if len(slots) == B.shape[0]:
                yield B, slice(None), where
            else:
                yield B, slots, where

    def put(self, k: int, act: np.ndarray, Va: np.ndarray) -> None:
        """Store step k's vectors (columns of Va) of the columns ``act``."""
        for B, slots, where in self._parts(act):
            B[slots, k, :] = Va[:, where].T

    def project_out(self, k: int, act: np.ndarray, W: np.ndarray) -> None:
        """W[:, j] minus its projection on column act[j]'s vectors of steps 0..k, in place."""
        for B, slots, where in self._parts(act):
            Bk = B[slots, : k + 1, :]  # (columns, k + 1, n)
            w = np.ascontiguousarray(W[:, where].T, dtype=self.dtype)[:, :, None]
            coef = np.matmul(Bk, w)  # (columns, k + 1, 1)
            W[:, where] -= np.matmul(coef.transpose(0, 2, 1), Bk)[:, 0, :].T


#: Above this a Gauss–Radau node of the trace-1 operator is rounding (see _gauss_rule).
_NODE_CEILING = 1.0 + 1e-3


def _nodes_beyond(rules) -> bool:
    """Whether a Gauss rule of the trace-1 operator has a node outside its spectrum [0, 1]."""
    return any(len(rule[0]) and float(np.max(rule[0])) > _NODE_CEILING for rule in rules)


def _gauss_rule(a, b, exhausted):
    """Gauss rule (nodes, weights) of the Lanczos tridiagonal (a, b[:-1]) and the
    Gauss–Radau rule with a node fixed at 0 (b[-1] is the next off-diagonal).

    For f(x) = x^q with 0 < q < 2 and for −x log x, the derivatives of order 2s and 2s+1
    have constant, opposite signs on (0, ∞), so the two rules bracket each probe's
    quadratic form (Golub and Meurant, "Matrices, Moments and Quadrature", 2010, Ch. 6).
    When Lanczos exhausted its Krylov space the Gauss rule is exact: both are the same.
    """
    s = len(a)
    T = np.diag(a) + np.diag(b[: s - 1], 1) + np.diag(b[: s - 1], -1)
    x, V = np.linalg.eigh(T)
    gauss = (np.maximum(x, 0.0), V[0] ** 2)
    beta = float(b[s - 1]) if len(b) >= s else 0.0
    if exhausted or beta == 0.0:
        return gauss + gauss
    try:
        delta = np.linalg.solve(T, np.eye(s)[-1] * beta * beta)
    except np.linalg.LinAlgError:
        return gauss + gauss
    Te = np.zeros((s + 1, s + 1))
    Te[:s, :s] = T
    Te[s - 1, s] = Te[s, s - 1] = beta
    Te[s, s] = delta[-1]
    xr, Vr = np.linalg.eigh(Te)
    # A (K/n, PSD with trace 1) has its spectrum in [0, 1], and so have the rule's nodes in
    # exact arithmetic. A node beyond means T was near-singular against β (a numerically
    # low-rank set: nodes of 1e8 with weights ~0 at n = 50, d = 2, whose x^q overflowed
    # into a NaN score at q = 40): the Gauss rule alone, as when the space is exhausted.
    if not np.all(np.isfinite(xr)) or xr[-1] > _NODE_CEILING:
        return gauss + gauss
    return (*gauss, np.maximum(xr, 0.0), Vr[0] ** 2)


def _f(x, q, cut):
    """Summand of the complement trace for order q (see _estimate); f(0) = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if q == 1:
            return np.where(x > 0, -x * np.log(np.where(x > 0, x, 1.0)), 0.0)
        kept = np.where(x > cut, np.power(np.where(x > 0, x, 1.0), q), 0.0)
        return kept - x if abs(q - 1) < 0.5 else kept


def _fprime(x, q):
    """Derivative of _f at x > cut (the same three cases)."""
    if q == 1:
        return -math.log(x) - 1.0
    if q == 0:
        return 0.0
    return q * x ** (q - 1) - (1.0 if abs(q - 1) < 0.5 else 0.0)


def _pinching(q, slq, pairs, floor):
    """Second-order size of the bias from deflating the separated Ritz pairs (θ_i, β_i)
    from the probes' Lanczos: a complement eigenvalue λ coupled to θ_i by b moves the
    complement trace by (b/(θ_i − λ))²·(f(θ_i) − f(λ) − f'(λ)(θ_i − λ)), and the b over
    λ add up to at most β_i². λ ranges over [lowest probe node, θ_m] (the worst end for
    q < 1 is the lowest), θ_i − λ ≥ θ_i − θ_m."""
    top, beta, theta_m = slq.get("deflated", (np.zeros(0), np.zeros(0), 0.0))
    if not len(top) or q == 0 or np.isinf(q):
        return 0.0
    nodes = [r[0][r[1] > 0] for _, r in pairs]
    low = min((float(x.min()) for x in nodes if len(x)), default=theta_m)
    total = 0.0
    for lam in {max(min(low, theta_m), floor, _EPS), max(theta_m, floor, _EPS)}:
        f_top, f_lam = _f(top, q, 0.0), float(_f(np.array([lam]), q, 0.0)[0])
        total = max(total, float(np.sum(np.abs(f_top - f_lam - _fprime(lam, q) * (top - lam))
                                        * (beta / (top - theta_m)) ** 2)))  # fmt: skip
    return total


def _estimate(q, theta, slq, cut, fro2):
    """(value, error) of Vendi_q from the Ritz quadratic forms and the complement probes."""
    if np.isinf(q):
        return 1.0 / float(theta[0]), 0.0
    z2, quad, ritz = slq["z2"], slq["quad"], slq.get("ritz", [])
    if not quad:  # the Ritz vectors span the whole space
        z2, quad = np.zeros(2), [(np.zeros(1), np.zeros(1)) * 2] * 2
    pairs = list(zip(z2, quad, strict=True))
    # Control variate: subtract the tangent of f at the mean complement eigenvalue μ and
    # add back its exact trace f(μ)·(N − m) (the linear part sums to 0 as tr C = μ(N − m)).
    # What the probes estimate is then second order in the spread of the complement: at
    # n = 10k, d = 768 this cut the error bar of q = 1 from 6.5% to (see the benchmark).
    count, trace = slq.get("count", 0), slq.get("trace", 0.0)
    mu = trace / count if count else 0.0
    if mu > cut and mu > 0:
        f_mu, slope = float(_f(np.array([mu]), q, cut)[0]), _fprime(mu, q)

        def g(x):
            return _f(x, q, cut) - f_mu - slope * (x - mu)

        exact_part = f_mu * count
    else:

        def g(x):
            return _f(x, q, cut)

        exact_part = 0.0
    # The truth of each quadratic form lies between its Gauss and Gauss–Radau values
    # (0 < q < 2): take the middle, and half the gap as the quadrature error.
    gauss = np.array([z * float(r[1] @ g(r[0])) for z, r in pairs])
    radau = np.array([z * float(r[3] @ g(r[2])) for z, r in pairs])
    per_probe = 0.5 * (gauss + radau)
    comp = float(per_probe.mean()) + exact_part
    err = 3.0 * float(per_probe.std(ddof=1)) / math.sqrt(len(per_probe))
    err += float(0.5 * np.abs(gauss - radau).mean())
    # The Ritz part: one quadratic form per Ritz vector, no sampling; its quadrature error
    # adds up over the vectors.
    if ritz and q > 0:
        r_gauss = np.array([float(r[1] @ _f(r[0], q, cut)) for r in ritz])
        r_radau = np.array([float(r[3] @ _f(r[2], q, cut)) for r in ritz])
        # For a nearly exact eigenvector (residual below the float32 noise of the products)
        # the long float32 run only adds noise (measured 3e-10 relative at N = m = 200,
        # against a 1e-11 bar). For 0 < q < 2 the one-step float64 rules bracket its form
        # instead; for q > 2 they do not (both lie below it), so there the float32 run
        # stays and its distance to them joins the error bar.
        one = slq.get("ritz_one", [])
        if one:
            g1 = np.array([float(r[1] @ _f(r[0], q, cut)) for r in one])
            r1 = np.array([float(r[3] @ _f(r[2], q, cut)) for r in one])
            tight = np.abs(g1 - r1) <= 1e-10 * (np.abs(g1) + theta)
            if q < 2:
                r_gauss, r_radau = np.where(tight, g1, r_gauss), np.where(tight, r1, r_radau)
            else:
                gap = np.abs(0.5 * (g1 + r1) - 0.5 * (r_gauss + r_radau))
                err += float(gap[tight].sum())
        top_sum = float(0.5 * (r_gauss + r_radau).sum())
        err += float(0.5 * np.abs(r_gauss - r_radau).sum())
    else:
        top_sum = float(_f(theta, q, cut).sum())
    # Eigenvalues below ~100× the rank cutoff (or the float32 noise) cannot be told from
    # round-off; each may contribute up to f(floor) at low q: add that, honestly, to the bar.
    floor = max(100.0 * cut, slq["noise"])
    ritz_floor = max(100.0 * cut, slq.get("ritz_noise", slq["noise"]))
    if q < 1 and max(floor, ritz_floor) > 0:
        unresolved = float(np.mean([z * r[1][r[0] < floor].sum() for z, r in pairs]))
        err += unresolved * (floor**q + floor)
        unresolved = sum(float(r[1][r[0] < ritz_floor].sum()) for r in ritz)
        err += unresolved * (ritz_floor**q + ritz_floor)
    err += _pinching(q, slq, pairs, max(floor, cut))
    if q == 0:
        count = float(np.count_nonzero(theta > cut)) + comp
        return count, err
    if q == 1:
        H = top_sum + comp
        return math.exp(H), math.exp(H) * math.expm1(err)
    total = top_sum + comp
    F = 1.0 + total if abs(q - 1) < 0.5 else total
    if F <= 0:
        return math.nan, math.inf
    value = F ** (1.0 / (1.0 - q))
    return value, value * math.expm1(err / (F * abs(1.0 - q)))
