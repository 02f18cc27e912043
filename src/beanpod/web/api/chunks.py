"""Long work in slices: a bulk action over 100,000 jobs runs a few milliseconds at a
time and yields the loop between slices, so other connections never wait long."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable

SLICE_SECONDS = 0.005  # work per loop turn
CHECK_EVERY = 64  # jobs between clock reads


async def run_sliced(
    items: Iterable[int], step: Callable[[int], bool | None], after_slice: Callable[[], None]
) -> int:
    """Call `step(item)` for each item, yielding the loop every SLICE_SECONDS; stop
    early when a step answers None (e.g. the disk is full). Returns how many steps
    answered True. `after_slice` runs before each yield (the server's rearm)."""
    done = 0
    clock = time.perf_counter
    started = clock()
    for count, item in enumerate(items, 1):
        outcome = step(item)
        if outcome is None:
            break
        done += outcome
        if count % CHECK_EVERY == 0 and clock() - started > SLICE_SECONDS:
            after_slice()
            await asyncio.sleep(0)
            started = clock()
    after_slice()
    return done
