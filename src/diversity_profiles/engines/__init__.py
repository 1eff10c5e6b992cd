"""Where the pairs are computed: distances and kernels, the log-distance histogram, the
streamed passes (in memory, as dask graphs, on a torch device), the pair operators and the
preconditioned solvers the large-n methods run on. Never imports the pipeline.

One protocol, :class:`Engine`, is implemented by :class:`NumpyEngine`, :class:`DaskEngine`
and :class:`TorchEngine`; :func:`engine_for` is the one place that chooses among them.
The other names here are what the layers above use; everything loads with numpy alone
(dask and torch are imported by the functions that need them).
"""

from ._blockwise import (
    DEFAULT_MEMORY,
    TILE,
    PairOperator,
    distinct_rows,
    dual_eigenvalues,
    one_thread,
)
from ._callable_pairs import callable_matrix, check_callable_memory, evaluated_on
from ._dask_engine import Shipped, gather_set, is_dask
from ._dask_operator import on_workers
from ._distances import (
    DISTANCES,
    distance_block,
    distance_matrix,
    gaussian_kernel,
    iter_distance_blocks,
    median_bandwidth,
    pairwise_distances,
    prepare_embeddings,
    refine_close_pairs,
    row_norms,
)
from ._engine import BlockKernel, DaskEngine, Engine, NumpyEngine, TorchEngine, engine_for
from ._held_distances import HeldDistances, held_bytes
from ._histogram import BINS_PER_OCTAVE, OCTAVES, LogDistanceHistogram
from ._operators import pair_operator, solver_input
from ._pcg import Breakdown, Preconditioner, build_preconditioner, pcg, pivoted_cholesky
from ._pcg import identity as identity_preconditioner
from ._streaming import ThresholdCounts
from ._torch_engine import (
    DeviceSet,
    is_torch,
    namespace,
    pair_candidates,
    resolve_device,
    tensor_device,
    tensor_to_numpy,
)

__all__ = [
    "BINS_PER_OCTAVE",
    "DEFAULT_MEMORY",
    "DISTANCES",
    "OCTAVES",
    "TILE",
    "BlockKernel",
    "Breakdown",
    "DaskEngine",
    "DeviceSet",
    "Engine",
    "HeldDistances",
    "LogDistanceHistogram",
    "NumpyEngine",
    "PairOperator",
    "Preconditioner",
    "Shipped",
    "ThresholdCounts",
    "TorchEngine",
    "build_preconditioner",
    "callable_matrix",
    "check_callable_memory",
    "distance_block",
    "distance_matrix",
    "distinct_rows",
    "dual_eigenvalues",
    "engine_for",
    "evaluated_on",
    "gather_set",
    "gaussian_kernel",
    "held_bytes",
    "identity_preconditioner",
    "is_dask",
    "is_torch",
    "iter_distance_blocks",
    "median_bandwidth",
    "namespace",
    "on_workers",
    "one_thread",
    "pair_candidates",
    "pair_operator",
    "pairwise_distances",
    "pcg",
    "pivoted_cholesky",
    "prepare_embeddings",
    "refine_close_pairs",
    "resolve_device",
    "row_norms",
    "solver_input",
    "tensor_device",
    "tensor_to_numpy",
]
