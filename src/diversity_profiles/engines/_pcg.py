"""Preconditioned conjugate gradients that watch themselves, and the preconditioner they use.

The preconditioner is a rank-k pivoted Cholesky factor ``L`` of the matrix plus a
block-Jacobi approximation of the residual ``Z - L Lᵀ`` (Woodbury for the inverse). Both
can fail in floating point — a zero residual diagonal at pivot rows makes the blocks
singular — so the blocks are regularised and every CG step is checked: the energy
functional must increase and ``rᵀ M⁻¹ r`` must stay positive. A violated check is a
*breakdown*, reported to the caller, who restarts without the preconditioner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ._blockwise import one_thread


class Kernel(Protocol):
    """What the preconditioner reads of a kernel matrix: a :class:`._blockwise.PairOperator`
    or ``magnitude_large``'s :class:`._held_distances.HeldKernel`."""

    n: int
    scale: np.ndarray | None

    def columns(self, idx: np.ndarray) -> np.ndarray: ...

    def tile(self, rows, cols, double: bool = True) -> np.ndarray: ...


class Breakdown(RuntimeError):
    """CG stopped being a descent method (indefinite preconditioner or lost accuracy)."""

    x: np.ndarray | None = None  # the best iterate before the breakdown


@dataclass
class Preconditioner:
    """``M = B + L Lᵀ`` with ``B`` block diagonal (in the permuted order ``perm``).

    Applied as ``M⁻¹r = B⁻¹r − W Lᵀ B⁻¹ r`` with ``W = B⁻¹L (I + LᵀB⁻¹L)⁻¹`` formed once,
    and the equal-sized blocks stacked for one batched product: a CG step at n = 2,000
    spent more time in a per-block Python loop and a Cholesky solve than in its product
    with the matrix.
    """

    L: np.ndarray  # (n, k)
    perm: np.ndarray  # blocks are contiguous runs of perm
    bounds: list[tuple[int, int]]
    inverses: list[np.ndarray]  # inverse of each regularised block
    W: np.ndarray = field(init=False)  # B⁻¹ L (I + Lᵀ B⁻¹ L)⁻¹

    def __post_init__(self):
        sizes = [b - a for a, b in self.bounds]
        self._full = sum(1 for s in sizes if s == sizes[0]) if sizes else 0
        self._size = sizes[0] if sizes else 0
        self._stacked = np.stack(self.inverses[: self._full]) if self._full else None
        Y = self._block_solve(self.L)
        S = np.eye(self.L.shape[1]) + self.L.T @ Y
        with one_thread():
            try:
                from scipy.linalg import cho_factor, cho_solve

                S_inv = cho_solve(cho_factor((S + S.T) / 2), np.eye(len(S)))
            except np.linalg.LinAlgError:
                # Indefinite blocks (only when sabotaged): go on; CG's monitor catches it.
                w, V = np.linalg.eigh((S + S.T) / 2)
                S_inv = (V / w) @ V.T
        self.W = Y @ S_inv

    def _block_solve(self, V: np.ndarray) -> np.ndarray:
        Vp = V[self.perm]
        m = self._full * self._size
        if self._stacked is not None:
            head = Vp[:m].reshape(self._full, self._size, -1)
            Vp[:m] = np.matmul(self._stacked, head).reshape(Vp[:m].shape)
        for (a, b), inv in zip(self.bounds[self._full :], self.inverses[self._full :], strict=True):
            Vp[a:b] = inv @ Vp[a:b]
        out = np.empty_like(V)
        out[self.perm] = Vp
        return out

    def __call__(self, r: np.ndarray) -> np.ndarray:
        u = self._block_solve(r)
        return u - self.W @ (self.L.T @ u)


