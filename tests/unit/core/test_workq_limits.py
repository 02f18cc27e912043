"""TTR requeue, max-attempts, max-fails, TTL eviction, scheduled release (fake clock)."""

from __future__ import annotations

from beanpod.core.job import JobState
from beanpod.core.timers import TTR_EXPIRY
from beanpod.core.waiters import TIMED_OUT
from beanpod.core.workq import NOT_FOUND, TIMEOUT
from beanpod.core.workq.ext import FAILED, NEW, PENDING, workq_state
from tests.support.workq_engine import U1, U2, Outcomes, make


def test_ttr_expiry_requeues_as_pending_first_in_line() -> None:
    engine, wq = make()
    conn = wq.connect()
    job = wq.add(conn, U1, "q", 1000, 60_000, b"", now=0)
    wq.add(conn, U2, "q", 1000, 60_000, b"", now=0)
    wq.lease(conn, ["q"], 0, 0, Outcomes())
    engine.tick(999)
    assert job.state is JobState.RESERVED
    engine.tick(1000)
    assert workq_state(job) == PENDING and job.ext.attempts == 1
    assert engine.counts.job_timeouts == 1
    assert wq.lease(conn, ["q"], 0, 1000, Outcomes()) is job  # same priority, older id
    assert job.ext.attempts == 2


def test_max_attempts_fails_the_job_at_the_last_ttr_expiry() -> None:
    engine, wq = make()
    conn = wq.connect()
    job = wq.add(conn, U1, "q", 100, 60_000, b"", now=0, max_attempts=2)
    waiting = Outcomes()
    wq.result(U1, 10_000, 0, waiting)
    wq.lease(conn, ["q"], 0, 0, Outcomes())
    engine.tick(100)
    assert workq_state(job) == PENDING
    wq.lease(conn, ["q"], 0, 100, Outcomes())
    engine.tick(200)
    assert workq_state(job) == FAILED and job.ext.attempts == 2
    assert waiting.got == [(U1, 0, b"")]
    assert wq.lease(conn, ["q"], 0, 300, Outcomes()) is TIMED_OUT


def test_hard_cap_of_255_attempts_without_max_attempts() -> None:
    engine, wq = make()
    conn = wq.connect()
    job = wq.add(conn, U1, "q", 1, 10**9, b"", now=0)
    for now in range(255):
        assert wq.lease(conn, ["q"], 0, now, Outcomes()) is job
        engine.tick(now + 1)
    assert workq_state(job) == FAILED and job.ext.attempts == 255


def test_max_fails_retries_until_the_last_allowed_failure() -> None:
    _engine, wq = make()
    conn = wq.connect()
    job = wq.add(conn, U1, "q", 1000, 60_000, b"", now=0, max_fails=3)
    for n in (1, 2):
        wq.lease(conn, ["q"], 0, n, Outcomes())
        wq.fail(conn, U1, b"err%d" % n, n)
        assert workq_state(job) == PENDING and job.ext.fails == n
        assert job.ext.result == b""  # a retried failure's result is discarded
    wq.lease(conn, ["q"], 0, 3, Outcomes())
    wq.fail(conn, U1, b"err3", 3)
    assert workq_state(job) == FAILED and job.ext.fails == 3
    assert wq.result(U1, 0, 4, Outcomes()) == (U1, 0, b"err3")


def test_max_fails_retry_stops_when_attempts_are_used_up() -> None:
    _, wq = make()
    conn = wq.connect()
    job = wq.add(conn, U1, "q", 1000, 60_000, b"", now=0, max_attempts=1, max_fails=5)
    wq.lease(conn, ["q"], 0, 0, Outcomes())
    wq.fail(conn, U1, b"x", 1)
    assert workq_state(job) == FAILED


def test_a_retried_failure_wakes_a_parked_lease() -> None:
    _, wq = make()
    a, b = wq.connect(), wq.connect()
    job = wq.add(a, U1, "q", 1000, 60_000, b"", now=0, max_fails=2)
    wq.lease(a, ["q"], 0, 0, Outcomes())
    got = Outcomes()
    wq.lease(b, ["q"], 1000, 1, got)
    wq.fail(a, U1, b"", 2)
    assert got.got == [job] and job.ext.attempts == 2


