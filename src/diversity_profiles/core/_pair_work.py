"""Seconds spent on work over all pairs of a set, counted apart from the rest of a run.

The up-front time estimate times the large-n solvers on subsets of 750 and 1,500 samples
(and more where its decision is in doubt) and extrapolates in n. At those sizes their n²
work (products with an n × n kernel, passes over the tiles) is a small share of the time,
and an exponent fitted to the two totals saw none of it: at 30,000 × 64 Vendi was
estimated at 133 s for 804 s. Work over the pairs is therefore metered on its own
(:func:`pair_work`, outermost region only) and grown as a·n + b·n², the rest with its own
fitted exponent (``pipeline._passes.grown``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

F = TypeVar("F", bound=Callable)


class PairWorkMeter:
    """Seconds of :func:`pair_work` regions run under :func:`metered_pair_work`.

    Only the outermost region counts (a product that forms tiles is not counted twice),
    and only in the thread of control that opened the meter: regions on worker threads
    are inside a region of their caller, which counts them.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self._depth = 0
        self._start = 0.0

    def _enter(self) -> None:
        if self._depth == 0:
            self._start = time.perf_counter()
        self._depth += 1

    def _leave(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._start


_METER: ContextVar[PairWorkMeter | None] = ContextVar("diversity_profiles_pair_work", default=None)


@contextmanager
def metered_pair_work() -> Iterator[PairWorkMeter]:
    """Count, inside, the seconds of work over all pairs (see :func:`pair_work`).

    >>> import numpy as np
    >>> with metered_pair_work() as meter:
    ...     with pair_work():
    ...         _ = np.ones((300, 300)) @ np.ones(300)
    ...     with pair_work(), pair_work():  # nested: counted once
    ...         pass
    >>> 0.0 < meter.seconds < 1.0
    True
    """
    meter = PairWorkMeter()
    token = _METER.set(meter)
    try:
        yield meter
    finally:
        _METER.reset(token)


@contextmanager
def pair_work() -> Iterator[None]:
    """Around work that grows as the square of a set's size: counted by an open meter."""
    meter = _METER.get()
    if meter is None:
        yield
        return
    meter._enter()
    try:
        yield
    finally:
        meter._leave()


def counts_as_pair_work(func: F) -> F:
    """A function whose whole call is :func:`pair_work` (it returns, not yields)."""

    @functools.wraps(func)
    def counted(*args, **kwargs):
        with pair_work():
            return func(*args, **kwargs)

    return counted  # type: ignore[return-value]
