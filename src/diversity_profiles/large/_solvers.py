"""The large-n solvers, declared in one static table (as scikit-learn's ``PAIRWISE_*``
dicts map names to functions): which function solves each family, the options it takes,
the distances it works on and the engines its products run on.

The table is the only place that knows the solvers. :func:`run_solver` refuses an option
its solver does not declare, naming the accepted ones (as xarray's ``detect_parameters``
refuses a backend option it cannot pass), and the solver modules are imported outright:
an import error in one of them is a bug to see, not a missing solver to work around.
``tests/test_large_solvers.py`` checks every record against its function's signature, so
the table cannot drift from the code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..core import BOUNDS, ESTIMATE
from . import _circles_large, _magnitude_large, _vendi_large

if TYPE_CHECKING:
    from ..engines import Engine

FUNC = "run_solver"
#: Where a solver can run its products: every solver runs in memory.
_EVERYWHERE = frozenset({"numpy", "dask", "torch"})


def _options(names: str) -> frozenset[str]:
    return frozenset(names.split())


#: vendi_large's error bar, measured against eigvalsh (benchmarks/large_n_methods.py).
COVERAGE_NOTE = (
    "measured at n = 2000 over 20 datasets: the error bar covered the exact value in 80 of "
    "80 cases at q = 0.25-1.5, errors at most 0.14% for q <= 1 and 4.3e-8 for q >= 2"
)

#: What a run of a solver was, for the record: how its value and each bound were obtained.
Provenance = tuple[str, str, "tuple[str, str] | None"]  # (method, note, (lower, upper) methods)


def _vendi_provenance(method: str, kinds: list[str]) -> Provenance:
    # The bracket is certified at every order; the estimate's error bar (3 probe standard
    # errors plus the Gauss/Gauss-Radau gaps) is claimed because it was measured to hold:
    # COVERAGE_NOTE (benchmarks/large_n_methods.py, vendi_coverage; the 4 misses are one
    # dataset's probe draw, 3.2 standard errors off at every order; the earlier,
    # pinching-biased estimator covered 52.5%).
    if method == ESTIMATE:
        note = (
            "vendi_large: deflated stochastic Lanczos quadrature, value ± vendi_error "
            f"(an estimate; {COVERAGE_NOTE}); vendi_lower/vendi_upper: certified bracket "
            "(Ritz values, interlacing and Weyl)"
        )
    else:
        note = (
            "vendi_large: certified bracket (vendi_lower/vendi_upper: Ritz values, "
            "interlacing and Weyl); "
            + ("the time budget was spent before the Lanczos estimate: the value is the "
               "bracket's midpoint, vendi_error its half-width"
               if "bounds" in kinds else "exact or certified to 1e-6 at every order")
        )  # fmt: skip
    return method, note, (BOUNDS, BOUNDS)


def _magnitude_provenance(method: str, kinds: list[str]) -> Provenance:
    # The lower bound 2·1ᵀw − wᵀZw is certified at every scale; the upper bound only where
    # Gershgorin proves a smallest eigenvalue, else it is estimated.
    note = (
        "magnitude_large: preconditioned CG; magnitude_lower certified (variational form) at "
        "every scale, magnitude_upper certified where Gershgorin bounds the smallest "
        "eigenvalue and an estimate elsewhere"
        + ("" if method == BOUNDS else " (method: 'estimate ± error')")
    )
    return method, note, (BOUNDS, method)


def _circles_provenance(method: str, kinds: list[str]) -> Provenance:
    extra = "" if method == BOUNDS else " (upper bound estimated where it could not be certified)"
    note = (
        "circles_large: greedy independent sets (their samples the witnesses) below, clique "
        "covers of the threshold graphs above; under a time budget, and where those pairs did "
        "not fit the memory, also a farthest-first traversal's witnesses and a bisecting tree's "
        "clique cover (triangle inequality), the better bound kept at each threshold"
    )
    return method, note + extra, None


@dataclass(frozen=True)
class Solver:
    """One family's large-n solver: ``function(X, grid, **options)``.

    Attributes
    ----------
    family : str
        The family it evaluates (``"vendi"`` ...).
    function : callable
        ``<family>_large(X, grid, *, ...)``, returning its bounds object.
    options : frozenset of str
        The keyword options it takes (its private ``_``-prefixed test hooks are not options).
    distances : tuple of str
        The distances it evaluates the family on.
    engines : frozenset of str
        The engines (:class:`.engines.Engine` names) its products can run on; on any other
        engine's sets it runs in memory, on the host.
    provenance : callable
        Given the run's method (certified bounds, or an estimate where some grid point was
        estimated) and its kind per grid point, the note and the bounds' methods recorded.
    kernel : str or None
        The kernel it is written for (``"gaussian"`` for Vendi), None for a family of
        distances alone.
    """

    family: str
    function: Callable[..., Any]
    options: frozenset[str]
    distances: tuple[str, ...]
    engines: frozenset[str]
    #: ``(method, kinds per grid point) -> (method, note, bound methods)``: what a run was.
    provenance: Callable[[str, list[str]], Provenance]
    kernel: str | None = None
    #: A class taking the function's arguments but the grid, whose ``solve(grid)`` can be
    #: called again at more points without redoing the shared work (see
    #: :func:`open_solver`); None: each grid is a new call. ``session_options``: what it
    #: takes beyond the function's options.
    session: Callable[..., Any] | None = None
    session_options: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        """The solver's function name, e.g. ``"vendi_large"``."""
        return self.function.__name__

    def applies(self, distance: str, kernel: str | None = None) -> bool:
        """Whether the solver evaluates the family for ``distance`` (and ``kernel``).

        Examples
        --------
        >>> SOLVERS["vendi"].applies("euclidean", "gaussian")
        True
        >>> SOLVERS["vendi"].applies("cosine", "gaussian"), SOLVERS["circles"].applies("tanimoto")
        (False, False)
        """
        return distance in self.distances and (self.kernel is None or kernel == self.kernel)

    def engine_options(self, engine: Engine, prepared: Any) -> dict[str, Any]:
        """The options that run the products on ``engine`` (its :meth:`~.Engine.solver_options`
        for the set it ``prepared``), or ``{}`` where the solver cannot run them there.

        Examples
        --------
        >>> from diversity_profiles.engines import engine_for
        >>> SOLVERS["circles"].engine_options(engine_for(device="cpu"), None)
        {'device': 'cpu'}
        >>> SOLVERS["circles"].engine_options(engine_for(distributed=True), None)  # in memory
        {}
        """
        return engine.solver_options(prepared) if engine.name in self.engines else {}


