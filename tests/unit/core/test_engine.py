"""Engine semantics with a fake clock: no sockets, no sleeps."""

from __future__ import annotations

from typing import Any

import pytest

from beanpod.core.engine import Engine
from beanpod.core.job import JobState, MoveCheck
from beanpod.core.pqueue import COMPACT_IDS
from beanpod.core.waiters import DEADLINE_SOON, TIMED_OUT

S = 1000  # one second in engine milliseconds


class Outcomes:
    """Collects what the engine delivers to parked reserves."""

    def __init__(self) -> None:
        self.got: list[Any] = []

    def __call__(self, outcome: Any) -> None:
        self.got.append(outcome)


@pytest.fixture
def engine() -> Engine:
    return Engine(MoveCheck())


def put(engine: Engine, conn: Any, pri: int = 100, delay: int = 0, ttr: int = 10 * S,
        body: bytes = b"x", now: int = 0) -> int:  # fmt: skip
    return engine.put(conn, conn.use, pri, delay, ttr, body, now).id


def test_reserve_orders_by_priority_then_id_across_watched_tubes(engine: Engine) -> None:
    p = engine.connect()
    a = put(engine, p, pri=5)
    engine.use(p, "other")
    b = put(engine, p, pri=1)
    c = put(engine, p, pri=5)
    w = engine.connect()
    engine.watch(w, "other")
    order = [engine.reserve(w, 0, 0, Outcomes()).id for _ in range(3)]
    assert order == [b, a, c]


def test_released_job_keeps_its_place_by_id(engine: Engine) -> None:
    p = engine.connect()
    first, second = put(engine, p), put(engine, p)
    w = engine.connect()
    job = engine.reserve(w, 0, 0, Outcomes())
    assert job.id == first
    assert engine.release(w, first, 100, 0, 0)
    assert engine.reserve(w, 0, 0, Outcomes()).id == first
    assert engine.jobs[second].state is JobState.READY


def test_reserve_with_timeout_zero_times_out_at_once(engine: Engine) -> None:
    w = engine.connect()
    assert engine.reserve(w, 0, 0, Outcomes()) is TIMED_OUT
    assert engine.counts.waiting == 0


def test_parked_reserve_gets_the_next_put(engine: Engine) -> None:
    w, p = engine.connect(), engine.connect()
    got = Outcomes()
    assert engine.reserve(w, None, 0, got) is None
    assert engine.counts.waiting == 1 and engine.default_tube.waiting == 1
    job_id = put(engine, p, now=5)
    assert [j.id for j in got.got] == [job_id]
    assert engine.counts.waiting == 0 and engine.jobs[job_id].state is JobState.RESERVED


def test_parked_reserves_are_served_in_arrival_order(engine: Engine) -> None:
    first, second, p = engine.connect(), engine.connect(), engine.connect()
    got1, got2 = Outcomes(), Outcomes()
    engine.reserve(first, None, 0, got1)
    engine.reserve(second, None, 0, got2)
    a, b = put(engine, p), put(engine, p)
    assert [j.id for j in got1.got] == [a]
    assert [j.id for j in got2.got] == [b]


def test_reserve_timeout_fires_from_tick(engine: Engine) -> None:
    w = engine.connect()
    got = Outcomes()
    engine.reserve(w, 2 * S, 0, got)
    assert engine.tick(1999) == 2000
    assert got.got == []
    engine.tick(2000)
    assert got.got == [TIMED_OUT]
    assert engine.counts.waiting == 0


