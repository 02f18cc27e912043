"""Workq on the engine: add, lease, complete, fail, delete, result, run; fake clock."""

from __future__ import annotations

import pytest

from beanpod.core.job import JobState
from beanpod.core.waiters import TIMED_OUT
from beanpod.core.workq import NOT_FOUND, TIMEOUT, Wait, WorkqError
from beanpod.core.workq.ext import (
    COMPLETED,
    FAILED,
    LEASED,
    NEW,
    PENDING,
    to_engine_pri,
    to_workq_pri,
    workq_state,
)
from tests.support.workq_engine import U1, U2, U3, Outcomes, make


def test_add_lease_complete_result() -> None:
    _engine, wq = make()
    conn = wq.connect()
    job = wq.add(conn, U1, "ping", 1000, 60_000, b"hi", now=0)
    assert workq_state(job) == NEW and job.state is JobState.READY
    leased = wq.lease(conn, ["ping"], 0, 10, Outcomes())
    assert leased is job and workq_state(job) == LEASED
    wq.complete(conn, U1, b"pong", 20)
    assert workq_state(job) == COMPLETED
    assert wq.result(U1, 0, 30, Outcomes()) == (U1, 1, b"pong")
    with pytest.raises(WorkqError, match="Duplicate result"):
        wq.fail(conn, U1, b"", 40)


def test_complete_needs_no_lease_and_any_connection() -> None:
    _, wq = make()
    wq.add(wq.connect(), U1, "q", 1000, 60_000, b"", now=0)
    wq.complete(wq.connect(), U1, b"r", 1)  # never leased, other connection
    assert wq.result(U1, 0, 2, Outcomes()) == (U1, 1, b"r")


def test_duplicate_ids_rejected_while_the_job_or_its_result_lives() -> None:
    _, wq = make()
    conn = wq.connect()
    wq.add(conn, U1, "a", 1000, 60_000, b"", now=0)
    with pytest.raises(WorkqError, match="Duplicate job"):
        wq.add(conn, U1, "other-name", 1000, 60_000, b"", now=0)
    wq.complete(conn, U1, b"", 1)
    with pytest.raises(WorkqError, match="Duplicate job"):
        wq.run(conn, U1, "a", 1000, 1000, b"", 2, Outcomes())
    wq.delete(conn, U1, 3)
    wq.add(conn, U1, "a", 1000, 60_000, b"", now=4)  # free again


def test_delete_any_state_then_not_found() -> None:
    engine, wq = make()
    conn = wq.connect()
    wq.add(conn, U1, "a", 1000, 60_000, b"", now=0)
    wq.lease(conn, ["a"], 0, 0, Outcomes())
    wq.delete(conn, U1, 1)
    assert wq.find(U1) is None and not engine.jobs and "a" not in engine.tubes
    for op in (wq.delete, lambda c, u, n: wq.complete(c, u, b"", n)):
        with pytest.raises(WorkqError, match=NOT_FOUND):
            op(conn, U1, 2)


def test_priority_higher_first_and_mapping_is_order_reversing() -> None:
    _, wq = make()
    conn = wq.connect()
    for uuid, pri in ((U1, -5), (U2, 10), (U3, 0)):
        wq.add(conn, uuid, "q", 1000, 60_000, b"", now=0, priority=pri)
    order = [wq.lease(conn, ["q"], 0, 1, Outcomes()).ext.uuid for _ in range(3)]
    assert order == [U2, U3, U1]
    assert to_engine_pri(2**31 - 1) == 0 and to_engine_pri(-(2**31)) == 2**32 - 1
    assert to_workq_pri(to_engine_pri(123)) == 123


def test_lease_over_several_names_takes_the_best_and_parks_otherwise() -> None:
    engine, wq = make()
    worker = wq.connect()
    got = Outcomes()
    assert wq.lease(worker, ["a", "b"], 0, 0, got) is TIMED_OUT
    assert wq.lease(worker, ["a", "b"], 500, 0, got) is None  # parked
    assert engine.tubes["a"].waiting == 1
    job = wq.add(wq.connect(), U1, "b", 1000, 60_000, b"x", now=100)
    assert got.got == [job] and job.ext.attempts == 1
    assert "a" not in engine.tubes  # the parked lease's pin on "a" is gone
    assert wq.lease(worker, ["a"], 500, 200, got) is None
    engine.tick(699)
    assert got.got[-1] is job
    engine.tick(700)
    assert got.got[-1] is TIMED_OUT


