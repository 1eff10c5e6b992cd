"""Certified brackets on Hill numbers from partial spectral information.

Let λ_1 ≥ … ≥ λ_N ≥ 0 be the eigenvalues of a PSD matrix A with trace 1, and suppose
``lo[i] ≤ λ_i ≤ hi[i]`` for every i (i-th largest). Among all vectors obeying these boxes
and the sum, two are extreme in the majorisation order [1]_:

* the *greedy* vector, which starts at ``lo`` and pours the missing mass into the
  leading entries up to their caps, majorises every feasible sorted vector;
* the *water-filled* vector ``clip(level, lo, hi)`` with the level fixed by the sum is
  majorised by every feasible vector (it minimises every separable convex sum, and the
  KKT solution ``clip`` is the same for every strictly convex function).

Σ x^q is Schur-convex for q > 1 and Schur-concave for q < 1 (so is the Shannon entropy),
so evaluating both vectors brackets Σ λ^q, hence the Vendi score, for every order.

References
----------
.. [1] A. W. Marshall, I. Olkin and B. C. Arnold, *Inequalities: Theory of Majorization
   and Its Applications*, 2nd ed., Springer 2011, Ch. 3 (Schur-convex functions).
"""

from __future__ import annotations

import numpy as np


def greedy_vector(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The feasible vector with the largest partial sums (majorises all others)."""
    x = lo.copy()
    extra = 1.0 - float(lo.sum())
    room = hi - lo
    before = np.concatenate([[0.0], np.cumsum(room)[:-1]])
    x += np.clip(extra - before, 0.0, room)
    return x


def water_vector(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The feasible vector ``clip(level, lo, hi)`` summing to 1 (majorised by all others)."""
    a, b = 0.0, float(hi.max())
    for _ in range(200):  # bisection on the level: the sum is nondecreasing in it
        mid = 0.5 * (a + b)
        if np.clip(mid, lo, hi).sum() < 1.0:
            a = mid
        else:
            b = mid
        if b - a <= 1e-17 * max(b, 1e-300):
            break
    return np.clip(b, lo, hi)


def log_power_sum(x: np.ndarray, q: float) -> float:
    """log Σ x_i^q over x_i > 0 (q > 0), without underflow for large q."""
    x = x[x > 0]
    lx = q * np.log(x)
    top = float(lx.max())
    return top + float(np.log(np.exp(lx - top).sum()))


def entropy(x: np.ndarray) -> float:
    x = x[x > 0]
    return float(-(x * np.log(x)).sum())


def vendi_bracket(lo: np.ndarray, hi: np.ndarray, q: float, rank_floor: int) -> tuple[float, float]:
    """Certified (lower, upper) on the order-q Vendi score of any spectrum in the boxes.

    ``rank_floor`` is a proven lower bound on the rank (for q = 0).
    """
    n = lo.size
    if q == 0:
        return float(rank_floor), float(n)
    if np.isinf(q):  # λ_max ≥ 1/n always, so 1/λ_max ≤ n even without a lower bound
        return 1.0 / float(hi[0]), 1.0 / max(float(lo[0]), 1.0 / n)
    g, w = greedy_vector(lo, hi), water_vector(lo, hi)
    if q == 1:
        return float(np.exp(entropy(g))), float(np.exp(entropy(w)))
    # Vendi = exp(log F / (1 − q)); the more spread-out (water) vector has the larger score.
    return (
        float(np.exp(log_power_sum(g, q) / (1.0 - q))),
        float(np.exp(log_power_sum(w, q) / (1.0 - q))),
    )
