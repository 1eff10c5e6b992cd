"""The one engine protocol, its three engines, and the one place that chooses between them.

An engine runs the streamed passes over a set's pairs (:func:`.streaming.distance_pass`,
:func:`.streaming.threshold_pass`) and the d × d covariance of its rows (cosine Vendi's
dual form). Three implement :class:`Engine`, each a thin wrapper of its module's
functions, which stay callable on their own (the tests and benchmarks call them):

==========  ==========================  ============================================
engine      runs on                     the set, prepared once (:meth:`prepare`)
==========  ==========================  ============================================
``numpy``   this process, in memory     the embeddings themselves
``dask``    dask workers (a client) or  :class:`.dask_engine.Shipped`: sent to every
            dask's local scheduler      worker once, kept for every pass
``torch``   a torch device              :class:`.torch_engine.DeviceSet`: float64 and
                                        float32 copies on the device
==========  ==========================  ============================================

:func:`engine_for` is the only place that decides which engine a set gets (as xarray's
``plugins.get_backend`` is the only place that turns an engine name into a backend), so
nothing else branches on ``distributed`` or ``device``. The engines hold no state but
the device: preparing a set returns the object the caller keeps and hands back to every
pass, so state lives with the caller's set, not in a module global.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from . import _dask_engine, _streaming, _torch_engine
from ._histogram import LogDistanceHistogram
from ._streaming import ThresholdCounts

#: A kernel for :meth:`Engine.threshold_pass`: distances (a numpy block, or a tensor on the
#: torch engine, where it must use :func:`.torch_engine.namespace` for its math) to
#: similarities.
BlockKernel = Callable[[Any], Any]


@runtime_checkable
class Engine(Protocol):
    """What the pipeline asks of an engine; ``prepared`` is what :meth:`prepare` returned.

    The passes also take the bare embeddings in place of ``prepared`` (each then prepares
    them for itself), so an engine can be called on an array directly.
    """

    @property
    def name(self) -> str:
        """``"numpy"``, ``"dask"`` or ``"torch"``: the engine named in the results."""
        ...

    def prepare(self, X: np.ndarray, distance: str) -> Any:
        """The set's prepared embeddings ``X``, made once per set and kept by the caller."""
        ...

    def distance_pass(
        self, prepared: Any, distance: str, *, desc: str = "distances"
    ) -> LogDistanceHistogram:
        """The log-distance histogram of every unordered pair (:func:`.streaming.distance_pass`)."""
        ...

    def threshold_pass(
        self,
        prepared: Any,
        distance: str,
        taus: np.ndarray | None = None,
        kernel: BlockKernel | None = None,
        *,
        desc: str = "thresholds",
    ) -> ThresholdCounts:
        """Pairs and degrees at the sorted ``taus`` and ``Σ K_ij²``
        (:func:`.streaming.threshold_pass`)."""
        ...

    def dual_spectrum(self, prepared: Any) -> np.ndarray:
        """Eigenvalues of ``XᵀX / n`` (d of them; rows already unit), from the d × d
        covariance accumulated where the set lives, by LAPACK on the host."""
        ...

    def solver_options(self, prepared: Any) -> dict[str, Any]:
        """The options that put a large-n solver's products on this engine: ``{}``,
        ``{"shipped": prepared}`` or ``{"device": ...}`` (see :data:`.large.SOLVERS`)."""
        ...

    def provenance(self) -> dict[str, str]:
        """Attributes a profile node records about the engine that computed it."""
        ...


@dataclass(frozen=True)
class NumpyEngine:
    """The in-memory engine (:mod:`.streaming`): float64 GEMM row blocks, never n × n.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    >>> engine = NumpyEngine()
    >>> h = engine.distance_pass(engine.prepare(X, "euclidean"), "euclidean")
    >>> h.n_pairs, round(h.mean_distance(), 6)
    (3.0, 6.666667)
    """

    @property
    def name(self) -> str:
        return "numpy"

    def prepare(self, X: np.ndarray, distance: str) -> np.ndarray:
        return np.asarray(X)  # the passes prepare their float32/float64 copies per pass

    def distance_pass(
        self, prepared: Any, distance: str, *, desc: str = "distances"
    ) -> LogDistanceHistogram:
        return _streaming.distance_pass(prepared, distance, desc=desc)

    def threshold_pass(
        self,
        prepared: Any,
        distance: str,
        taus: np.ndarray | None = None,
        kernel: BlockKernel | None = None,
        *,
        desc: str = "thresholds",
    ) -> ThresholdCounts:
        return _streaming.threshold_pass(prepared, distance, taus, kernel, desc=desc)

    def dual_spectrum(self, prepared: Any) -> np.ndarray:
        return _streaming.dual_spectrum(prepared)

    def solver_options(self, prepared: Any) -> dict[str, Any]:
        return {}

    def provenance(self) -> dict[str, str]:
        return {}  # the default engine: the results have always said nothing about it


