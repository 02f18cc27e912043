"""A page of a tube's jobs without holding the loop: the tube's ids in the state are
snapshotted in id order (cheap), then walked from the cursor, oldest or newest first,
testing each job (its body for a search) in slices across loop turns until the page is
full. A job is shown as it is when tested. Ready jobs also page in reserve order
(priority, then id), read from the tube's ready queue after the cursor's key, a batch
at a time: no snapshot, no sort."""

from __future__ import annotations

import asyncio
import time
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import TYPE_CHECKING

from beanpod.core import query
from beanpod.web.api.chunks import CHECK_EVERY, SLICE_SECONDS

if TYPE_CHECKING:
    from beanpod.core.engine import Engine


async def job_page(
    engine: Engine, flt: query.JobFilter, now: int, after: int | None, newest: bool, size: int
) -> tuple[list[query.JobView], int | None]:
    """`size` matching jobs after the id `after`, and the next page's cursor (or None)."""
    ids = query.candidate_ids(engine, flt)
    return await _page(engine, flt, now, ((i, i) for i in _walk(ids, after, newest)), size)


def _walk(ids: list[int], after: int | None, newest: bool) -> Iterator[int]:
    if newest:
        end = len(ids) if after is None else bisect_left(ids, after)
        return (ids[i] for i in range(end - 1, -1, -1))
    start = 0 if after is None else bisect_right(ids, after)
    return iter(ids[start:])


READY_BATCH = 256  # ready keys read per step of a reserve-order page


async def ready_page(
    engine: Engine, flt: query.JobFilter, now: int, after: int | None, size: int
) -> tuple[list[query.JobView], int | None]:
    """`size` matching ready jobs after the ready key `after`, in reserve order, and the
    next page's cursor (the key of this page's last job) or None."""
    return await _page(engine, flt, now, _ready(engine, flt.tube, after), size)


def _ready(engine: Engine, tube: str, after: int | None) -> Iterator[tuple[int, int]]:
    """(ready key, id) in reserve order after the key `after`, a batch at a time."""
    while True:
        batch = query.ready_after(engine, tube, after, READY_BATCH)
        yield from batch
        if len(batch) < READY_BATCH:
            return
        after = batch[-1][0]


async def _page(
    engine: Engine, flt: query.JobFilter, now: int, walk: Iterator[tuple[int, int]], size: int
) -> tuple[list[query.JobView], int | None]:
    """The first `size` jobs of `walk` ((cursor, id) pairs) that match, tested in slices
    across loop turns, and the cursor of the page's last job when more follow."""
    found: list[tuple[int, int]] = []
    started = time.perf_counter()
    for count, (key, job_id) in enumerate(walk, 1):
        if query.matches(engine, flt, job_id):
            found.append((key, job_id))
            if len(found) > size:
                break
        if count % CHECK_EVERY == 0 and time.perf_counter() - started > SLICE_SECONDS:
            await asyncio.sleep(0)
            started = time.perf_counter()
    views = [query.job_view(engine, job_id, now) for _, job_id in found[:size]]
    page = [view for view in views if view is not None]  # (gone since: not shown)
    return page, (found[size - 1][0] if len(found) > size else None)
