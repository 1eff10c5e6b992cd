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

from ._validation import _human_bytes, available_memory_bytes

METHODS = ("auto", "exact", "large")

#: Largest set size (n) for which method="auto" keeps a family's exact method. Measured at
#: d = 768 on 2 shared cores (benchmarks/large_n.py): exact magnitude took 9 s at n = 1000 and
#: grows as n³ (a Cholesky per scale); exact Gaussian Vendi 2.4 s at 2000 and 161 s at 10,000
#: (eigenvalues of n × n); the Circles sweep is O(n²) per threshold in Python loops. Energy and
#: average distance stream in either case: above the threshold they also carry certified
#: bounds and run the faster blocked pass.
AUTO_EXACT_MAX_N = {
    "vendi": 4000,
    "magnitude": 2000,
    "circles": 4000,
    "energy": 4000,
    "average_distance": 4000,
    "richness": 10**12,  # O(n log n) on embeddings: always exact
}
#: n × n float64 matrices each exact family holds at its peak besides the distance matrix
#: (kernel and eigen workspace; Z_t in float64 and float32; adjacency, linkage and DSATUR).
_EXACT_COPIES = {"vendi": 2, "magnitude": 2.5, "circles": 2, "energy": 1, "average_distance": 1}
#: Share of the available memory a plan may use (the rest is headroom for the interpreter).
_HEADROOM = 0.8
#: Families whose exact method needs no n × n matrix at all (with embeddings).
_NO_MATRIX = {"richness"}
#: Exact families that stream the pairs when no distance matrix is formed anyway.
_STREAMED = ("energy", "average_distance")


@dataclass
class Route:
    family: str
    method: str  # "exact" or "large"
    nbytes: float  # peak bytes of this family's computation for the largest set
    why: str


def solver_memory(available: float) -> float:
    """Bytes a large-n solver may hold beside the engine's own buffers (e.g. Z_t, float32)."""
    return max(_HEADROOM * available - 2 * 1024**3, 0.5 * 1024**3)


def _large_bytes(family: str, n: int, d: int, n_grid: int, available: float) -> float:
    """Peak bytes of the large-n method: block buffers, per-point arrays, one copy of X, and
    what the iterative module holds with ``memory_limit = solver_memory(available)``."""
    from .large import large_module

    buffers = 6 * 2048 * 2048 * 8
    per_point = n * (n_grid + 2) * 8  # e.g. the degree of every point at every threshold
    base = buffers + n * d * 8
    if family not in ("magnitude", "vendi", "circles") or large_module(family) is None:
        # Bounds from the streamed passes only.
        return base + (0.0 if family == "magnitude" else per_point)
    limit = solver_memory(available)
    if family in ("magnitude", "vendi"):
        # magnitude_large holds Z_t and vendi_large K in float32 when it fits, else they
        # recompute tiles at every product; both keep a few n × 256 float64 blocks
        # (preconditioner, Nyström/Ritz basis of rank 200).
        held = 4.0 * n * n
        return base + per_point + 3 * n * 256 * 8 + (held if held <= limit else 0.0)
    # circles_large keeps the pairs within the largest threshold, 16 bytes each, up to the
    # limit (thresholds above what fits keep a valid but looser bracket).
    return base + per_point + min(16.0 * n * (n - 1) / 2, limit)


def _exact_bytes(family: str, n: int, n_sets: int, dual: bool) -> float:
    if family in _NO_MATRIX or (family == "vendi" and dual):
        return 0.0
    # Every set's distance matrix stays cached for the whole condition, plus the family's
    # own working copies for the set in hand.
    return 8.0 * n * n * (n_sets + _EXACT_COPIES.get(family, 1))


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
) -> dict[str, Route]:
    """Route every family to its exact or large-n method, or refuse with the plan.

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
    for fam in families:
        exact = _exact_bytes(fam, n, n_sets, dual_vendi)
        if precomputed or fam in _NO_MATRIX or (fam == "vendi" and dual_vendi):
            # Nothing large-n to do: the matrix is the input, or no n × n work is needed.
            why = "the distance matrix is given" if precomputed else "no n × n matrix needed"
            routes[fam] = Route(fam, "exact", exact, why)
            continue
        large = _large_bytes(fam, n, dim, n_grid, have)
        if method == "exact":
            routes[fam] = Route(fam, "exact", exact, "method='exact'")
        elif method == "large":
            routes[fam] = Route(fam, "large", large, "method='large'")
        elif n <= AUTO_EXACT_MAX_N[fam] and exact <= budget:
            routes[fam] = Route(fam, "exact", exact, f"n = {n} <= {AUTO_EXACT_MAX_N[fam]}")
        else:
            why = (
                f"n = {n} > {AUTO_EXACT_MAX_N[fam]}"
                if n > AUTO_EXACT_MAX_N[fam]
                else (f"exact needs {_human_bytes(exact)}")
            )
            routes[fam] = Route(fam, "large", large, why)
    # Exact energy and average distance stream the pairs unless another exact family has
    # formed the distance matrices, which they then reuse (plus the upper-triangle indices).
    matrices = any(r.method == "exact" and r.nbytes > 0 for f, r in routes.items()
                   if f not in _STREAMED)  # fmt: skip
    for f in _STREAMED:
        if f in routes and routes[f].method == "exact" and not precomputed:
            routes[f].nbytes = 8.0 * n * n * (n_sets + 1.5) if matrices else 6 * 2048 * 2048 * 8
    # Families run one after another and free their buffers: the peak is the largest one.
    need = max((r.nbytes for r in routes.values()), default=0.0)
    if need > budget:
        raise MemoryError(refusal(routes, have, need))
    return routes


def describe(routes: dict[str, Route]) -> str:
    """The plan as text: one line per family."""
    return "\n".join(
        f"  {r.family}: {r.method} ({r.why}), peak {_human_bytes(r.nbytes)}"
        for r in routes.values()
    )


def refusal(routes: dict[str, Route], have: float, need: float) -> str:
    """Why a plan does not fit, the plan, and what to change."""
    too_big = [r.family for r in routes.values() if r.nbytes > _HEADROOM * have]
    exact = [f for f in too_big if routes[f].method == "exact"]
    fixes = []
    if exact:
        fixes.append(f"use method='auto' or 'large' for {', '.join(map(repr, exact))}")
    fixes.append(f"leave out {', '.join(map(repr, too_big))} (families=...)")
    fixes.append("subsample the sets (smaller n)")
    return (
        f"profiles: the plan needs {_human_bytes(need)} but only {_human_bytes(have)} is "
        f"available ({int(_HEADROOM * 100)}% of it may be used). Plan per family:\n"
        + describe(routes)
        + "\nTo make it fit: "
        + "; or ".join(fixes)
        + "."
    )
