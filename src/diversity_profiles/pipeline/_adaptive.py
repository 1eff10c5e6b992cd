"""Adaptive grids: a coarse pass, then points where the curves need them. The rule, in one place.

Every family with a parameter is first evaluated on a coarse grid (COARSE_POINTS of its
default domain, or of the user's ``(low, high)`` range), for every set of the condition.
Then, round by round, points are added, the same ones for every set so the curves stay
comparable point by point:

- **crossings**: where two sets' order changes between neighbouring points, the bracket is
  narrowed until it is at most CROSSING_TOL wide on the axis coordinate ``u`` (log θ on a
  log axis; θ over the width of the domain on a linear one). Smooth curves get the
  false-position estimate of the root, a point CROSSING_TOL/2 either side of it and the
  bracket's middle (so the bracket at least halves); step functions (Circles) get the middle
  only (bisection of a threshold). The straight line the verdict draws between the two
  points of a bracket this narrow is off by far less than 1e-4 of θ.
- **touching bands**: where two sets' bands (certified bounds, or value ± error bar, as the
  large-n methods give them while the grid is refined) go from apart to overlapping between
  neighbouring points, the interval's middle is added until it is at most TOUCH_TOL wide:
  that is where a certified "above" ends. Sampling bands come after the grid is fixed
  (they are computed on it), so they do not move points.
- **bends** (smooth families with a relative margin): where the linear interpolation between
  two points may be off by more than BEND_SHARE of the family's margin (the error bound
  h²/8 · |f''| with f'' from the divided differences of the neighbours), the middle is added.

No grid grows beyond MAX_POINTS (crossings come first), and at most MAX_ROUNDS rounds run.
What happened is written into the coordinate's ``domain`` attribute, e.g. ``adaptive: 25
coarse + 9 bend + 14 crossing points, crossing tolerance 1e-05 on log t``.

Families on their large-n method are refined the same way from one solver session per
set (``Family.large_evaluator``: Vendi's spectral work, or magnitude's distances, warm
starts and preconditioner, kept across the rounds): bends up to LARGE_POINTS points, the
fixed grid they had before, crossings up to MAX_POINTS like every family. Not refined: a grid
the user gave point by point (honoured exactly), an integer ``n_points`` (a fixed grid of
that many points, as before adaptive grids), large-n families without a session (Circles:
each round would redo its pass over the pairs) and every large-n family under a time
budget; they keep a fixed grid of LARGE_POINTS points, which the attribute says.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from itertools import combinations

import numpy as np

from ..core import STRENGTH
from ._condition import Condition, PreparedSet
from ._layout import bracket_of
from ._plan import Plan
from ._registry import Family, Result

#: Points of the coarse pass per family (the default domain's rule at this size).
COARSE_POINTS = 25
#: Most points of an adaptive grid: the fixed default before adaptive grids, so no default
#: call evaluates more points than it did.
MAX_POINTS = 100
#: Width of a bracketed crossing on the axis coordinate (log θ, or θ / domain width).
CROSSING_TOL = 1e-5
#: Width on the axis coordinate down to which an interval where two sets' bands go from
#: apart to overlapping is halved (looser than crossings: it locates a verdict's edge).
TOUCH_TOL = 1e-3
#: Share of the family's margin that linear interpolation between two points may be off by.
BEND_SHARE = 0.5
#: Rounds of refinement at most (each evaluates every set once at the round's new points).
MAX_ROUNDS = 16
#: Fixed grid of a family on its large-n method when n_points is "auto".
LARGE_POINTS = 50
#: Relative difference under which two values count as equal (no order to change).
_TIE_RTOL = 1e-12


def merge_attrs(dicts: Sequence[Mapping]) -> dict:
    """Attributes of one variable from several evaluations (sets, or rounds of one set):
    the weakest method (exact < certified bounds < estimate), else the smallest value (e.g.
    exact only if every evaluation was)."""
    attrs: dict = {}
    for extra in dicts:
        for key, val in extra.items():
            if key == "method":
                attrs[key] = max(attrs.get(key, val), val, key=STRENGTH.__getitem__)
            else:
                attrs[key] = min(attrs.get(key, val), val)
    return attrs


def axis_u(grid: np.ndarray, axis: str) -> np.ndarray:
    """The axis coordinate refinement works in: log θ (log axes, NaN at 0 and ∞) or θ over
    the finite domain's width (linear axes); NaN where no interval can be split."""
    grid = np.asarray(grid, dtype=np.float64)
    u = np.full(grid.shape, np.nan)
    finite = np.isfinite(grid)
    if axis == "log":
        ok = finite & (grid > 0)
        u[ok] = np.log(grid[ok])
    else:
        width = np.ptp(grid[finite]) if finite.sum() > 1 else 1.0
        u[finite] = grid[finite] / (width or 1.0)
    return u