@dataclass(frozen=True)
class DaskEngine:
    """The dask engine (:mod:`.dask_engine`): one task per row block, on the active
    ``dask.distributed`` client, else on dask's local threaded scheduler.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> engine = DaskEngine()
    >>> c = engine.threshold_pass(engine.prepare(X, "euclidean"), "euclidean", np.array([1.5]))
    >>> c.pairs.tolist()
    [1]
    """

    @property
    def name(self) -> str:
        return "dask"

    def prepare(self, X: np.ndarray, distance: str) -> _dask_engine.Shipped:
        return _dask_engine.ship(X)  # to every worker once; every pass reuses it

    def distance_pass(
        self, prepared: Any, distance: str, *, desc: str = "distances"
    ) -> LogDistanceHistogram:
        return _dask_engine.distance_pass(prepared, distance)  # no progress bar: tasks

    def threshold_pass(
        self,
        prepared: Any,
        distance: str,
        taus: np.ndarray | None = None,
        kernel: BlockKernel | None = None,
        *,
        desc: str = "thresholds",
    ) -> ThresholdCounts:
        return _dask_engine.threshold_pass(prepared, distance, taus, kernel)

    def dual_spectrum(self, prepared: Any) -> np.ndarray:
        return _dask_engine.dual_spectrum(prepared)

    def solver_options(self, prepared: Any) -> dict[str, Any]:
        # The solvers' products K V then run as tasks on the workers holding the set.
        return {"shipped": _dask_engine.ship(prepared)}  # a Shipped comes back unchanged

    def provenance(self) -> dict[str, str]:
        return _dask_engine.provenance()


@dataclass(frozen=True)
class TorchEngine:
    """The torch engine (:mod:`.torch_engine`) on ``device``, a resolved device name
    (``"cuda:0"``, ``"cpu"``; see :func:`.torch_engine.resolve_device`).

    Examples
    --------
    >>> TorchEngine("cpu").name
    'torch'
    """

    device: str

    @property
    def name(self) -> str:
        return "torch"

    def prepare(self, X: np.ndarray, distance: str) -> _torch_engine.DeviceSet:
        return _torch_engine.DeviceSet(X, distance, self.device)  # copied to the device once

    def distance_pass(
        self, prepared: Any, distance: str, *, desc: str = "distances"
    ) -> LogDistanceHistogram:
        return _torch_engine.distance_pass(prepared, distance, device=self.device)

    def threshold_pass(
        self,
        prepared: Any,
        distance: str,
        taus: np.ndarray | None = None,
        kernel: BlockKernel | None = None,
        *,
        desc: str = "thresholds",
    ) -> ThresholdCounts:
        return _torch_engine.threshold_pass(prepared, distance, taus, kernel, device=self.device)

    def dual_spectrum(self, prepared: Any) -> np.ndarray:
        return _torch_engine.dual_spectrum(prepared, device=self.device)

    def solver_options(self, prepared: Any) -> dict[str, Any]:
        return {"device": self.device}  # the solvers copy the rows they need themselves

    def provenance(self) -> dict[str, str]:
        return _torch_engine.provenance(self.device)


def engine_for(*, distributed: bool = False, device: str | None = None) -> Engine:
    """The engine a set runs on: the only place that decides it.

    Parameters
    ----------
    distributed : bool, default False
        The set came as a dask collection: its passes run as dask tasks.
    device : str, optional
        A resolved torch device (:func:`.torch_engine.resolve_device`). It wins over
        ``distributed``: a dask set given a device is gathered and copied there.

    Examples
    --------
    >>> engine_for().name, engine_for(distributed=True).name
    ('numpy', 'dask')
    >>> engine_for(distributed=True, device="cpu")
    TorchEngine(device='cpu')
    """
    if device is not None:
        return TorchEngine(device)
    if distributed:
        return DaskEngine()
    return NumpyEngine()