def test_result_waits_all_answered_on_complete() -> None:
    engine, wq = make()
    conn = wq.connect()
    wq.add(conn, U1, "q", 1000, 60_000, b"", now=0)
    first, second = Outcomes(), Outcomes()
    assert isinstance(wq.result(U1, 1000, 0, first), Wait)
    assert isinstance(wq.result(U1, 1000, 0, second), Wait)
    wq.complete(conn, U1, b"ok", 10)
    assert first.got == second.got == [(U1, 1, b"ok")]
    engine.tick(5000)  # their timers were cancelled
    assert len(first.got) == 1


def test_result_times_out_and_zero_wait_answers_at_once() -> None:
    engine, wq = make()
    wq.add(wq.connect(), U1, "q", 1000, 60_000, b"", now=0)
    assert wq.result(U1, 0, 0, Outcomes()) == TIMEOUT
    got = Outcomes()
    wq.result(U1, 300, 0, got)
    engine.tick(299)
    assert got.got == []
    engine.tick(300)
    assert got.got == [TIMEOUT]
    with pytest.raises(WorkqError, match=NOT_FOUND):
        wq.result(U2, 0, 0, got)


def test_run_answers_on_complete_then_the_job_is_gone() -> None:
    engine, wq = make()
    got = Outcomes()
    wq.run(wq.connect(), U1, "q", 1000, 5000, b"in", 0, got)
    worker = wq.connect()
    assert wq.lease(worker, ["q"], 0, 1, Outcomes()).body == b"in"
    wq.fail(worker, U1, b"boom", 2)
    assert got.got == [(U1, 0, b"boom")]
    assert wq.find(U1) is None and not engine.jobs


def test_run_times_out_when_nobody_leased_it() -> None:
    engine, wq = make()
    got = Outcomes()
    wq.run(wq.connect(), U1, "q", 1000, 500, b"", 0, got)
    engine.tick(500)
    assert got.got == [TIMEOUT] and wq.find(U1) is None


def test_run_leased_at_wait_timeout_waits_for_the_ttr() -> None:
    engine, wq = make()
    got = Outcomes()
    wq.run(wq.connect(), U1, "q", 1000, 500, b"", 0, got)
    wq.lease(wq.connect(), ["q"], 0, 400, Outcomes())  # TTR ends at 1400
    engine.tick(500)
    assert got.got == []
    engine.tick(1399)
    assert got.got == []
    engine.tick(1400)
    assert got.got == [TIMEOUT] and not engine.jobs


def test_run_ttr_before_wait_timeout_requeues() -> None:
    engine, wq = make()
    got = Outcomes()
    wq.run(wq.connect(), U1, "q", 100, 5000, b"", 0, got)
    worker = wq.connect()
    wq.lease(worker, ["q"], 0, 0, Outcomes())
    engine.tick(100)
    job = wq.find(U1)
    assert job is not None and workq_state(job) == PENDING and got.got == []
    wq.lease(worker, ["q"], 0, 200, Outcomes())
    wq.complete(worker, U1, b"late", 250)
    assert got.got == [(U1, 1, b"late")]


def test_run_connection_closing_drops_its_job() -> None:
    engine, wq = make()
    conn = wq.connect()
    wait = wq.run(conn, U1, "q", 1000, 5000, b"", 0, Outcomes())
    wq.disconnect(conn, wait, 10)
    assert not engine.jobs and wq.clients == 0


def test_leases_outlive_their_connection() -> None:
    _engine, wq = make()
    worker = wq.connect()
    wq.add(worker, U1, "q", 1000, 60_000, b"", now=0)
    wq.lease(worker, ["q"], 0, 0, Outcomes())
    wq.disconnect(worker, None, 10)
    job = wq.find(U1)
    assert job is not None and workq_state(job) == LEASED
    wq.complete(wq.connect(), U1, b"", 20)


def test_fail_without_max_fails_is_final() -> None:
    _, wq = make()
    conn = wq.connect()
    job = wq.add(conn, U1, "q", 1000, 60_000, b"", now=0)
    wq.lease(conn, ["q"], 0, 0, Outcomes())
    wq.fail(conn, U1, b"bad", 1)
    assert workq_state(job) == FAILED and job.ext.fails == 1
    assert wq.result(U1, 0, 2, Outcomes()) == (U1, 0, b"bad")