#: family -> its solver. Read-only: a solver is added here, next to its module, or nowhere.
SOLVERS: Mapping[str, Solver] = MappingProxyType(
    {
        "vendi": Solver(
            "vendi",
            _vendi_large.vendi_large,
            _options(
                "bandwidth rank probes steps ritz_steps power_iterations seed memory_limit "
                "weights precision precision_n device shipped time_budget progress"
            ),
            _vendi_large.DISTANCES,
            _EVERYWHERE,
            _vendi_provenance,
            kernel="gaussian",
            session=_vendi_large.VendiSolver,
        ),
        "magnitude": Solver(
            "magnitude",
            _magnitude_large.magnitude_large,
            _options(
                "distance rtol rank block regularization memory_limit max_iter device "
                "time_budget shipped progress"
            ),
            _magnitude_large.DISTANCES,
            _EVERYWHERE,
            _magnitude_provenance,
            session=_magnitude_large.MagnitudeSolver,
            session_options=frozenset({"keep"}),
        ),
        "circles": Solver(
            "circles",
            _circles_large.circles_large,
            _options(
                "distance exact_max_component time_limit seed memory_limit device time_budget "
                "progress stop"
            ),
            _circles_large.DISTANCES,
            # Its tiles run on a torch device; it takes no dask set (its threshold graphs are
            # built in memory from the candidate pairs).
            frozenset({"numpy", "torch"}),
            _circles_provenance,
        ),
    }
)


