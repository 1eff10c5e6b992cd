"""The large-n solvers: Vendi of the Gaussian kernel (deflated Lanczos with a certified
bracket), magnitude (preconditioned CG with certified bounds) and Circles (threshold graphs
with certified brackets). Never imports the pipeline.

:data:`SOLVERS` is the one table of them (family -> :class:`Solver`: function, declared
options, distances, engines); :func:`run_solver` calls one, refusing undeclared options.
"""

from ._circles_large import CirclesBounds, circles_large
from ._magnitude_large import MagnitudeBounds, magnitude_large
from ._solvers import SOLVERS, Solver, open_solver, run_solver, solver
from ._vendi_large import VendiBounds, column_bytes_per_point, vendi_large

__all__ = [
    "SOLVERS",
    "CirclesBounds",
    "MagnitudeBounds",
    "Solver",
    "VendiBounds",
    "circles_large",
    "column_bytes_per_point",
    "magnitude_large",
    "open_solver",
    "run_solver",
    "solver",
    "vendi_large",
]
