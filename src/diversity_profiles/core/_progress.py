"""Progress bars for long work (featurisation, resampling, large-n passes): tqdm's (a notebook bar,
with an ETA) when installed, else one updating line on stderr with the elapsed time
and an ETA. Silent when ``enabled`` is False.

In a notebook the live bar is an ipywidget shown through a display handle; when the
work ends (or stops) that display is replaced by one plain text line, so a saved
notebook holds text, not a widget view that shows "Loading widget..." once reopened.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")

#: Set inside :func:`quiet_progress` (per thread of control, not a module-wide switch).
_QUIET: ContextVar[bool] = ContextVar("diversity_profiles_quiet_progress", default=False)


@contextmanager
def quiet_progress() -> Iterator[None]:
    """Inside, a bar that decides for itself (:func:`timed_progress` with ``enabled=None``)
    stays hidden: for short runs whose time is what is wanted, such as the up-front plan's
    probes (a bar for a probe of 1,500 samples read as if the real run had started).

    >>> with quiet_progress():
    ...     list(timed_progress(range(2), total=2, desc="probe", after_s=0.0))
    [0, 1]
    """
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


def progress(
    items: Iterable[T], *, total: int, desc: str, enabled: bool = True, unit: str = "batch"
) -> Iterator[T]:
    """Iterate ``items`` (``total`` of them) while showing how far along ``desc`` is.

    >>> list(progress(range(3), total=3, desc="nothing", enabled=False))
    [0, 1, 2]
    """
    if not enabled:
        yield from items
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        yield from _plain(items, total, desc)
        return
    if _notebook_bar_class(tqdm) is not None:
        yield from _notebook(items, total, desc, unit)
        return
    yield from tqdm(items, total=total, desc=desc, unit=unit)


def timed_progress(
    items: Iterable[T],
    *,
    total: int,
    desc: str,
    enabled: bool | None = None,
    unit: str = "step",
    after_s: float | None = None,
) -> Iterator[T]:
    """:func:`progress` that decides for itself: with ``enabled=None`` the first item is
    timed (the work the caller does on it), and a bar with an ETA appears for the rest when
    ``total - 1`` more such items would take longer than ``after_s`` seconds (default
    :data:`~diversity_profiles.core.PROGRESS_AFTER_S`). For loops whose cost per item is
    known only once one has run: the scales of magnitude, the tiles of a pass.

    >>> list(timed_progress(range(3), total=3, desc="quick"))  # too fast for a bar
    [0, 1, 2]
    """
    if enabled is None and _QUIET.get():
        enabled = False
    if enabled is not None:
        yield from progress(items, total=total, desc=desc, enabled=enabled, unit=unit)
        return
    from . import _budget  # read when called: tests and users may change the threshold

    limit = _budget.PROGRESS_AFTER_S if after_s is None else after_s
    it = iter(items)
    start = time.perf_counter()
    for first in it:
        yield first
        break
    else:
        return
    elapsed = time.perf_counter() - start
    show = total > 1 and elapsed * (total - 1) > limit
    yield from progress(
        it, total=total - 1, desc=f"{desc} (after the first)", enabled=show, unit=unit
    )


def finished_line(desc: str, done: int, total: int, unit: str, seconds: float) -> str:
    """The line left in place of a finished (or stopped) bar.

    >>> finished_line("resampling set 1/2", 12, 12, "batch", 3.42)
    'resampling set 1/2: 12/12 batches in 3.4 s'
    >>> finished_line("resampling set 1/2", 5, 12, "batch", 1.0)
    'resampling set 1/2: stopped at 5/12 batches after 1.0 s'
    """
    units = unit if total == 1 else unit + ("es" if unit.endswith(("s", "ch", "sh", "x")) else "s")
    if done >= total:
        return f"{desc}: {done}/{total} {units} in {seconds:.1f} s"
    return f"{desc}: stopped at {done}/{total} {units} after {seconds:.1f} s"


def _notebook_bar_class(auto_cls: type) -> type | None:
    """tqdm's notebook bar when ``tqdm.auto`` chose it (a kernel with ipywidgets), else None."""
    try:
        from tqdm.notebook import tqdm as notebook_tqdm
    except ImportError:  # pragma: no cover - tqdm without its notebook module
        return None
    return notebook_tqdm if issubclass(auto_cls, notebook_tqdm) else None


def _notebook(items: Iterable[T], total: int, desc: str, unit: str) -> Iterator[T]:
    from IPython.display import display
    from tqdm.notebook import tqdm as notebook_tqdm

    # display=False: the bar goes out through our handle, which we can replace later.
    bar = notebook_tqdm(total=total, desc=desc, unit=unit, display=False, leave=False)
    handle = display(bar.container, display_id=True)
    start = time.monotonic()
    done = 0
    try:
        for item in items:
            yield item
            done += 1
            bar.update(1)
    finally:
        seconds = time.monotonic() - start
        bar.container.close()  # the widget's model goes too, not only its view
        bar.disp = lambda *_, **__: None  # nothing left to draw on
        bar.close()
        line = finished_line(desc, done, total, unit, seconds)
        if handle is not None:
            handle.update({"text/plain": line}, raw=True)


def _plain(items: Iterable[T], total: int, desc: str) -> Iterator[T]:
    start = last = time.monotonic()
    done = 0
    for item in items:
        yield item
        done += 1
        now = time.monotonic()
        if now - last > 0.5 or done == total:
            last = now
            eta = (now - start) / done * (total - done)
            print(
                f"\r{desc}: {done}/{total} ({now - start:.0f} s, ETA {eta:.0f} s)",
                end="\n" if done == total else "",
                file=sys.stderr,
                flush=True,
            )