def test_ttl_evicts_unfinished_jobs_in_every_state() -> None:
    engine, wq = make()
    conn = wq.connect()
    wq.add(conn, U1, "q", 1000, 500, b"", now=0)  # ready
    wq.add(conn, U2, "q", 100_000, 500, b"", now=0)
    wq.lease(conn, ["q"], 0, 0, Outcomes())  # U1 leased
    waiting = Outcomes()
    wq.result(U2, 10_000, 0, waiting)
    engine.tick(499)
    assert len(engine.jobs) == 2
    engine.tick(500)
    assert not engine.jobs and wq.evicted == 2 and not wq.index
    assert waiting.got == [NOT_FOUND]
    assert engine.counts.ready == engine.counts.reserved == 0


def test_ttl_ends_a_finished_jobs_result_without_counting_an_eviction() -> None:
    engine, wq = make()
    conn = wq.connect()
    wq.add(conn, U1, "q", 1000, 500, b"", now=0)
    wq.complete(conn, U1, b"r", 10)
    assert engine.counts.buried == engine.counts.ready == 0  # finished: in no queue
    assert engine.tubes["q"].jobs == 1
    engine.tick(500)
    assert wq.find(U1) is None and wq.evicted == 0 and "q" not in engine.tubes


def test_a_job_buried_through_beanstalkd_reads_as_failed_until_kicked() -> None:
    engine, wq = make()
    wq.add(wq.connect(), U1, "q", 1000, 60_000, b"", now=0)
    bean = engine.connect()
    engine.watch(bean, "q")
    job = engine.reserve(bean, 0, 1, Outcomes())
    engine.bury(bean, job.id, 0, 2)
    assert workq_state(job) == FAILED and wq.result(U1, 0, 3, Outcomes()) == (U1, 0, b"")
    engine.kick_job(bean, job.id, 4)
    assert workq_state(job) == NEW  # attempts count Workq leases only


def test_scheduled_job_becomes_ready_at_its_time_and_ttl_counts_from_then() -> None:
    engine, wq = make()
    conn = wq.connect()
    job = wq.add(conn, U1, "q", 1000, 2000, b"", now=0, at=5000)
    assert job.state is JobState.DELAYED and workq_state(job) == NEW
    assert wq.lease(conn, ["q"], 0, 4999, Outcomes()) is TIMED_OUT
    engine.tick(4999)
    assert job.state is JobState.DELAYED
    engine.tick(5000)
    assert job.state is JobState.READY
    engine.tick(6999)
    assert wq.find(U1) is job
    engine.tick(7000)
    assert wq.find(U1) is None and wq.evicted == 1


def test_scheduled_in_the_past_is_ready_at_once() -> None:
    _, wq = make()
    job = wq.add(wq.connect(), U1, "q", 1000, 60_000, b"", now=10_000, at=9000)
    assert job.state is JobState.READY and job.ext.expires == 69_000


def test_a_parked_lease_gets_a_scheduled_job_when_it_is_due() -> None:
    engine, wq = make()
    conn = wq.connect()
    job = wq.add(conn, U1, "q", 1000, 60_000, b"", now=0, at=300)
    got = Outcomes()
    assert wq.lease(conn, ["q"], 1000, 0, got) is None
    engine.tick(300)
    assert got.got == [job]


def test_timeout_answers_run_even_when_result_waits_too() -> None:
    engine, wq = make()
    run = Outcomes()
    wq.run(wq.connect(), U1, "q", 1000, 200, b"", 0, run)
    other = Outcomes()
    wq.result(U1, 5000, 0, other)
    engine.tick(200)
    assert run.got == [TIMEOUT] and other.got == [NOT_FOUND]


def test_workq_hooks_the_engines_expiry_instead_of_replacing_its_handler() -> None:
    """The engine's TTR handler stays its own `expire`; Workq decides through its expire
    hook, and a plain job beside a Workq one still goes back to ready."""
    engine, wq = make()
    assert engine.timer_handlers[TTR_EXPIRY] == engine.expire and len(engine.expire_hooks) == 1
    conn = wq.connect()
    job = wq.add(conn, U1, "q", 100, 60_000, b"", now=0, max_attempts=1)
    plain_conn = engine.connect()
    plain = engine.put(plain_conn, engine.tube("p"), 0, 0, 100, b"", 0)
    engine.reserve_job(plain_conn, plain.id, 0)
    wq.lease(conn, ["q"], 0, 0, Outcomes())
    engine.tick(100)
    assert workq_state(job) == FAILED and plain.state is JobState.READY
    assert (job.timeouts, plain.timeouts, engine.counts.job_timeouts) == (1, 1, 2)