def _from_u(u: np.ndarray, grid: np.ndarray, axis: str) -> np.ndarray:
    if axis == "log":
        return np.exp(u)
    finite = grid[np.isfinite(grid)]
    return u * (np.ptp(finite) or 1.0)


def tolerance_text(fam: Family) -> str:
    if fam.axis == "log":
        return f"crossing tolerance {CROSSING_TOL:g} on log {fam.parameter}"
    return f"crossing tolerance {CROSSING_TOL:g} of the {fam.parameter} range"


def _signs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        d = a - b
        scale = np.maximum(np.abs(a), np.abs(b))
        s = np.where(np.abs(d) <= _TIE_RTOL * scale, 0.0, np.sign(d))
    return np.where(np.isfinite(d) | np.isinf(d), s, np.nan)


def crossing_points(
    u: np.ndarray, values: np.ndarray, step: bool, tol: float = CROSSING_TOL
) -> list[float]:
    """New u where some pair of rows of ``values`` (set × point, in grid order) changes order
    between neighbours more than ``tol`` apart (see the module's rule). Ordered so that a cap
    cuts fairly: every bracket's middle first, then the points beside the estimated roots."""
    middles: list[float] = []
    beside: list[float] = []
    width = np.diff(u)
    open_ = np.isfinite(width) & (width > tol)
    for ia, ib in combinations(range(values.shape[0]), 2):
        s = _signs(values[ia], values[ib])
        for i in np.flatnonzero(_order_changes(s, step) & open_):
            lo, hi = u[i], u[i + 1]
            middles.append(0.5 * (lo + hi))
            if step:
                continue
            di = values[ia, i] - values[ib, i]
            dj = values[ia, i + 1] - values[ib, i + 1]
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                x = lo + di / (di - dj) * (hi - lo)
            for p in (x - tol / 2, x + tol / 2):
                beside.append(float(np.clip(p, lo + tol / 4, hi - tol / 4)))
    return middles + beside


def touching_points(
    u: np.ndarray, lower: np.ndarray, upper: np.ndarray, tol: float = TOUCH_TOL
) -> list[float]:
    """Middles of the intervals (wider than ``tol``) where some pair of sets' bands goes
    from apart to overlapping: ``lower``/``upper`` are set × point, in grid order.

    >>> u = np.log([1.0, 2.0, 4.0])
    >>> lo, hi = np.array([[5.0, 5.0, 5.0], [1.0, 4.0, 6.0]]), np.array([[6.0, 6, 6], [2, 4.5, 7]])
    >>> np.exp(touching_points(u, lo, hi)).round(4).tolist()  # apart, apart, overlapping
    [2.8284]
    """
    width = np.diff(u)
    open_ = np.isfinite(width) & (width > tol)
    out: list[float] = []
    for ia, ib in combinations(range(lower.shape[0]), 2):
        with np.errstate(invalid="ignore"):
            state = np.where(lower[ia] > upper[ib], 1.0, np.where(upper[ia] < lower[ib], -1.0, 0.0))
            known = np.isfinite(lower[ia] + upper[ia] + lower[ib] + upper[ib])
            # exact values (bands of width 0) only tie: crossings handle those
            known &= (upper[ia] - lower[ia]) + (upper[ib] - lower[ib]) > 0
        changes = (state[:-1] != state[1:]) & known[:-1] & known[1:] & open_
        out += [0.5 * (u[i] + u[i + 1]) for i in np.flatnonzero(changes)]
    return out


