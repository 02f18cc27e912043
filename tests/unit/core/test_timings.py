"""Wait (put -> first reserve) and run (reserve -> delete) histograms kept by the engine."""

from __future__ import annotations

from beanpod.core import query
from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.core.timings import BOUNDS_MS, FIRST_BOUND_MS, OTHER, Histogram, JobTimings

S = 1000


def test_a_value_on_a_bound_counts_in_that_bucket() -> None:
    engine = Engine(MoveCheck())
    engine.keep_timings(JobTimings())
    conn = engine.connect()
    for waited in (0, 5, 6, 3600000, 3600001):
        job = engine.put(conn, conn.use, 0, 0, 60 * S, b"x", 0)
        assert engine.reserve_job(conn, job.id, waited) is job
    engine.timings.fold()
    hist = engine.timings.waits["default"]
    counts = hist.cumulative()
    assert counts[0] == 2  # le=0.005 s holds 0 and 5 ms
    assert counts[1] == 3  # 6 ms is in le=0.01
    assert counts[len(BOUNDS_MS) - 1] == 4  # the hour bound holds exactly an hour
    assert counts[-1] == 5 and hist.sum_ms == 7200012 and len(hist.pending) == 0


def test_engine_observes_first_wait_and_each_run() -> None:
    engine = Engine(MoveCheck())
    engine.keep_timings(JobTimings())
    conn = engine.connect()
    engine.watch(conn, "default")
    job = engine.put(conn, conn.use, 0, 0, 60 * S, b"x", 0)
    assert engine.reserve(conn, 0, 30, lambda _: None) is job
    engine.release(conn, job.id, 0, 0, 50)
    assert engine.reserve(conn, 0, 80, lambda _: None) is job  # not a first reserve
    assert engine.delete(conn, job.id, 200)
    timings = query.timings(engine)
    assert timings is not None
    timings.fold()
    wait, run = timings.waits["default"], timings.runs["default"]
    assert (wait.cumulative()[-1], wait.sum_ms) == (1, 30)
    assert (run.cumulative()[-1], run.sum_ms) == (1, 120)  # the second reservation, 80 -> 200


def test_a_tally_counts_short_times_and_keeps_longer_ones_until_the_fold() -> None:
    assert BOUNDS_MS[0] == FIRST_BOUND_MS
    hist = Histogram()
    times = [0, 3, 5, 6, 5, 120, 4000, 3600001, 1]
    for ms in times:
        hist.pending.add(ms)
    assert (hist.pending.fast, hist.pending.fast_ms) == (5, 14)
    assert sorted(hist.pending.slow) == [6, 120, 4000, 3600001] and len(hist.pending) == 9
    hist.fold()
    assert len(hist.pending) == 0 and hist.pending.fast_ms == 0
    assert hist.sum_ms == sum(times)
    assert hist.cumulative() == [5, 6, 6, 7, 7, 8, 8, 8, 8, 8, 9]
    hist.pending.add(2)
    hist.fold()
    assert (hist.cumulative()[0], hist.cumulative()[-1], hist.sum_ms) == (6, 10, sum(times) + 2)


def test_held_time_counts_from_the_reserve_not_a_later_touch() -> None:
    engine = Engine(MoveCheck())
    engine.keep_timings(JobTimings())
    conn = engine.connect()
    job = engine.put(conn, conn.use, 0, 0, 60 * S, b"x", 1000)
    assert engine.reserve_job(conn, job.id, 1400) is job
    assert engine.touch(conn, job.id, 1700)
    [view] = query.held(engine, 2000)
    assert view.holder is not None and view.holder.held_ms == 600
    assert engine.delete(conn, job.id, 2500)
    engine.timings.fold()
    assert engine.timings.runs["default"].sum_ms == 1100
    assert engine.timings.waits["default"].sum_ms == 400


def test_deleting_an_unreserved_job_is_no_run() -> None:
    engine = Engine(MoveCheck())
    engine.keep_timings(JobTimings())
    conn = engine.connect()
    job = engine.put(conn, conn.use, 0, 0, 60 * S, b"x", 0)
    assert engine.delete(conn, job.id, 10)
    engine.timings.fold()
    assert engine.timings.runs["default"].cumulative()[-1] == 0


def test_tubes_past_the_limit_share_other() -> None:
    engine = Engine(MoveCheck())
    engine.keep_timings(JobTimings(max_tubes=3))  # "default" has its own too
    conn = engine.connect()
    for name in ("a", "b", "c", "d", "a"):
        job = engine.put(conn, engine.use(conn, name), 0, 0, 60 * S, b"x", 0)
        assert engine.reserve_job(conn, job.id, 1) is job
    engine.timings.fold()
    waits = engine.timings.waits
    assert sorted(waits) == [OTHER, "a", "b", "default"]
    assert waits[OTHER].cumulative()[-1] == 2
    assert waits["a"].cumulative()[-1] == 2


def test_off_by_default() -> None:
    engine = Engine(MoveCheck())
    conn = engine.connect()
    engine.put(conn, conn.use, 0, 0, 60 * S, b"x", 0)
    assert engine.reserve(conn, 0, 5, lambda _: None) is not None
    assert query.timings(engine) is None


def test_tube_view_totals_and_head_age() -> None:
    engine = Engine(MoveCheck())
    conn = engine.connect()
    engine.watch(conn, "default")
    tube = conn.use
    first = engine.put(conn, tube, 5, 0, 1 * S, b"a", 0)
    engine.put(conn, tube, 1, 0, 60 * S, b"b", 400)
    view = query.tube_view(engine, "default", 1000)
    assert view is not None and view.head_age_ms == 600  # pri 1 is next: put at 400
    reserved = engine.reserve(conn, 0, 1000, lambda _: None)
    assert reserved is not None
    engine.bury(conn, reserved.id, 1, 1000)
    engine.kick(conn, tube, 1, 1100)
    assert engine.reserve_job(conn, first.id, 1200) is first
    engine.tick(2200 + 1)  # its TTR (1 s) ran out
    view = query.tube_view(engine, "default", 2300)
    assert view is not None
    assert (view.buries, view.kicks, view.timeouts, view.held) == (1, 1, 1, 0)
