"""The read-only query module: views and listings agree with the engine's own answers."""

from __future__ import annotations

import pytest

from beanpod.core import query
from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck, owner
from beanpod.core.qless.ext import QlessExt, RecurExt
from beanpod.core.workq.ext import WorkqExt

S = 1000


def test_views_and_listings_by_state() -> None:
    engine = Engine(MoveCheck())
    conn = engine.connect()
    engine.use(conn, "jobs")
    tube = conn.use
    a = engine.put(conn, tube, 5, 0, 60 * S, b"a", 0).id
    b = engine.put(conn, tube, 1, 0, 60 * S, b"bb", 0).id
    c = engine.put(conn, tube, 1, 30 * S, 60 * S, b"c", 0).id
    engine.watch(conn, "jobs")
    engine.ignore(conn, "default")
    got = engine.reserve(conn, 0, 1 * S, lambda _: None)
    assert got is not None and got.id == b
    engine.bury(conn, b, 7, 2 * S)
    assert [j.id for j in query.jobs_in(engine, "jobs", "ready")] == [a]
    assert [j.id for j in query.jobs_in(engine, "jobs", "delayed")] == [c]
    assert [j.id for j in query.jobs_in(engine, "jobs", "buried")] == [b]
    assert list(query.jobs_in(engine, "nope", "ready")) == []
    view = query.tube_view(engine, "jobs", 2 * S)
    assert view is not None and (view.ready, view.delayed, view.buried) == (1, 1, 1)
    job = query.job_view(engine, b, 3 * S)
    assert job is not None and (job.state, job.pri, job.buries, job.age_ms) == (
        "buried",
        7,
        1,
        3 * S,
    )
    assert query.body(engine, b) == b"bb"
    assert query.job_view(engine, 999, 0) is None
    assert query.tube_names(engine) == ["default", "jobs"]
    with pytest.raises(ValueError, match="unknown state"):
        list(query.jobs_in(engine, "jobs", "lost"))


def test_one_answer_to_which_dialect_owns_a_job() -> None:
    """core.job.owner: what the console's views, the job filter's exclude=qless and the
    operator's moves all read."""
    engine = Engine(MoveCheck())
    tube = engine.tube("t")
    uuid = b"0c0f6c3e-4a5e-4b8e-9f00-000000000001"
    exts = [None, QlessExt("j1", "K", "t"), RecurExt("r1", "K", "t", 5), WorkqExt(uuid)]
    jobs = [engine.put(None, tube, 0, 0, S, b"", 0, ext=ext) for ext in exts]
    expected = [("beanstalkd", ""), ("qless", "j1"), ("qless", "r1"), ("workq", uuid.decode())]
    assert [owner(job) for job in jobs] == expected
    views = [query.job_view(engine, job.id, 0) for job in jobs]
    assert [(v.dialect, v.key) for v in views if v is not None] == expected
    flt = query.JobFilter("t", "ready", skip_qless=True)
    assert [query.matches(engine, flt, job.id) for job in jobs] == [True, False, False, True]
