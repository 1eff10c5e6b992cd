"""Which method each family uses, and whether it fits in memory — decided before any work.

``method="auto"`` picks, per family, the exact method while the largest set is small
enough for it to finish in seconds to a minute (thresholds measured on 2 shared cores,
see ``AUTO_EXACT_MAX_N``) and its n × n matrices fit; above that the large-n method
(streamed passes, iterative solvers, certified bounds). ``method="exact"`` forces the
exact methods and ``method="large"`` the large-n ones. When the chosen methods do not
fit in the memory available, :func:`plan` refuses up front with the plan, naming what
to change.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import available_memory_bytes, human_bytes
from ..engines import LogDistanceHistogram
from ..large import SOLVERS
from ._registry import FAMILIES

METHODS = ("auto", "exact", "large")

# What each family needs (the largest n that method="auto" keeps exact, its n × n working
# copies, whether it needs a matrix at all) is in its registry entry (families.py).
#: Share of the available memory a plan may use (the rest is headroom for the interpreter).
_HEADROOM = 0.8


@dataclass
class Route:
    family: str
    method: str  # "exact" or "large"
    nbytes: float  # peak bytes of this family's computation for the largest set
    why: str
    #: Whether a large-n method could take over (False: the input is a matrix, no n × n work
    #: is needed, or the family has none), so that a refusal only suggests what exists.
    has_large: bool = True


#: Bytes every set holds besides its matrices whatever its size: the prepared set, its cache
#: and its rows of the results (measured: about 1.7 KB per set of 2 samples in d = 8).
PER_SET_BYTES = 4096.0
#: Bytes per occupied bin of a set's log-distance histogram (index, count and two moments);
#: a set of n samples occupies at most n(n - 1) / 2 bins (and never more than SIZE).
HISTOGRAM_BIN_BYTES = 32.0


def per_set_bytes(sizes: list[int]) -> float:
    """Bytes the per-set structures of sets of these sizes hold all together: they stay
    for the whole condition (one histogram per set, kept for the grids and the values).

    >>> per_set_bytes([2] * 10_000) / 1e6  # 10,000 sets of 2 samples: 41 MB, not 31 GB
    41.28
    """
    n = np.asarray(sizes, dtype=np.float64)
    bins = np.minimum(n * (n - 1) / 2, LogDistanceHistogram.SIZE)
    return float(np.sum(PER_SET_BYTES + HISTOGRAM_BIN_BYTES * bins))


def solver_memory(available: float) -> float:
    """Bytes a large-n solver may hold beside the engine's own buffers (e.g. Z_t, float32)."""
    return max(_HEADROOM * available - 2 * 1024**3, 0.5 * 1024**3)


def _large_bytes(
    family: str, n: int, d: int, n_grid: int, available: float, distance: str | None = None
) -> float:
    """Peak bytes of the large-n method: block buffers, per-point arrays, X in float64 and
    float32, and what the iterative module holds with ``memory_limit =
    solver_memory(available)``."""
    buffers = 6 * 2048 * 2048 * 8
    per_point = n * (n_grid + 2) * 8  # e.g. the degree of every point at every threshold
    base = buffers + n * d * 12
    cost = FAMILIES[family].cost
    held_per_pair = cost.large_solver_bytes
    if not held_per_pair or family not in SOLVERS or not _tight(family, distance):
        return base + per_point  # bounds from the streamed passes only
    # What the iterative module holds when it fits (Z_t or K in float32, Circles' pairs),
    # else its memory limit or nothing (it recomputes tiles); plus its column blocks
    # (Krylov bases, preconditioner): the family's bytes per point beside that mode.
    limit = solver_memory(available)
    tiers = held_per_pair if isinstance(held_per_pair, tuple) else (held_per_pair,)
    columns = cost.large_solver_bytes_per_point
    beside = columns if isinstance(columns, tuple) else (columns,) * (len(tiers) + 1)
    mode = next((k for k, b in enumerate(tiers) if b * n * n <= limit), len(tiers))
    if mode < len(tiers):
        held = tiers[mode] * n * n
    else:
        held = limit if cost.large_solver_fills_limit else 0.0
    return base + per_point + n * beside[mode] + held


def _no_matrix(family: str, dual: bool) -> bool:
    """The exact method needs no n × n matrix (with embeddings)."""
    fam = FAMILIES[family]
    return fam.cost.exact_copies is None or (fam.cost.dual_kernel and dual)


#: Where a family's large-n method would only bound the distance loosely, method="auto" keeps
#: it exact up to this multiple of its ``auto_exact_max_n`` (the exact methods grow as n³:
#: about 15 times the measured limit's time there); beyond it, the loose certified bounds.
LOOSE_EXACT_FACTOR = 2.5


def _tight(family: str, distance: str | None) -> bool:
    """Whether the family's large-n method is tight on ``distance`` (None: unknown, yes):
    its solver applies there (:data:`..large.SOLVERS`), or it has none and its streamed
    pass is exact or tightly bounded on every distance. Elsewhere only the streamed passes'
    wide bounds exist, so method="auto" keeps the exact method while it fits in memory."""
    spec = SOLVERS.get(family)
    return distance is None or spec is None or distance in spec.distances


def _exact_bytes(family: str, n: int, n_sets: int, dual: bool) -> float:
    if _no_matrix(family, dual):
        return 0.0
    # Every set's distance matrix stays cached for the whole condition, plus the family's
    # own working copies for the set in hand.
    return 8.0 * n * n * (n_sets + (FAMILIES[family].cost.exact_copies or 0.0))