def _stored(result: Result, name: str) -> object | None:
    return result[name][0] if name in result else None


def _bands(fam: Family, results: Sequence[Result]) -> tuple[np.ndarray, np.ndarray] | None:
    """(lower, upper), set × point, of each set's band while the grid is refined (as
    :func:`._layout.brackets` reads them from a tree); None unless every set has one."""
    lows, highs = [], []
    for r in results:
        band = bracket_of(fam.name, partial(_stored, r))
        if band is None:
            return None
        lows.append(band[0])
        highs.append(band[1])
    return np.stack(lows), np.stack(highs)


def _order_changes(s: np.ndarray, step: bool) -> np.ndarray:
    """Intervals (i, i + 1) that bracket a change of the leading set, as the verdict reads it:
    between neighbours of opposite sign; for a step function also the two ends of a tied run
    between opposite signs (the verdict's crossing is that run's middle)."""
    with np.errstate(invalid="ignore"):
        out = s[:-1] * s[1:] < 0
    if step:
        nonzero = np.flatnonzero(np.isfinite(s) & (s != 0))
        i, j = nonzero[:-1], nonzero[1:]
        run = (s[i] != s[j]) & (j > i + 1)
        out[i[run]] = True  # the run's first point is bracketed from below ...
        out[j[run] - 1] = True  # ... and its last from above
    return out


def bend_intervals(u: np.ndarray, values: np.ndarray, share: float, tol: float) -> np.ndarray:
    """(error estimate relative to the allowed one, midpoint) of every interval where some set's
    linear interpolation may be off by more than ``share`` of the larger value (h²/8 · |f''|,
    f'' from divided differences at the interval's ends)."""
    ok = np.isfinite(u)
    idx = np.flatnonzero(ok)
    if idx.size < 3:
        return np.empty((0, 2))
    uu, y = u[idx], values[:, idx]
    h = np.diff(uu)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        slope = np.diff(y, axis=1) / h
        curv = np.zeros_like(y)
        curv[:, 1:-1] = 2 * np.abs(np.diff(slope, axis=1)) / (uu[2:] - uu[:-2])
        curv[:, 0], curv[:, -1] = curv[:, 1], curv[:, -2]  # the ends: their neighbour's
        err = h**2 / 8 * np.maximum(curv[:, :-1], curv[:, 1:])
        allowed = share * np.maximum(np.abs(y[:, :-1]), np.abs(y[:, 1:]))
        ratio = np.nanmax(np.where(np.isfinite(err / allowed), err / allowed, 0.0), axis=0)
    # neighbours in the grid (no 0 or ∞ between them), wide enough to split
    adjacent = np.diff(idx) == 1
    pick = (ratio > 1) & adjacent & (h > 2 * tol)
    mid = 0.5 * (uu[:-1] + uu[1:])
    return np.column_stack([ratio[pick], mid[pick]])


def _evaluator(
    fam: Family, cond: Condition, plan: Plan, item: PreparedSet
) -> Callable[[np.ndarray], Result]:
    """One set's values at any points: the family's own evaluator when it has one (e.g.
    Vendi's eigenvalues computed once), else its evaluate."""
    if fam.evaluator is not None and not plan.large(fam.name):
        return fam.evaluator(cond, plan, item)
    return lambda thetas: fam.evaluate(cond, plan, item, thetas)


def _concat(parts: list[tuple[np.ndarray, Result]]) -> tuple[np.ndarray, Result]:
    """Rounds of one set's results joined and sorted along the grid."""
    grid = np.concatenate([g for g, _ in parts])
    order = np.argsort(grid, kind="stable")
    out: Result = {}
    for var in parts[0][1]:
        values = np.concatenate([np.asarray(r[var][0]) for _, r in parts])[order]
        out[var] = (values, merge_attrs([r[var][1] for _, r in parts]))
    return grid[order], out