def test_ttr_expiry_releases_on_time_without_any_command(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    job_id = put(engine, p, ttr=3 * S)
    engine.reserve(w, None, 0, Outcomes())
    assert engine.next_deadline() == 3 * S
    engine.tick(3 * S - 1)
    assert engine.jobs[job_id].state is JobState.RESERVED
    engine.tick(3 * S)
    job = engine.jobs[job_id]
    assert job.state is JobState.READY and job.timeouts == 1
    assert engine.counts.job_timeouts == 1 and not w.reserved


def test_deadline_soon_when_reserving_inside_the_margin(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    put(engine, p, ttr=2 * S)
    engine.reserve(w, None, 0, Outcomes())
    assert engine.reserve(w, None, 500, Outcomes()) is None  # parked: margin starts at 1000
    engine.cancel_wait(w)
    assert engine.reserve(w, None, 1000, Outcomes()) is DEADLINE_SOON


def test_ready_job_beats_deadline_soon(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    put(engine, p, ttr=1 * S)
    second = put(engine, p)
    engine.reserve(w, None, 0, Outcomes())
    assert engine.reserve(w, None, 0, Outcomes()).id == second


def test_blocked_reserve_gets_deadline_soon_when_margin_arrives(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    job_id = put(engine, p, ttr=5 * S)
    engine.reserve(w, None, 0, Outcomes())
    got = Outcomes()
    assert engine.reserve(w, None, 100, got) is None
    assert engine.next_deadline() == 4 * S
    engine.tick(4 * S)
    assert got.got == [DEADLINE_SOON]
    assert engine.jobs[job_id].state is JobState.RESERVED
    assert engine.delete(w, job_id, 4 * S)


def test_margin_comes_from_the_soonest_of_several_reservations(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    put(engine, p, ttr=10 * S)
    put(engine, p, ttr=3 * S)
    engine.reserve(w, None, 0, Outcomes())
    engine.reserve(w, None, 0, Outcomes())
    got = Outcomes()
    engine.reserve(w, 60 * S, 0, got)
    engine.tick(2 * S)
    assert got.got == [DEADLINE_SOON]


def test_touch_restarts_the_full_ttr(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    job_id = put(engine, p, ttr=3 * S)
    engine.reserve(w, None, 0, Outcomes())
    assert engine.touch(w, job_id, 2 * S)
    engine.tick(3 * S)
    assert engine.jobs[job_id].state is JobState.RESERVED
    engine.tick(5 * S)
    assert engine.jobs[job_id].state is JobState.READY


def test_other_connection_cannot_touch_delete_release_or_bury(engine: Engine) -> None:
    p, w, other = engine.connect(), engine.connect(), engine.connect()
    job_id = put(engine, p)
    engine.reserve(w, None, 0, Outcomes())
    assert not engine.touch(other, job_id, 0)
    assert not engine.delete(other, job_id, 0)
    assert not engine.release(other, job_id, 1, 0, 0)
    assert not engine.bury(other, job_id, 1, 0)
    assert engine.delete(w, job_id, 0)


def test_delayed_job_becomes_ready_when_due(engine: Engine) -> None:
    p = engine.connect()
    job_id = put(engine, p, delay=2 * S)
    assert engine.jobs[job_id].state is JobState.DELAYED
    assert engine.counts.delayed == 1
    engine.tick(2 * S)
    assert engine.jobs[job_id].state is JobState.READY
    assert engine.counts.delayed == 0 and engine.counts.ready == 1


def test_kick_prefers_buried_then_delayed(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    delayed = put(engine, p, delay=100 * S)
    buried = put(engine, p)
    engine.reserve(w, None, 0, Outcomes())
    engine.bury(w, buried, 7, 0)
    assert engine.kick(p, p.use, 10, 0) == 1
    assert engine.jobs[buried].state is JobState.READY
    assert engine.jobs[buried].kicks == 1 and engine.jobs[buried].pri == 7
    assert engine.kick(p, p.use, 10, 0) == 1
    assert engine.jobs[delayed].state is JobState.READY


def test_buried_list_is_fifo_by_bury_time(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    a, b = put(engine, p), put(engine, p)
    engine.reserve(w, None, 0, Outcomes())
    engine.reserve(w, None, 0, Outcomes())
    engine.bury(w, b, 1, 0)
    engine.bury(w, a, 1, 0)
    assert engine.peek_buried(p.use).id == b


def test_kick_job_works_on_any_tube_and_only_buried_or_delayed(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    engine.use(p, "elsewhere")
    ready = put(engine, p)
    delayed = put(engine, p, delay=S)
    assert not engine.kick_job(w, ready, 0)
    assert engine.kick_job(w, delayed, 0)
    assert not engine.kick_job(w, 999, 0)


def test_closing_returns_reserved_jobs_without_counting(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    job_id = put(engine, p)
    engine.reserve(w, None, 0, Outcomes())
    engine.disconnect(w, 0)
    job = engine.jobs[job_id]
    assert job.state is JobState.READY
    assert (job.releases, job.timeouts) == (0, 0)


def test_pause_blocks_reserves_until_it_ends(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    job_id = put(engine, p)
    assert engine.pause_tube(p, "default", 5 * S, 0)
    got = Outcomes()
    assert engine.reserve(w, None, 0, got) is None
    engine.tick(5 * S)
    assert [j.id for j in got.got] == [job_id]


def test_pause_zero_unpauses_and_wakes_waiters(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    put(engine, p)
    engine.pause_tube(p, "default", 60 * S, 0)
    got = Outcomes()
    engine.reserve(w, None, 0, got)
    engine.pause_tube(p, "default", 0, 1)
    assert len(got.got) == 1
    assert not engine.pause_tube(p, "missing", 1, 0)


def test_tubes_vanish_when_unreferenced_in_swap_remove_order(engine: Engine) -> None:
    c = engine.connect()
    for name in ("a", "b", "c"):
        engine.watch(c, name)
    assert [t.name for t in engine.tube_list] == ["default", "a", "b", "c"]
    engine.ignore(c, "a")
    assert [t.name for t in engine.tube_list] == ["default", "c", "b"]
    assert [t.name for t in c.watch] == ["default", "c", "b"]
    engine.use(c, "b")
    engine.ignore(c, "b")
    assert "b" in engine.tubes  # still used
    engine.use(c, "default")
    assert "b" not in engine.tubes


def test_tube_with_jobs_survives_without_connections(engine: Engine) -> None:
    c = engine.connect()
    engine.use(c, "keep")
    job_id = put(engine, c)
    engine.disconnect(c, 0)
    assert "keep" in engine.tubes
    other = engine.connect()
    engine.delete(other, job_id, 0)
    assert "keep" not in engine.tubes


def test_ignore_last_tube_is_refused(engine: Engine) -> None:
    c = engine.connect()
    assert engine.ignore(c, "default") is None
    assert engine.ignore(c, "never-watched") == 1
    assert "never-watched" not in engine.tubes


def test_reserve_job_takes_any_unreserved_job(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    delayed = put(engine, p, delay=S)
    assert engine.reserve_job(w, delayed, 0).id == delayed
    assert engine.reserve_job(w, delayed, 0) is None
    assert engine.counts.delayed == 0 and engine.counts.reserved == 1


def test_counters_track_every_state(engine: Engine) -> None:
    p, w = engine.connect(), engine.connect()
    ids = [put(engine, p, pri=pri) for pri in (1, 2000, 3)]
    put(engine, p, delay=S)
    n = engine.counts
    assert (n.ready, n.urgent, n.delayed) == (3, 2, 1)
    engine.reserve(w, None, 0, Outcomes())
    assert (n.ready, n.urgent, n.reserved) == (2, 1, 1)
    engine.bury(w, ids[0], 5000, 0)
    assert (n.reserved, n.buried) == (0, 1)
    engine.delete(p, ids[0], 0)
    assert n.buried == 0 and engine.default_tube.cmd_delete == 1
    assert n.total_jobs == 4


def test_many_stale_heap_entries_are_compacted(engine: Engine) -> None:
    p = engine.connect()
    ids = [put(engine, p, delay=S) for _ in range(5000)]
    for job_id in ids:
        engine.delete(p, job_id, 0)
    assert len(engine.timers) == 0
    assert engine.timers.stored < 5000
    assert p.use.delayed.stored < 200


def test_watched_tubes_of_both_key_forms_serve_priority_then_id(engine: Engine) -> None:
    """A tube whose ready keys turned wide (an id past the compact range) and one still
    compact: a connection watching both reserves by (priority, id) across them."""
    conn = engine.connect()
    small, wide = engine.tube("small"), engine.tube("wide")
    made = [engine.put(None, small, pri, 0, 5000, b"s", 0) for pri in (3, 9, 1)]
    engine.ids_above(COMPACT_IDS)
    made += [engine.put(None, wide, pri, 0, 5000, b"w", 0) for pri in (3, 1, 9, 0)]
    assert wide.ready._wide and not small.ready._wide
    conn.watch = [small, wide]
    order = [engine.reserve(conn, 0, 0, lambda _: None).id for _ in made]  # type: ignore[union-attr]
    assert order == [j.id for j in sorted(made, key=lambda j: (j.pri, j.id))]
