"""Magnitude at large n: conjugate gradients on ``Z_t w = 1`` with certified lower bounds.

At most one n × n float64 matrix is formed, the distances, and only when it fits in
``memory_limit`` with the float32 ``Z_t`` beside it (12 n² bytes, mode ``"distances"``):
it is computed once per set and every scale reads ``Z_t`` from it. Otherwise each scale
forms ``Z_t`` from the embeddings, held in float32 when that fits (4 n² bytes, mode
``"held"``) or recomputed tile by tile at every product (``"recompute"``). The float32
solve is refined against float64 residuals (from the held distances, or tiles recomputed
in float64 from the embeddings), which is what makes the lower bound certified.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..core import check_parameter, one_of, timed_progress
from ..engines import (
    DEFAULT_MEMORY,
    Breakdown,
    HeldDistances,
    Preconditioner,
    build_preconditioner,
    distance_block,
    distinct_rows,
    held_bytes,
    identity_preconditioner,
    namespace,
    on_workers,
    one_thread,
    pair_operator,
    pcg,
    prepare_embeddings,
    solver_input,
)

if TYPE_CHECKING:
    from ..engines import Shipped

__all__ = ["MagnitudeBounds", "MagnitudeSolver", "magnitude_large"]

FUNC = "magnitude_large"
#: With a time budget the first scale starts only when this many products (timed on one)
#: fit in it: a scale cannot stop half-way, and takes ~30–50 products at n = 10,000 (the
#: preconditioner's columns, the CG iterations, the float64 products). Measured at
#: n = 100,000: one product recomputes its tiles in about a minute, and the first scale ran
#: past 12 minutes of a 120 s budget before this check.
PRODUCTS_PER_SCALE = 25
#: A preconditioner is reused only within this factor of the scale it was built at.
REUSE_SPAN = 8.0
DISTANCES = ("euclidean", "cosine")


@dataclass
class MagnitudeBounds:
    """Magnitude per scale with bounds; arrays are in the order of the given ``t``.

    ``lower`` is certified: ``lower ≤ Mag(t)`` (up to float64 rounding of one product).
    ``upper`` is certified where ``kind == "certified"``, an estimate where ``"estimate"``.
    ``value`` is the best estimate: ``lower`` plus the estimated remaining gap, or the
    middle of a certified bracket already narrower than ``rtol`` (no estimate computed).
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
    """``out = expm1(−t·D)`` (see :func:`_operators`); picklable as ``partial``."""
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
    progress: bool | None = None,
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
        Bytes the solver may hold (default 4 GiB). With ``12 n²`` (and a few row blocks) the
        float64 distances are held once and ``Z_t`` read from them at every scale (mode
        ``"distances"``, n ≲ 18,000 at 4 GiB); with ``4 n²``, ``Z_t`` is formed from the
        embeddings at every scale and held in float32 (``"held"``, several times slower);
        below that its tiles are recomputed at every product (``"recompute"``, slower still).
    max_iter : int
        CG iterations per solve.
    device : str, optional
        A torch device (``"cuda:0"``, ``"cpu"``) for the tiles of ``Z_t`` and the products
        (the float64 refinement products too); the CG vectors stay on the host. The held
        distances are host-only: with a device the mode is ``"held"`` or ``"recompute"``.
    time_budget : float, optional
        Seconds for all scales. Scales are solved in increasing order; the first starts
        only when PRODUCTS_PER_SCALE products (one is timed) fit in the budget, since a
        scale cannot stop half-way. Once the budget is spent (or too short for the first),
        the remaining scales are not solved: ``kind`` is ``"skipped"`` and their
        ``value``/``lower``/``upper`` are NaN (the caller supplies cheaper bounds).
    shipped : Shipped, optional
        ``X`` already on the dask workers (:func:`.dask_engine.ship`): every product with
        ``Z_t`` runs there as upper-triangle row-block tasks, the float32 ``Z_t`` is held
        on the workers (:class:`.dask_operator.DaskPairOperator`); the preconditioner's
        columns and blocks and the CG vectors stay on the client. The held distances are
        not used then (they would be an n × n matrix on the client).
    progress : bool, optional
        A bar with an ETA over the scales; by default when the first scale, timed,
        predicts the rest to take more than a few seconds.

    Returns
    -------
    MagnitudeBounds
        ``value``, ``lower``, ``upper``, ``kind``, ``iterations`` per scale, the
        ``breakdowns`` met (each restarted without preconditioner), ``n_distinct``, ``mode``,
        ``engine``.

    Notes
    -----
    For positive definite Z, :math:`\mathrm{Mag} = 1ᵀZ⁻¹1 = \max_w 2·1ᵀw − wᵀZw` [1]_, so
    every trial w gives a lower bound; with the float64 residual r = 1 − Zw (from the
    held float64 distances, or tiles recomputed in float64 from X) it is
    :math:`1ᵀw + wᵀr`, and exactly
    :math:`\mathrm{Mag} = 1ᵀw + wᵀr + rᵀZ⁻¹r`. The gap :math:`rᵀZ⁻¹r` is at most
    :math:`‖r‖²/λ_{\min}(Z)`: when Gershgorin proves
    :math:`λ_{\min} ≥ a = 1 − \max_i \sum_{j≠i} Z_{ij} > 0` (the row sums come with the
    first float64 product), ``upper = lower + ‖r‖²/a`` is certified. Otherwise no
    λ_min bound is available at reasonable cost (the smallest Ritz value is not one), and
    ``upper = lower + 2·ĝ + 1e-10·lower`` with ĝ the CG estimate of the gap is labelled
    ``"estimate"``.

    CG runs against a float32 copy of ``Z_t`` (``expm1(−tD)`` plus ``11ᵀ`` where
    ``t·mean(D) < 0.7``, so that the part of ``Z_t`` that matters keeps its relative
    accuracy) and is refined with float64 residuals until the certified gap
    ``‖r‖²/a``, or else the estimated gap, is below ``rtol`` (usually after one float64
    product). The preconditioner is a rank-``rank`` pivoted Cholesky factor plus
    block-Jacobi on the regularised residual, reused across scales until the extra
    iterations it costs add up to a rebuild. Each CG step is checked (the energy
    ``bᵀx + xᵀr`` must grow, ``rᵀM⁻¹r`` and ``pᵀZp`` must be positive); a violation or a
    solve that does not converge escalates float32 PCG → float32 CG → float64 PCG →
    float64 CG and is recorded in ``breakdowns``. Scales are solved in increasing order,
    each warm-started from the previous solutions (extrapolated in log t). Memory: the
    float64 distances (8 n² bytes, mode ``"distances"`` only), the float32 ``Z_t`` (4 n²
    bytes, or none in ``"recompute"`` mode), the n × rank factor and n × ``block`` block
    inverses, a few vectors.

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
    solver = MagnitudeSolver(
        X, distance=distance, rtol=rtol, rank=rank, block=block, regularization=regularization,
        memory_limit=memory_limit, max_iter=max_iter, device=device, time_budget=time_budget,
        shipped=shipped, progress=progress, _shift=_shift,
    )  # fmt: skip
    try:
        return solver.solve(t)
    finally:
        solver.close()


