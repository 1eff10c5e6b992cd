"""Magnitude at large n: conjugate gradients on ``Z_t w = 1`` with certified lower bounds.

No n × n float64 matrix is formed. ``Z_t = exp(−t·D)`` is held in float32 when it fits in
``memory_limit`` (4 n² bytes), otherwise its tiles are recomputed from the embeddings at
every product. The float32 solve is refined against float64 residuals computed tile by
tile from the embeddings, which is what makes the lower bound certified.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import _pcg
from ._blockwise import DEFAULT_MEMORY, distinct_rows, one_thread
from ._operators import pair_operator, solver_input
from ._validation import check_parameter, one_of
from .distances import _block, prepare_embeddings
from .torch_engine import namespace

if TYPE_CHECKING:
    from .dask_engine import Shipped

__all__ = ["MagnitudeBounds", "magnitude_large"]

FUNC = "magnitude_large"
DISTANCES = ("euclidean", "cosine")


@dataclass
class MagnitudeBounds:
    """Magnitude per scale with bounds; arrays are in the order of the given ``t``.

    ``lower`` is certified: ``lower ≤ Mag(t)`` (up to float64 rounding of one product).
    ``upper`` is certified where ``kind == "certified"``, an estimate where ``"estimate"``.
    ``value`` is the best estimate (``lower`` plus the estimated remaining gap).
    """

    t: np.ndarray
    value: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    kind: list[str]
    iterations: np.ndarray
    breakdowns: list[str] = field(default_factory=list)
    n_distinct: int = 0
    mode: str = "held"
    #: Where the products with Z_t ran: ``"numpy"`` (this process), ``"torch"`` or ``"dask"``.
    engine: str = "numpy"


def _exp_entry(t: float, D: np.ndarray, out: np.ndarray) -> None:
    """``out = exp(−t·D)``: numpy, or tensors on a device. Module level, so that
    ``partial(_exp_entry, t)`` pickles to dask workers (a closure would not)."""
    xp = namespace(D)
    xp.multiply(D, -t, out=out)
    xp.exp(out, out=out)


def _expm1_entry(t: float, D: np.ndarray, out: np.ndarray) -> None:
    """``out = expm1(−t·D)`` (see :func:`_solve_scale`); picklable as ``partial``."""
    xp = namespace(D)
    xp.multiply(D, -t, out=out)
    xp.expm1(out, out=out)


def magnitude_large(
    X: ArrayLike,
    t: ArrayLike,
    *,
    distance: str = "euclidean",
    rtol: float = 1e-7,
    rank: int = 200,
    block: int = 256,
    regularization: float = 1e-2,
    memory_limit: float | None = None,
    max_iter: int = 500,
    device: str | None = None,
    time_budget: float | None = None,
    shipped: Shipped | None = None,
    _shift: float = 0.0,
) -> MagnitudeBounds:
    r"""Magnitude of the distinct rows of ``X`` at scales ``t``, with bounds, for large n.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Embeddings; identical rows are one point (magnitude is of the distinct points).
        A dask array (or chunked DataArray) is gathered once and shipped to the dask
        workers: the products with ``Z_t`` then run there (see ``shipped``).
    t : float or array_like of float
        Scales in (0, inf).
    distance : {"euclidean", "cosine"}
        Both give a positive definite ``Z_t`` for distinct points (Euclidean subsets [1]_;
        the cosine distance ``|x − y|²/2`` of unit vectors gives a Gaussian kernel).
    rtol : float, default 1e-7
        Stop when the estimated gap ``Mag − lower`` is below ``rtol·Mag``.
    rank, block, regularization : int, int, float
        Preconditioner: pivoted Cholesky of this rank plus block-Jacobi of the residual
        with blocks of this size, regularised by ``regularization`` × mean residual diagonal.
    memory_limit : float, optional
        Bytes the solver may use for ``Z_t`` (default 4 GiB). Below ``4 n²`` the tiles of
        ``Z_t`` are recomputed at every product (several times slower).
    max_iter : int
        CG iterations per solve.
    device : str, optional
        A torch device (``"cuda:0"``, ``"cpu"``) for the tiles of ``Z_t`` and the products
        (the float64 refinement products too); the CG vectors stay on the host.
    time_budget : float, optional
        Seconds for all scales. Scales are solved in increasing order; once the budget is
        spent, the remaining scales are not solved: ``kind`` is ``"skipped"`` and their
        ``value``/``lower``/``upper`` are NaN (the caller supplies cheaper bounds).
    shipped : Shipped, optional
        ``X`` already on the dask workers (:func:`.dask_engine.ship`): every product with
        ``Z_t`` runs there as upper-triangle row-block tasks, the float32 ``Z_t`` is held
        on the workers (:class:`.dask_operator.DaskPairOperator`); the preconditioner's
        columns and blocks and the CG vectors stay on the client.

    Returns
    -------
    MagnitudeBounds
        ``value``, ``lower``, ``upper``, ``kind``, ``iterations`` per scale, the
        ``breakdowns`` met (each restarted without preconditioner), ``n_distinct``, ``mode``,
        ``engine``.

    Notes
    -----
    For positive definite Z, :math:`\mathrm{Mag} = 1ᵀZ⁻¹1 = \max_w 2·1ᵀw − wᵀZw` [1]_, so
    every trial w gives a lower bound; with the float64 residual r = 1 − Zw (tiles
    recomputed in float64 from X) it is :math:`1ᵀw + wᵀr`, and exactly
    :math:`\mathrm{Mag} = 1ᵀw + wᵀr + rᵀZ⁻¹r`. The gap :math:`rᵀZ⁻¹r` is at most
    :math:`‖r‖²/λ_{\min}(Z)`: when Gershgorin proves
    :math:`λ_{\min} ≥ a = 1 − \max_i \sum_{j≠i} Z_{ij} > 0` (the row sums come with the
    first float64 product), ``upper = lower + ‖r‖²/a`` is certified. Otherwise no
    λ_min bound is available at reasonable cost (the smallest Ritz value is not one), and
    ``upper = lower + 2·ĝ + 1e-10·lower`` with ĝ the CG estimate of the gap is labelled
    ``"estimate"``.

    CG runs against a float32 copy of ``Z_t`` (``expm1(−tD)`` plus ``11ᵀ`` where
    ``t·mean(D) < 0.7``, so that the part of ``Z_t`` that matters keeps its relative
    accuracy) and is refined with float64 residuals until the estimated gap is below
    ``rtol``. The preconditioner is a rank-``rank`` pivoted Cholesky factor plus
    block-Jacobi on the regularised residual. Each CG step is checked (the energy
    ``bᵀx + xᵀr`` must grow, ``rᵀM⁻¹r`` and ``pᵀZp`` must be positive); a violation or a
    solve that does not converge escalates float32 PCG → float32 CG → float64 PCG →
    float64 CG and is recorded in ``breakdowns``. Scales are solved in increasing order,
    each warm-started from the previous solution. Memory: the float32 ``Z_t`` (4 n²
    bytes, or none in ``"recompute"`` mode), the n × rank factor and n × ``block``
    block inverses, a few vectors.

    References
    ----------
    .. [1] T. Leinster, "The magnitude of metric spaces", Doc. Math. 18 (2013) 857–905,
       Prop. 2.4.3 (variational form) and Thm. 2.5.3 (Euclidean spaces are positive definite).

    Examples
    --------
    Two points at distance ln 3 have magnitude 1.5 at t = 1:

    >>> import math
    >>> r = magnitude_large([[0.0], [math.log(3)]], 1.0)
    >>> round(float(r.value[0]), 10), bool(r.lower[0] <= 1.5 <= r.upper[0]), r.kind
    (1.5, True, ['certified'])
    """
    one_of(distance, "distance", FUNC, DISTANCES)
    X, shipped = solver_input(X, shipped, FUNC)
    arr = prepare_embeddings(X, distance, FUNC)
    ts, _ = check_parameter(t, "t", FUNC, low=0.0, low_open=True)
    Xd, _ = distinct_rows(arr)
    n = Xd.shape[0]
    limit = DEFAULT_MEMORY if memory_limit is None else float(memory_limit)
    mode = "held" if 4.0 * n * n <= limit else "recompute"
    order = np.argsort(ts)
    m = len(ts)
    out = MagnitudeBounds(
        t=ts, value=np.ones(m), lower=np.ones(m), upper=np.ones(m), kind=["certified"] * m,
        iterations=np.zeros(m, dtype=np.int64), n_distinct=n, mode=mode,
    )  # fmt: skip
    if n == 1:
        return out
    # Mean distance from ~256 rows: it only decides how Z_t is stored in float32.
    rows = Xd[:: max(1, n // 256)]
    mean_d = float(_block(rows, Xd, distance)[0].mean())
    deadline = None if time_budget is None else time.perf_counter() + float(time_budget)
    if shipped is not None and device is None:  # the distinct rows, on the workers once
        from .dask_operator import on_workers

        shipped = on_workers(shipped, Xd)
    else:
        shipped = None
    with one_thread():  # see vendi_large: one BLAS thread is faster on a shared machine
        _solve_all(Xd, distance, ts, order, out, mode=mode, rtol=rtol, rank=rank, block=block,
                   regularization=regularization, max_iter=max_iter, shift=_shift,
                   mean_d=mean_d, device=device, shipped=shipped,
                   deadline=deadline)  # fmt: skip
    return out


def _solve_all(Xd, distance, ts, order, out, *, deadline=None, **options):
    w = None
    for k in order:
        if deadline is not None and w is not None and time.perf_counter() > deadline:
            out.value[k] = out.lower[k] = out.upper[k] = np.nan
            out.kind[k] = "skipped"
            continue
        res = _solve_scale(Xd, distance, float(ts[k]), w, **options)
        w = res.pop("w")
        out.value[k], out.lower[k], out.upper[k] = res["value"], res["lower"], res["upper"]
        out.kind[k], out.iterations[k] = res["kind"], res["iterations"]
        out.engine = res["engine"]
        out.breakdowns += [f"t={ts[k]:.6g}: {b}" for b in res["breakdowns"]]


def _solve_scale(X, distance, t, w0, *, mode, mean_d, rtol, rank, block, regularization,
                 max_iter, shift, device, shipped):  # fmt: skip
    op = pair_operator(X, distance, partial(_exp_entry, t), device=device, shipped=shipped)
    n = op.n
    ones = np.ones(n)
    # Where Z_t ≈ 11ᵀ (t·mean D small) float32 entries keep only ~1e-7 of the 1 − tD that
    # matters and the float32 Z stops being positive definite (measured: pᵀZp < 0 at
    # t·mean D ≈ 0.1). expm1(−tD) keeps its relative accuracy: store it and add 11ᵀ.
    if t * mean_d < 0.7:
        op32 = pair_operator(X, distance, partial(_expm1_entry, t), device=device, shipped=shipped)

        def matvec32(v):
            return op32.matmat(v) + v.sum()
    else:
        op32, matvec32 = op, op.matmat
    if mode == "held":
        op32.hold()
    precond, _ = _pcg.build_preconditioner(
        op, rank=rank, block=block, regularization=regularization, _shift=shift
    )

    def matvec64(v):
        return op.matmat(v, double=True)

    # Escalation: float32 PCG, float32 plain CG (a bad preconditioner cannot break it),
    # float64 PCG, float64 plain CG. A breakdown or a solve that does not converge moves
    # to the next level for the rest of this scale; every move is reported.
    levels = [
        (matvec32, precond, "float32 PCG"),
        (matvec32, _pcg.identity, "float32 CG"),
        (matvec64, precond, "float64 PCG"),
        (matvec64, _pcg.identity, "float64 CG"),
    ]
    state = {"iterations": 0, "breakdowns": [], "level": 0}

    def solve(b, x0, tol):
        x = x0
        while True:
            matvec, M, name = levels[state["level"]]
            try:
                x, it, _ = _pcg.pcg(matvec, b, x, M, tol=tol, maxiter=max_iter)
                state["iterations"] += it
                if it < max_iter or state["level"] == len(levels) - 1:
                    return x
                problem = f"{name} did not converge in {max_iter} iterations"
            except _pcg.Breakdown as exc:
                x, problem = exc.x, f"{name}: {exc}"
            state["level"] += 1
            state["breakdowns"].append(f"{problem}; switched to {levels[state['level']][2]}")

    w = np.full(n, 1.0 / n) if w0 is None else w0
    w = solve(ones, w, 1e-5)
    best_lower, gap, rowmax = -math.inf, math.inf, None
    for _ in range(8):
        if rowmax is None:  # the first float64 product also gives the Gershgorin rows
            Zw = op.matmat(np.column_stack([w, ones]), double=True)
            rowmax = float(Zw[:, 1].max()) - 1.0
            Zw = Zw[:, 0]
        else:
            Zw = op.matmat(w, double=True)
        r = ones - Zw
        lower = float(w.sum() + w @ r)
        best_lower = max(best_lower, lower)
        dw = solve(r, np.zeros(n), 1e-4)
        # 2rᵀδ − δᵀZδ ≤ rᵀZ⁻¹r: a (float32-accurate) lower estimate of the gap, never an
        # overshoot even if δ is poor.
        gap = max(float(2 * r @ dw - dw @ levels[state["level"]][0](dw)), 0.0)
        if gap <= rtol * best_lower:
            break
        w = w + dw
    lam_min = 1.0 - rowmax - 1e-12 * n
    if lam_min > 0:
        upper, kind = best_lower + float(r @ r) / lam_min, "certified"
    else:
        # Twice the CG gap estimate, plus the float64 rounding of the lower bound itself
        # (a sum of n products of n-term sums: ~1e-10 relative at n = 10^5, generously).
        upper, kind = best_lower + 2.0 * gap + 1e-10 * best_lower, "estimate"
    value = min(best_lower + gap, upper)
    return {
        "w": w, "value": value, "lower": best_lower, "upper": upper, "kind": kind,
        "iterations": state["iterations"], "breakdowns": state["breakdowns"],
        "engine": op.engine,
    }  # fmt: skip