def pivoted_cholesky(
    op: Kernel, rank: int, rtol: float = 1e-10
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Greedy pivoted Cholesky of K (unit diagonal); returns (L, pivots, residual diagonal).

    Each step takes the largest residual diagonal entry; the residual ``K - L Lᵀ`` stays
    positive semidefinite, and its diagonal is exactly what the block-Jacobi part needs.
    """
    n = op.n
    diag = np.ones(n) if op.scale is None else op.scale**2
    total = float(diag.sum())
    L = np.zeros((n, min(rank, n)))
    pivots = []
    for j in range(L.shape[1]):
        p = int(np.argmax(diag))
        if diag[p] <= rtol * total / n:
            break
        col = op.columns(np.array([p]))[:, 0] - L[:, :j] @ L[p, :j]
        L[:, j] = col / math.sqrt(diag[p])
        diag -= L[:, j] ** 2
        np.maximum(diag, 0.0, out=diag)
        diag[p] = 0.0
        pivots.append(p)
    k = len(pivots)
    return L[:, :k], np.array(pivots, dtype=np.intp), diag


def build_preconditioner(
    op: Kernel,
    *,
    rank: int = 200,
    block: int = 256,
    regularization: float = 1e-2,
    _shift: float = 0.0,
) -> tuple[Preconditioner, dict]:
    """Pivoted-Cholesky + block-Jacobi preconditioner of ``op``'s matrix.

    The residual blocks are regularised by ``regularization × mean residual diagonal``:
    without it, rows of pivots (residual exactly 0) make the blocks singular — the failure
    that once gave a silent 15% error. ``_shift`` (tests only) subtracts a multiple of the
    identity from every block *after* regularisation, to provoke a breakdown on purpose.
    """
    L, pivots, diag = pivoted_cholesky(op, rank)
    n = op.n
    if len(pivots):
        # Points grouped by their nearest pivot, so a diagonal block holds neighbours.
        C = L[:, : min(64, L.shape[1])]
        owner = np.argmax(np.abs(C), axis=1)
        perm = np.argsort(owner, kind="stable")
    else:
        perm = np.arange(n)
    mean_diag = float(diag.mean()) if n else 0.0
    reg = regularization * mean_diag if mean_diag > 0 else 1e-12
    bounds, inverses = [], []
    with one_thread():
        for a in range(0, n, block):
            b = min(a + block, n)
            idx = np.sort(perm[a:b])
            perm[a:b] = idx
            R = op.tile(idx, idx, double=True) - L[idx] @ L[idx].T
            inverses.append(_regularised_inverse((R + R.T) / 2, reg, _shift))
            bounds.append((a, b))
        return Preconditioner(L, perm, bounds, inverses), {"rank": len(pivots), "reg": reg}


def _regularised_inverse(R: np.ndarray, reg: float, shift: float) -> np.ndarray:
    """Inverse of the residual block ``R + reg·I`` (``R`` is PSD up to round-off).

    From its Cholesky factor by LAPACK ``potri`` (a third of the work of solving against
    the identity: the blocks were most of a rebuilt preconditioner's time).
    """
    from scipy.linalg.lapack import dpotrf, dpotri

    if shift == 0.0:
        c, info = dpotrf(R + reg * np.eye(R.shape[0]), lower=1, clean=0)
        if info == 0:
            inv, info = dpotri(c, lower=1)
            if info == 0:
                return np.tril(inv) + np.tril(inv, -1).T
        # round-off made R indefinite beyond reg: clip its spectrum instead
    w, V = np.linalg.eigh(R)
    w = w + reg - shift if shift else np.maximum(w + reg, reg / 2)
    return (V / w) @ V.T


def pcg(matvec, b, x0, precond, *, tol: float, maxiter: int) -> tuple[np.ndarray, int, float]:
    """Solve ``A x = b`` (A SPD) from ``x0``; returns (x, iterations, energy bᵀx + xᵀr).

    The energy ``2 bᵀx − xᵀAx = bᵀx + xᵀr`` is a lower bound on ``bᵀA⁻¹b`` at every iterate
    and must not decrease; ``rᵀM⁻¹r`` must stay positive. A violation raises
    :class:`Breakdown` (with the best x so far attached as ``.x``). A diverging float32
    iteration overflows to inf/NaN, which the same checks catch: numpy's overflow warnings
    are silenced here because the breakdown is the report.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return _pcg(matvec, b, x0, precond, tol=tol, maxiter=maxiter)


def _pcg(matvec, b, x0, precond, *, tol: float, maxiter: int) -> tuple[np.ndarray, int, float]:
    x = x0.copy()
    r = b - matvec(x) if np.any(x) else b.copy()
    bnorm = float(np.linalg.norm(b)) or 1.0
    energy = float(b @ x + x @ r)
    z = precond(r)
    rz = float(r @ z)
    p = z.copy()
    best = (x.copy(), energy)
    for it in range(1, maxiter + 1):
        if np.linalg.norm(r) <= tol * bnorm:
            return x, it - 1, energy
        if not (rz > 0 and math.isfinite(rz)):
            raise _breakdown(f"rᵀM⁻¹r = {rz:.3g} ≤ 0 at step {it}", best)
        q = matvec(p)
        pq = float(p @ q)
        if not (pq > 0 and math.isfinite(pq)):
            raise _breakdown(f"pᵀAp = {pq:.3g} ≤ 0 at step {it} (matrix not PD?)", best)
        alpha = rz / pq
        x += alpha * p
        r -= alpha * q
        new = float(b @ x + x @ r)
        # Exact arithmetic: the energy grows by alpha·rz > 0. Round-off of float32 products
        # moves xᵀr by up to ~n·u·‖x‖² (entries of A ≤ 1), which dwarfs the energy when
        # A ≈ 11ᵀ (small t); a larger fall is a broken iteration.
        slack = 1e-5 * abs(new) + 4.0 * len(b) * 6e-8 * float(x @ x)
        if new < energy - slack - 1e-30:
            raise _breakdown(f"energy fell from {energy:.9g} to {new:.9g} at step {it}", best)
        energy = new
        if energy >= best[1]:
            best = (x.copy(), energy)
        z = precond(r)
        rz_new = float(r @ z)
        p *= rz_new / rz
        p += z
        rz = rz_new
    return x, maxiter, energy


def _breakdown(message: str, best) -> Breakdown:
    exc = Breakdown(message)
    exc.x = best[0]
    return exc


def identity(r: np.ndarray) -> np.ndarray:
    return r