class MagnitudeSolver:
    """:func:`magnitude_large` at more scales later: one set prepared once, solved at any
    scales, call after call (an adaptive grid's rounds).

    Takes :func:`magnitude_large`'s arguments but ``t``. What carries from one call to the
    next: the float64 distances where they are held (``keep``; else they are formed again
    at each call and released after it), every solution so far (a new scale starts from
    the linear interpolation in log t of the solutions either side of it, or the
    extrapolation of the two nearest, whichever has the larger energy) and the
    preconditioner. A time budget counts from each call. :meth:`close` releases the held
    distances.

    Examples
    --------
    >>> import math
    >>> solver = MagnitudeSolver([[0.0], [math.log(3)]])
    >>> [round(float(v), 10) for v in solver.solve([1.0]).value]
    [1.5]
    >>> r = solver.solve([0.5, 2.0])  # warm-started from t = 1
    >>> r.kind, solver.scales_solved
    (['certified', 'certified'], 3)
    >>> solver.close()
    """

    def __init__(
        self,
        X: ArrayLike,
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
        progress: bool | None = None,
        keep: bool = True,
        _shift: float = 0.0,
    ) -> None:
        one_of(distance, "distance", FUNC, DISTANCES)
        X, shipped = solver_input(X, shipped, FUNC)
        arr = prepare_embeddings(X, distance, FUNC)
        self.Xd, _ = distinct_rows(arr)
        n = self.n = self.Xd.shape[0]
        limit = DEFAULT_MEMORY if memory_limit is None else float(memory_limit)
        if device is None and shipped is None and held_bytes(n) <= limit:
            self.mode = "distances"
        else:
            self.mode = "held" if 4.0 * n * n <= limit else "recompute"
        self.distance, self.time_budget, self.progress, self.keep = (
            distance, time_budget, progress, keep
        )  # fmt: skip
        self.solver_options = {
            "rtol": rtol, "rank": rank, "block": block, "regularization": regularization,
            "max_iter": max_iter, "shift": _shift,
        }  # fmt: skip
        self.device, self.shipped = device, None
        self.mean_d = 0.0
        if n > 1:
            # Mean distance from ~256 rows: it only decides how Z_t is stored in float32.
            rows = self.Xd[:: max(1, n // 256)]
            self.mean_d = float(distance_block(rows, self.Xd, distance)[0].mean())
            if shipped is not None and device is None:  # the distinct rows, on the workers
                self.shipped = on_workers(shipped, self.Xd)
        self.held: HeldDistances | None = None
        self.carry = _Carry()

    @property
    def scales_solved(self) -> int:
        """How many scales this solver has solved (each is a warm start for later ones)."""
        return len(self.carry.solved)

    def solve(self, t: ArrayLike) -> MagnitudeBounds:
        """Magnitude at scales ``t`` (see :func:`magnitude_large`)."""
        ts, _ = check_parameter(t, "t", FUNC, low=0.0, low_open=True)
        m = len(ts)
        out = MagnitudeBounds(
            t=ts, value=np.ones(m), lower=np.ones(m), upper=np.ones(m),
            kind=["certified"] * m, iterations=np.zeros(m, dtype=np.int64),
            n_distinct=self.n, mode=self.mode,
        )  # fmt: skip
        if self.n == 1:
            return out
        budget = self.time_budget
        deadline = None if budget is None else time.perf_counter() + float(budget)
        with one_thread():  # see vendi_large: one BLAS thread is faster on a shared machine
            if self.mode == "distances" and self.held is None:
                self.held = HeldDistances(self.Xd, self.distance)
            try:
                _solve_all(self.Xd, self.distance, ts, np.argsort(ts), out, self.carry,
                           mode=self.mode, mean_d=self.mean_d, device=self.device,
                           shipped=self.shipped, deadline=deadline, held=self.held,
                           progress=self.progress, **self.solver_options)  # fmt: skip
            finally:
                if not self.keep:
                    self.held = None
        return out

    def close(self) -> None:
        """Release the held distances (a later :meth:`solve` forms them again)."""
        self.held = None


@dataclass
class _Carry:
    """What one scale hands the next: solutions (warm start) and the preconditioner."""

    ws: list = field(default_factory=list)  # (log t, w) of the two scales to start from
    solved: dict = field(default_factory=dict)  # log t -> solution, every scale so far
    precond: Preconditioner | None = None
    base: int = 0  # fewest iterations of a first solve with this preconditioner
    excess: int = 0  # iterations spent above ``base`` since it was built
    log_t: float = 0.0  # the scale it was built at


def _solve_all(Xd, distance, ts, order, out, carry, *, deadline, held, mean_d, device, shipped,
               mode, progress=None, **solver_options):  # fmt: skip
    operator_options = {"mean_d": mean_d, "device": device, "shipped": shipped, "mode": mode}
    fits = True  # with a budget: whether a whole scale fits in what is left of it
    desc = f"magnitude_large: scales of {Xd.shape[0]:,} points"
    for k in timed_progress(order, total=len(order), desc=desc, enabled=progress, unit="scale"):
        spent = deadline is not None and (not fits or time.perf_counter() > deadline)
        if not spent:
            t = float(ts[k])
            # The last scale's Z_t goes before this one's is formed: in "held" mode each is
            # a float32 n × n matrix, and rebinding alone kept both (measured at 50,000: a
            # 20.6 GB peak for a 10 GB plan).
            op = matvec32 = None
            op, matvec32 = _operators(Xd, distance, t, held=held, **operator_options)
            if deadline is not None and not carry.ws:  # a scale cannot stop half-way:
                start = time.perf_counter()  # start one only if its products fit
                matvec32(np.ones(op.n))
                product = time.perf_counter() - start
                fits = time.perf_counter() + PRODUCTS_PER_SCALE * product <= deadline
                spent = not fits
        if spent:
            out.value[k] = out.lower[k] = out.upper[k] = np.nan
            out.kind[k] = "skipped"
            continue
        carry.ws = _neighbours(carry.solved, math.log(t))
        res = _solve_scale(op, matvec32, math.log(t), carry, **solver_options)
        carry.solved[math.log(t)] = carry.ws[-1][1]
        out.engine = getattr(op, "engine", "numpy")
        out.value[k], out.lower[k], out.upper[k] = res["value"], res["lower"], res["upper"]
        out.kind[k], out.iterations[k] = res["kind"], res["iterations"]
        out.breakdowns += [f"t={ts[k]:.6g}: {b}" for b in res["breakdowns"]]


def _neighbours(solved: dict, log_t: float) -> list:
    """The two solved scales a new one starts from (see :func:`_warm_start`), the nearer
    last: either side of it where both exist, else the two nearest on its one side (in a
    sweep upward: the last two, as before sessions existed)."""
    if log_t in solved:
        return [(log_t, solved[log_t])]
    below = sorted(s for s in solved if s < log_t)
    above = sorted(s for s in solved if s > log_t)
    if below and above:
        pair = (below[-1], above[0])
        pair = pair if log_t - pair[0] >= pair[1] - log_t else pair[::-1]  # nearer last
    elif below:
        pair = tuple(below[-2:])
    else:
        pair = tuple(above[:2][::-1])
    return [(s, solved[s]) for s in pair]


def _operators(Xd, distance, t, *, held, mean_d, device, shipped, mode):
    """Z_t at one scale: an operator for the float64 products, tiles and columns, and the
    float32 product the iterations use.

    Where Z_t ≈ 11ᵀ (t·mean D small) float32 entries keep only ~1e-7 of the 1 − tD that
    matters and the float32 Z stops being positive definite (measured: pᵀZp < 0 at
    t·mean D ≈ 0.1). expm1(−tD) keeps its relative accuracy: store it and add 11ᵀ.
    """
    small = t * mean_d < 0.7
    if held is not None:
        Z = held.kernel(t)
        Z.fill32(expm1=small)
        return Z, Z.matvec32
    op = pair_operator(Xd, distance, partial(_exp_entry, t), device=device, shipped=shipped)
    if small:
        op32 = pair_operator(Xd, distance, partial(_expm1_entry, t), device=device, shipped=shipped)

        def matvec32(v):
            return op32.matmat(v) + v.sum()
    else:
        op32, matvec32 = op, op.matmat
    if mode == "held":
        op32.hold()
    return op, matvec32


def _warm_start(carry: _Carry, log_t: float, n: int, matvec) -> np.ndarray:
    """The previous scale's solution, or its linear extrapolation in log t from the last
    two, whichever has the larger energy ``2·1ᵀx − xᵀZx`` (= Mag − ‖x − w*‖²_Z: the one
    nearer the solution). Extrapolating over a wide step of a coarse grid can land far off
    (measured: float32 overflow in the next CG), so it is never taken blindly."""
    if not carry.ws:
        return np.full(n, 1.0 / n)
    (s1, w1) = carry.ws[-1]
    if len(carry.ws) < 2:
        return w1.copy()
    s0, w0 = carry.ws[-2]
    guess = w1 + (w1 - w0) * ((log_t - s1) / (s1 - s0))
    return guess if _energy(guess, matvec) > _energy(w1, matvec) else w1.copy()


def _energy(x: np.ndarray, matvec) -> float:
    """``2·1ᵀx − xᵀZx`` (−inf when it overflows): larger is nearer the solution."""
    with np.errstate(over="ignore", invalid="ignore"):
        e = float(2.0 * x.sum() - x @ matvec(x))
    return e if math.isfinite(e) else -math.inf


def _solve_scale(op, matvec32, log_t, carry, *, rtol, rank, block, regularization,
                 max_iter, shift):  # fmt: skip
    n = op.n
    ones = np.ones(n)
    state = {"iterations": 0, "breakdowns": [], "level": 0}

    def build():
        precond, _ = build_preconditioner(
            op, rank=rank, block=block, regularization=regularization, _shift=shift
        )
        return precond

    def matvec64(v):
        return op.matmat(v, double=True)

    # The previous scale's preconditioner (M = B + LLᵀ stays positive definite whatever t
    # is) is reused until the iterations it costs above its best (the first solves grow as
    # t moves away) add up to a rebuild, whose cost in iterations grows as rank²/n
    # (a rebuild ≈ 36 iterations at n = 4,000, measured). A first solve that alone runs
    # past that rebuilds at once and goes on from where it stopped.
    cost = int(1.5 * (rank * rank + block * block) / n) + 2
    # Never reused across more than a factor REUSE_SPAN in t: from a distant scale it can
    # be poor enough for float32 CG to diverge on the small right-hand side of the gap
    # solve (measured: a t = 0.05 preconditioner at t = 2).
    far = abs(log_t - carry.log_t) > math.log(REUSE_SPAN)
    fresh = carry.precond is None or carry.excess >= cost or far
    precond = build() if fresh else carry.precond
    if fresh:
        carry.log_t = log_t
    x = _warm_start(carry, log_t, n, matvec32)
    if not fresh:
        start = x
        try:
            x, it, _ = pcg(matvec32, ones, x, precond, tol=1e-5, maxiter=carry.base + cost)
        except Breakdown as exc:
            x, it = exc.x, carry.base + cost
            state["breakdowns"].append(f"reused preconditioner: {exc}; rebuilt it")
        state["iterations"] += it
        carry.excess += max(it - carry.base, 0)
        carry.base = min(carry.base, it)
        if it >= carry.base + cost:
            precond, fresh = build(), True
            carry.log_t = log_t
            # A preconditioner from a distant scale can drive float32 CG far off (measured:
            # entries ~1e39 from a t = 0.05 preconditioner at t = 2); restarting from there
            # would cap the accuracy float32 can reach, so keep the better of the two.
            if _energy(start, matvec32) > _energy(x, matvec32):
                x = start

    # Escalation: float32 PCG, float32 plain CG (a bad preconditioner cannot break it),
    # float64 PCG, float64 plain CG. A breakdown or a solve that does not converge moves
    # to the next level for the rest of this scale; every move is reported.
    levels = [
        (matvec32, precond, "float32 PCG"),
        (matvec32, identity_preconditioner, "float32 CG"),
        (matvec64, precond, "float64 PCG"),
        (matvec64, identity_preconditioner, "float64 CG"),
    ]

    def solve(b, x0, tol):
        x = x0
        while True:
            matvec, M, name = levels[state["level"]]
            try:
                x, it, _ = pcg(matvec, b, x, M, tol=tol, maxiter=max_iter)
                state["iterations"] += it
                if it < max_iter or state["level"] == len(levels) - 1:
                    return x
                problem = f"{name} did not converge in {max_iter} iterations"
            except Breakdown as exc:
                problem = f"{name}: {exc}"
            # The next level starts again from x0: a failed float32 iteration may have
            # wandered far (entries ~1e7 and more were measured), and a start that large
            # caps the accuracy any float32 level can reach.
            x = x0
            state["level"] += 1
            state["breakdowns"].append(f"{problem}; switched to {levels[state['level']][2]}")

    if fresh:
        before = state["iterations"]
        w = solve(ones, x, 1e-5)
        carry.base, carry.excess = state["iterations"] - before, 0
    else:
        w = x
    best_lower, gap, lam_min = -math.inf, None, None
    dw = None
    for _ in range(8):
        if lam_min is None:  # the first float64 product also gives the Gershgorin rows
            Zw = op.matmat(np.column_stack([w, ones]), double=True)
            lam_min = 2.0 - float(Zw[:, 1].max()) - 1e-12 * n  # 1 − max off-diagonal row sum
            Zw = Zw[:, 0]
        else:
            Zw = op.matmat(w, double=True)
        r = ones - Zw
        lower = float(w.sum() + w @ r)
        best_lower = max(best_lower, lower)
        # Mag − lower = rᵀZ⁻¹r ≤ ‖r‖²/λ_min: certified, and when that is already within
        # rtol no estimate of the gap is needed.
        if lam_min > 0 and float(r @ r) / lam_min <= rtol * best_lower:
            gap, dw = None, None
            break
        # 2rᵀδ − δᵀZδ ≤ rᵀZ⁻¹r: a (float32-accurate) lower estimate of the gap, never an
        # overshoot even if δ is poor. Its shortfall is the squared error of δ in the Z
        # norm, and the estimated upper bound needs it small: solved to 1e-2 or 1e-3
        # (29% fewer iterations at n = 4,000) it fell below the truth by 1e-8 relative
        # at the smallest scale of tests/test_streaming.py's time-budget case; 1e-4 held.
        dw = solve(r, np.zeros(n), 1e-4)
        gap = max(float(2 * r @ dw - dw @ levels[state["level"]][0](dw)), 0.0)
        if gap <= rtol * best_lower:
            break
        w = w + dw
        dw = None
    if lam_min > 0:
        upper, kind = best_lower + float(r @ r) / lam_min, "certified"
    else:
        # Twice the CG gap estimate, plus the float64 rounding of the lower bound itself
        # (a sum of n products of n-term sums: ~1e-10 relative at n = 10^5, generously).
        upper, kind = best_lower + 2.0 * gap + 1e-10 * best_lower, "estimate"
    value = (best_lower + upper) / 2 if gap is None else min(best_lower + gap, upper)
    # Hand on the best solution (w + δ when δ was computed) and a preconditioner that did
    # not break down; a rebuilt one records how many iterations it needed.
    carry.ws = [*carry.ws[-1:], (log_t, w if dw is None else w + dw)]
    carry.precond = precond if state["level"] == 0 else None
    return {
        "value": value, "lower": best_lower, "upper": upper, "kind": kind,
        "iterations": state["iterations"], "breakdowns": state["breakdowns"],
    }  # fmt: skip
