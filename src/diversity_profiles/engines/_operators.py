"""Which :class:`._blockwise.PairOperator` a large-n solver gets: on the host, its tiles and
products on a torch device, or its products as dask tasks on the workers holding the set
(kept apart so that no engine module imports the solvers back)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ._blockwise import PairOperator

if TYPE_CHECKING:
    from ._dask_engine import Shipped


def pair_operator(
    X: np.ndarray,
    distance: str,
    entry: Callable[[np.ndarray, np.ndarray], None],
    *,
    scale: np.ndarray | None = None,
    device: str | None = None,
    shipped: Shipped | None = None,
) -> PairOperator:
    """A :class:`PairOperator`, its tiles and products on the torch ``device`` when one is
    given (:class:`.torch_engine.DevicePairOperator`; ``entry`` must then use
    :func:`.torch_engine.namespace` for its math), or its products as dask tasks when the
    set is ``shipped`` to dask workers (:class:`.dask_operator.DaskPairOperator`; ``entry``
    must then pickle: a module-level function or a ``functools.partial`` of one)."""
    if device is not None:
        from ._torch_engine import DevicePairOperator

        return DevicePairOperator(X, distance, entry, scale=scale, device=device)
    if shipped is not None:
        from ._dask_operator import DaskPairOperator, on_workers

        return DaskPairOperator(on_workers(shipped, X), distance, entry, scale=scale)
    return PairOperator(X, distance, entry, scale=scale)


def solver_input(X: Any, shipped: Shipped | None, func: str) -> tuple[Any, Shipped | None]:
    """``(X, shipped)`` for a large-n solver: a dask array (or chunked DataArray) given as
    ``X`` is gathered once and shipped to the workers, so that the products run there."""
    from ._dask_engine import gather_set, is_dask, ship

    if shipped is None and is_dask(X):
        X = gather_set(X, func, "X")
        shipped = ship(X)
    return X, shipped