def refine(
    fam: Family,
    cond: Condition,
    plan: Plan,
    coarse: np.ndarray,
    how: str,
    evaluators: Sequence[Callable[[np.ndarray], Result]] | None = None,
) -> tuple[np.ndarray, list[Result], str]:
    """The adaptive grid of one family from its coarse grid: (grid, each set's results on
    it, the ``domain`` text). ``evaluators``: one per set (a large-n family's solver
    sessions); bends then stop at LARGE_POINTS points, the fixed grid it had before, and
    only crossings go on to MAX_POINTS."""
    large = evaluators is not None
    evals = (
        list(evaluators)
        if evaluators is not None
        else [_evaluator(fam, cond, plan, item) for item in cond.sets]
    )
    max_points = LARGE_POINTS if large else MAX_POINTS
    coarse = np.asarray(coarse, dtype=np.float64)
    parts: list[list[tuple[np.ndarray, Result]]] = [[(coarse, ev(coarse))] for ev in evals]
    grid = coarse
    results = [r for _, r in (p[0] for p in parts)]
    added = {"bend": 0, "crossing": 0, "touch": 0}
    capped = bends_capped = False
    margin = fam.rule.margin if fam.rule.margin_unit == "relative" else None
    for _ in range(MAX_ROUNDS):
        u = axis_u(grid, fam.axis)
        values = np.stack([np.asarray(r[fam.name][0], dtype=np.float64) for r in results])
        cross = crossing_points(u, values, fam.rule.step)
        bands = _bands(fam, results) if len(results) > 1 else None
        touch = [] if bands is None else touching_points(u, *bands)
        bends = (
            np.empty((0, 2))
            if fam.rule.step or margin is None
            else bend_intervals(u, values, BEND_SHARE * margin, CROSSING_TOL)
        )
        bends = bends[np.argsort(-bends[:, 0])] if bends.size else bends  # worst first
        room = MAX_POINTS - grid.size  # crossings: up to MAX_POINTS on either method
        new_u = _fresh(cross, u)
        kinds = ["crossing"] * len(new_u)
        new_u += [t for t in _fresh(touch, u) if t not in new_u]
        kinds += ["touch"] * (len(new_u) - len(kinds))
        if len(new_u) > room:
            capped, new_u, kinds = True, new_u[: max(room, 0)], kinds[: max(room, 0)]
        more = [m for m in _fresh(list(bends[:, 1]), u) if m not in new_u]
        take = max(max_points - grid.size - len(new_u), 0)
        bends_capped |= len(more) > take
        new_u += more[:take]
        kinds += ["bend"] * min(len(more), take)
        if not new_u:
            break
        new = _from_u(np.asarray(new_u), grid, fam.axis)
        keep = ~np.isin(new, grid)
        new, kinds = new[keep], [k for k, ok in zip(kinds, keep, strict=True) if ok]
        if new.size == 0:
            break
        for kind in kinds:
            added[kind] += 1
        order = np.argsort(new)
        new = new[order]
        for p, ev in zip(parts, evals, strict=True):
            p.append((new, ev(new)))
        joined = [_concat(p) for p in parts]
        grid = joined[0][0]
        results = [r for _, r in joined]
    text = (
        f"{how}; adaptive: {coarse.size} coarse + {added['bend']} bend + {added['crossing']} "
        f"crossing points, {tolerance_text(fam)}"
    )
    if added["touch"]:
        text += (
            f"; {added['touch']} points where two sets' bands go from apart to overlapping "
            f"(located to {TOUCH_TOL:g})"
        )
    if margin is not None and not fam.rule.step:
        text += (
            f", linear interpolation within {BEND_SHARE:g} x the {margin:g} relative margin "
            f"(estimated from divided differences)"
        )
    if large:
        text += (
            f"; on the large-n method from one solver session per set: bends up to "
            f"{max_points} points (its fixed grid before adaptive grids), crossings up to "
            f"{MAX_POINTS}"
        )
    if capped or (bends_capped and max_points == MAX_POINTS):
        text += f" (stopped at the cap of {MAX_POINTS} points)"
    elif bends_capped:
        text += f" (bends stopped at the cap of {max_points} points)"
    return grid, results, text


def _fresh(points: list[float], u: np.ndarray) -> list[float]:
    """``points`` without repeats or points already on the grid, in order."""
    have = set(u[np.isfinite(u)].tolist())
    out: list[float] = []
    for p in points:
        if np.isfinite(p) and p not in have:
            have.add(p)
            out.append(float(p))
    return out
