"""The console's shared pieces: one job summary for Busy and Find, one default order,
and the reserve-order page walking the ready queue through the same pager as the
id-order pages (across several batches, with a body search)."""

from __future__ import annotations

import asyncio

import pytest

from beanpod.core import query
from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.web.api import busy, pages, params, views
from beanpod.web.errors import ApiError


def engine_with_jobs(count: int) -> tuple[Engine, list[tuple[int, int]]]:
    engine = Engine(MoveCheck())
    conn = engine.connect()
    tube = engine.use(conn, "t")
    jobs = []
    for n in range(count):
        pri = (n * 7919) % 13  # priorities out of id order
        jobs.append((pri, engine.put(conn, tube, pri, 0, 1000, b"x%d" % n, 0).id))
    return engine, jobs


def test_busy_rows_and_find_matches_share_the_job_summary() -> None:
    engine, jobs = engine_with_jobs(2)
    conn = engine.connect()
    job = engine.reserve_job(conn, jobs[0][1], 0)
    assert job is not None
    view = query.job_view(engine, job.id, 5)
    assert view is not None and view.holder is not None
    summary = views.summary(view)
    assert summary == {"id": job.id, "tube": "t", "state": "reserved",
                       "dialect": "beanstalkd", "key": ""}  # fmt: skip
    row = busy.row(view)
    assert {k: row[k] for k in summary} == summary
    assert row["holder"]["conn"] == view.holder.conn and row["ttr_ms"] == 1000


def test_one_default_order_per_state() -> None:
    assert [params.default_order(s) for s in params.STATES] == [
        "reserve" if s == "ready" else "oldest" for s in params.STATES
    ]
    assert params.order(None, "buried") == "oldest" and params.order("", "ready") == "reserve"
    with pytest.raises(ApiError):
        params.order("reserve", "delayed")


def test_reserve_order_pages_cross_batches_with_a_search() -> None:
    engine, jobs = engine_with_jobs(pages.READY_BATCH * 2 + 40)
    flt = query.JobFilter("t", "ready", contains=b"1")
    expected = [i for _, i in sorted(jobs) if b"1" in (query.body(engine, i) or b"")]

    async def walk(size: int) -> list[int]:
        seen: list[int] = []
        after = None
        while True:
            page, after = await pages.ready_page(engine, flt, 0, after, size)
            seen += [view.id for view in page]
            if after is None:
                return seen

    assert asyncio.run(walk(7)) == expected
    assert asyncio.run(walk(len(expected))) == expected