def solver(family: str) -> Solver:
    """The large-n solver of ``family``; an unknown family is an error listing the known.

    Examples
    --------
    >>> solver("magnitude").name
    'magnitude_large'
    """
    try:
        return SOLVERS[family]
    except (KeyError, TypeError):  # TypeError: an unhashable family
        known = ", ".join(repr(f) for f in SOLVERS)
        raise ValueError(
            f"The 'family' argument of {FUNC} must be one of {known} (the families with a "
            f"large-n solver). Got {family!r} instead."
        ) from None


def _checked(s: Solver, call: str, options: dict, accepted: frozenset[str]) -> dict:
    """The options given (None: the solver's default), or an error naming the accepted."""
    unknown = sorted(set(options) - accepted)
    if unknown:
        what = "option" if len(unknown) == 1 else "options"
        them = "it" if len(unknown) == 1 else "them"
        raise ValueError(
            f"{call}: {s.name} takes no {what} "
            f"{', '.join(repr(k) for k in unknown)}. Its options are: "
            f"{', '.join(sorted(accepted))}. Leave {them} out, or pass one of those."
        )
    return {k: v for k, v in options.items() if v is not None}


def open_solver(family: str, X: Any, /, **options: Any) -> Any:
    """The solver of ``family`` prepared on ``X``, to ``solve(grid)`` again and again.

    The session keeps what does not depend on the grid (Vendi's spectral work, magnitude's
    distances, solutions and preconditioner), so an adaptive grid's later rounds cost only
    their new points. Options as :func:`run_solver` (checked alike), plus the session's own.

    Raises
    ------
    ValueError
        For an unknown family, a family whose solver has no session, or an unknown option.

    Examples
    --------
    >>> session = open_solver("vendi", [[0.0], [50.0], [100.0]], bandwidth=1.0)
    >>> [round(float(v), 6) for v in session.solve([1.0]).value]
    [3.0]
    >>> open_solver("circles", [[0.0]])
    Traceback (most recent call last):
    ...
    ValueError: open_solver('circles', X): circles_large has no session (each grid is a new \
call); use run_solver.
    """
    s = solver(family)
    if s.session is None:
        raise ValueError(
            f"open_solver({family!r}, X): {s.name} has no session (each grid is a new call); "
            f"use run_solver."
        )
    call = ", ".join(["X", *(f"{k}=..." for k in options)])
    given = _checked(s, f"open_solver({family!r}, {call})", options, s.options | s.session_options)
    return s.session(X, **given)


def run_solver(family: str, X: Any, grid: Any, /, **options: Any) -> Any:
    """``<family>_large(X, grid, **options)``, its options checked against the table.

    Parameters
    ----------
    family : str
        A key of :data:`SOLVERS`.
    X : array_like
        The embeddings (samples × features), as the solver takes them.
    grid : array_like
        The family's parameter values (Vendi's orders q, magnitude's scales t, Circles'
        thresholds τ).
    **options
        Options the solver declares (``SOLVERS[family].options``). One given as None is
        left to the solver's default: the pipeline's unset settings are None.

    Returns
    -------
    The solver's bounds object (``VendiBounds``, ``MagnitudeBounds``, ``CirclesBounds``).

    Raises
    ------
    ValueError
        For an unknown family, or an option the solver does not declare (nothing is
        dropped in silence: a misspelt option would otherwise leave a default in place).

    Examples
    --------
    >>> r = run_solver("circles", [[0.0], [1.0], [2.0], [3.0]], [0.5, 1.0, 2.0, 3.0])
    >>> r.lower.tolist()
    [4, 2, 2, 1]
    >>> run_solver("circles", [[0.0]], [1.0], rtol=1e-6)
    Traceback (most recent call last):
    ...
    ValueError: run_solver('circles', X, grid, rtol=...): circles_large takes no option 'rtol'. \
Its options are: device, distance, exact_max_component, memory_limit, progress, seed, \
stop, time_budget, time_limit. Leave it out, or pass one of those.
    """
    s = solver(family)
    call = ", ".join(["X", "grid", *(f"{k}=..." for k in options)])
    given = _checked(s, f"{FUNC}({family!r}, {call})", options, s.options)
    return s.function(X, grid, **given)
