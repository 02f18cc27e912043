"""Workq extras in the journal and event seams; restart; plain beanstalkd jobs."""

from __future__ import annotations

from beanpod.core.engine import Engine
from beanpod.core.job import EXT_DECODERS, Job, JobState, MoveCheck
from beanpod.core.workq import Workq
from beanpod.core.workq.ext import (
    COMPLETED,
    PENDING,
    WorkqExt,
    synthetic_uuid,
    workq_state,
)
from tests.support.workq_engine import U1, U2, Outcomes, RecordingEvents, RecordingJournal, make


def test_ext_codec_round_trips_through_the_registry() -> None:
    ext = WorkqExt(U1, 5000, 12_345, 7000, 3, 2, is_run=True)
    ext.attempts, ext.fails, ext.outcome, ext.result = 2, 1, 2, b"\x00res\r\n"
    back = EXT_DECODERS[WorkqExt.KIND](ext.encode())
    assert isinstance(back, WorkqExt)
    assert (back.uuid, back.ttl, back.expires, back.scheduled, back.max_attempts) == (
        U1, 5000, 12_345, 7000, 3,
    )  # fmt: skip
    assert (back.attempts, back.max_fails, back.fails, back.outcome, back.result, back.is_run) == (
        2, 2, 1, 2, b"\x00res\r\n", True,
    )  # fmt: skip


def test_every_durable_change_is_journalled_with_its_extras() -> None:
    engine, wq = make()
    journal = RecordingJournal()
    engine.journal = journal
    conn = wq.connect()
    job = wq.add(conn, U1, "q", 1000, 60_000, b"", now=0, max_fails=2)
    wq.lease(conn, ["q"], 0, 0, Outcomes())  # attempts
    wq.fail(conn, U1, b"e", 1)  # fails
    wq.lease(conn, ["q"], 0, 2, Outcomes())
    wq.complete(conn, U1, b"done", 3)  # result
    kinds = [r[0] for r in journal.records]
    assert kinds == ["put", "state", "update", "update", "update", "update"]
    assert journal.records[1][2] == b"workq.queue.q"  # the queue, journalled once
    last = WorkqExt.decode(journal.records[-1][2] or b"")
    assert (last.attempts, last.fails, last.result) == (2, 1, b"done")
    assert job.state is JobState.COMPLETE  # held: in no engine queue
    engine.tick(60_000)
    assert journal.records[-1] == ("delete", job.id, None)


def test_restart_keeps_journalled_queues_and_rebuilds_those_of_older_logs() -> None:
    engine, wq = make()
    journal = RecordingJournal()
    engine.journal = journal
    conn = wq.connect()
    wq.add(conn, U1, "emptied", 1000, 60_000, b"", now=0)
    wq.delete(conn, U1, 1)
    journal.named["workq.queue.emptied"] = b"1"
    wq.add(conn, U2, "old-log", 1000, 60_000, b"", now=2)
    del journal.named["workq.queue.old-log"]  # as a log written before queues were
    restarted = Workq(engine)  # a new dialect over the restored engine
    restarted.reattach(3)
    assert restarted.queues == {"emptied", "old-log"}
    assert journal.named["workq.queue.old-log"] == b"1"  # journalled now, kept from here


def test_events_put_uuid_complete_fail_release_evict() -> None:
    engine, wq = make()
    events = RecordingEvents()
    engine.events = events
    conn = wq.connect()
    wq.add(conn, U1, "q", 1000, 60_000, b"abc", now=0, max_fails=2)
    assert events.events[0]["uuid"] == U1.decode() and events.events[0]["bytes"] == 3
    wq.lease(conn, ["q"], 0, 1, Outcomes())
    wq.fail(conn, U1, b"xy", 2)
    wq.lease(conn, ["q"], 0, 3, Outcomes())
    wq.complete(conn, U1, b"12345", 4)
    wq.add(conn, U2, "q", 1000, 10, b"", now=5)
    engine.tick(15)
    assert events.names() == [
        "put", "reserve", "fail", "release", "reserve", "complete", "put", "evict",
    ]  # fmt: skip
    fail, release = events.events[2], events.events[3]
    assert (fail["group"], fail["message"], fail["bytes"]) == (None, None, 2)
    assert release["delay_ms"] == 0 and events.events[5]["bytes"] == 5


def test_restart_reindexes_and_rearms_ttl_and_drops_run_jobs() -> None:
    engine, wq = make()
    conn = wq.connect()
    wq.add(conn, U1, "q", 1000, 60_000, b"", now=0)
    wq.complete(conn, U1, b"kept", 1)
    wq.run(conn, U2, "q", 1000, 1000, b"", 2, Outcomes())
    # What a restore does: fresh engine, jobs rebuilt with decoded extras.
    fresh = Engine(MoveCheck())
    with fresh.restarting():
        for old in engine.jobs.values():
            assert old.ext is not None
            held = old.state if old.state is JobState.COMPLETE else None
            fresh.put(None, fresh.tube(old.tube.name), old.pri, 0, old.ttr, old.body, 0,
                      job_id=old.id, ext=WorkqExt.decode(old.ext.encode()), held=held)  # fmt: skip
    wq2 = Workq(fresh)
    wq2.reattach(100)
    job = wq2.find(U1)
    assert job is not None and workq_state(job) == COMPLETED
    assert wq2.result(U1, 0, 100, Outcomes()) == (U1, 1, b"kept")
    assert wq2.find(U2) is None and len(fresh.jobs) == 1
    fresh.tick(60_000)
    assert wq2.find(U1) is None


def test_plain_beanstalkd_job_is_named_by_a_synthetic_uuid() -> None:
    engine, wq = make()
    bean = engine.connect()
    job = engine.put(bean, engine.tube("q"), 10, 0, 5000, b"plain", 0)
    uuid = synthetic_uuid(job.id)
    assert uuid == b"00000000-0000-4000-8000-%012x" % job.id
    assert wq.find(uuid) is job and workq_state(job) == 0
    worker = wq.connect()
    assert wq.lease(worker, ["q"], 0, 1, Outcomes()) is job
    got = Outcomes()
    wq.result(uuid, 1000, 2, got)
    wq.complete(worker, uuid, b"r", 3)
    assert got.got == [(uuid, 1, b"r")]
    assert not engine.jobs  # without a TTL there is nowhere to keep the result


def test_beanstalkd_can_reserve_and_delete_a_workq_job() -> None:
    engine, wq = make()
    wq.add(wq.connect(), U1, "q", 2000, 60_000, b"w", now=0, priority=7)
    bean = engine.connect()
    engine.watch(bean, "q")
    reserved = engine.reserve(bean, 0, 1, Outcomes())
    assert isinstance(reserved, Job) and reserved.ext is not None
    engine.tick(2001)  # beanstalkd TTR expiry: back to ready, attempts untouched
    assert workq_state(reserved) == 0
    reserved = engine.reserve(bean, 0, 2002, Outcomes())
    assert engine.delete(bean, reserved.id, 2003)
    assert wq.find(U1) is None and not wq.index


def test_requeue_after_beanstalkd_release_counts_as_pending_after_a_lease() -> None:
    engine, wq = make()
    conn = wq.connect()
    job = wq.add(conn, U1, "q", 100, 60_000, b"", now=0)
    wq.lease(conn, ["q"], 0, 0, Outcomes())
    engine.tick(100)
    assert workq_state(job) == PENDING
