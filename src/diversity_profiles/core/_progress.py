"""Progress bars for long work (featurisation, resampling, large-n passes): tqdm's (a notebook bar,
with an ETA) when installed, else one updating line on stderr with the elapsed time
and an ETA. Silent when ``enabled`` is False."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def progress(
    items: Iterable[T], *, total: int, desc: str, enabled: bool = True, unit: str = "batch"
) -> Iterator[T]:
    """Iterate ``items`` (``total`` of them) while showing how far along ``desc`` is."""
    if not enabled:
        yield from items
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        yield from _plain(items, total, desc)
        return
    yield from tqdm(items, total=total, desc=desc, unit=unit)


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
