"""Which :class:`._blockwise.PairOperator` a large-n solver gets: on the host, or its
tiles and products on a torch device (kept apart so that neither module imports the other
back)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._blockwise import PairOperator


def pair_operator(
    X: np.ndarray,
    distance: str,
    entry: Callable[[np.ndarray, np.ndarray], None],
    *,
    scale: np.ndarray | None = None,
    device: str | None = None,
) -> PairOperator:
    """A :class:`PairOperator`, its tiles and products on the torch ``device`` when one is
    given (:class:`.torch_engine.DevicePairOperator`; ``entry`` must then use
    :func:`.torch_engine.namespace` for its math)."""
    if device is None:
        return PairOperator(X, distance, entry, scale=scale)
    from .torch_engine import DevicePairOperator

    return DevicePairOperator(X, distance, entry, scale=scale, device=device)