def plan(
    families: list[str],
    sizes: list[int],
    dim: int,
    *,
    method: str = "auto",
    dual_vendi: bool = False,
    precomputed: bool = False,
    n_grid: int = 100,
    available: float | None = None,
    distance: str | None = None,
    distinct_sizes: list[int] | None = None,
) -> dict[str, Route]:
    """Route every family to its exact or large-n method, or refuse with the plan.

    ``distinct_sizes``: the rows each set's passes work on for the families that collapse
    exact duplicates (``Cost.collapses_duplicates``); those families are sized by them.

    Examples
    --------
    >>> routes = plan(["energy", "magnitude"], [100, 50_000], 768, available=16e9)
    >>> [(r.family, r.method) for r in routes.values()]
    [('energy', 'large'), ('magnitude', 'large')]
    """
    n, n_sets = max(sizes), len(sizes)
    have = available_memory_bytes() if available is None else available
    budget = _HEADROOM * have
    routes: dict[str, Route] = {}
    collapsed = set()  # families sized by fewer (distinct) rows: they form no n × n matrix
    for fam in families:
        n = max(sizes)
        if distinct_sizes is not None and FAMILIES[fam].cost.collapses_duplicates:
            n = max(distinct_sizes)
            if n < max(sizes):
                collapsed.add(fam)
        exact = _exact_bytes(fam, n, n_sets, dual_vendi)
        max_n = FAMILIES[fam].cost.auto_exact_max_n
        if precomputed or _no_matrix(fam, dual_vendi) or max_n is None:
            # Nothing large-n to do: the matrix is the input, no n × n work is needed, or
            # the family has no large-n method (the memory check below still applies).
            why = (
                "the distance matrix is given"
                if precomputed
                else "no n × n matrix needed"
                if _no_matrix(fam, dual_vendi)
                else "no large-n method"
            )
            routes[fam] = Route(fam, "exact", exact, why, has_large=False)
            continue
        large = _large_bytes(fam, n, dim, n_grid, have, distance)
        if method == "exact":
            routes[fam] = Route(fam, "exact", exact, "method='exact'")
        elif method == "large":
            routes[fam] = Route(fam, "large", large, "method='large'")
        elif n <= max_n and exact <= budget:
            routes[fam] = Route(fam, "exact", exact, f"n = {n} <= {max_n}")
        elif exact <= budget and not _tight(fam, distance) and n <= LOOSE_EXACT_FACTOR * max_n:
            why = f"its large-n method only bounds {distance} distances loosely"
            routes[fam] = Route(fam, "exact", exact, why)
        else:
            why = f"n = {n} > {max_n}" if n > max_n else (f"exact needs {human_bytes(exact)}")
            routes[fam] = Route(fam, "large", large, why)
    # Exact energy and average distance stream the pairs unless another exact family has
    # formed the distance matrices, which they then reuse (plus the upper-triangle indices).
    n = max(sizes)
    streamed = [f for f in routes if FAMILIES[f].cost.streams_exact]
    matrices = any(r.method == "exact" and r.nbytes > 0 for f, r in routes.items()
                   if f not in streamed and f not in collapsed)  # fmt: skip
    for f in streamed:
        if routes[f].method == "exact" and not precomputed and f not in collapsed:
            block = min(n, 2048)  # the streamed blocks are at most 2048 × 2048
            routes[f].nbytes = 8.0 * n * n * (n_sets + 1.5) if matrices else 6 * block**2 * 8
    # Families run one after another and free their buffers: the peak is the largest one,
    # on top of what every set keeps for the whole condition.
    kept = per_set_bytes(sizes)
    need = max((r.nbytes for r in routes.values()), default=0.0) + kept
    if need > budget:
        raise MemoryError(refusal(routes, have, need, kept, n_sets))
    return routes


def describe(routes: dict[str, Route]) -> str:
    """The plan as text: one line per family."""
    return "\n".join(
        f"  {r.family}: {r.method} ({r.why}), peak {human_bytes(r.nbytes)}" for r in routes.values()
    )


def refusal(
    routes: dict[str, Route], have: float, need: float, kept: float = 0.0, n_sets: int = 1
) -> str:
    """Why a plan does not fit, the plan, and what to change."""
    # The families that are the cost (not those that only add to what the sets keep).
    too_big = [
        r.family for r in routes.values() if r.nbytes + kept > _HEADROOM * have and r.nbytes > kept
    ]
    exact = [f for f in too_big if routes[f].method == "exact" and routes[f].has_large]
    fixes = []
    if exact:
        fixes.append(f"use method='auto' or 'large' for {', '.join(map(repr, exact))}")
    if kept > 0.5 * need:  # the sets themselves are the cost: fewer of them per call
        fixes.append("profile fewer sets per call (combine the trees with dp.merge)")
    if too_big:
        fixes.append(f"leave out {', '.join(map(repr, too_big))} (families=...)")
    fixes.append("subsample the sets (smaller n)")
    return (
        f"profiles: the plan needs {human_bytes(need)} but only {human_bytes(have)} is "
        f"available ({int(_HEADROOM * 100)}% of it may be used). Plan per family:\n"
        + describe(routes)
        + f"\n  kept per set for the whole condition ({n_sets} sets): {human_bytes(kept)}"
        + "\nTo make it fit: "
        + "; or ".join(fixes)
        + "."
    )
