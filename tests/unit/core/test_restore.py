"""restore(): folding records back into an engine (no I/O, fake clock)."""

from __future__ import annotations

import json
from typing import ClassVar

import pytest

from beanpod.core.engine import Engine
from beanpod.core.job import EXT_DECODERS, JobState, MoveCheck
from beanpod.core.pqueue import COMPACT_IDS
from beanpod.durability.records import (
    decode,
    encode_delete,
    encode_next_id,
    encode_pause,
    encode_put,
    encode_state,
    encode_update,
)
from beanpod.durability.restore import RestoreError, restore

T0 = 1_800_000_000_000


class Extra:
    KIND: ClassVar[int] = 902

    def __init__(self, data: bytes) -> None:
        self.data = data

    def encode(self) -> bytes:
        return self.data


def record_all(engine: Engine) -> list[tuple[int, object]]:
    """A journal that keeps decoded records, as the WAL would replay them."""
    log: list[tuple[int, object]] = []

    class Journal:
        def record_put(self, job):  # type: ignore[no-untyped-def]
            log.append((1, decode(encode_put(job))))

        def record_update(self, job):  # type: ignore[no-untyped-def]
            log.append((1, decode(encode_update(job))))

        def record_delete(self, job):  # type: ignore[no-untyped-def]
            log.append((1, decode(encode_delete(job.id))))

        def record_pause(self, tube):  # type: ignore[no-untyped-def]
            log.append((1, decode(encode_pause(tube))))

        def room(self, nbytes):  # type: ignore[no-untyped-def]
            return True

    engine.journal = Journal()  # type: ignore[assignment]
    return log


def replay(log: list[tuple[int, object]], now: int) -> Engine:
    fresh = Engine(MoveCheck())
    restore(fresh, log, now)  # type: ignore[arg-type]
    return fresh


def test_every_state_comes_back() -> None:
    engine = Engine(MoveCheck())
    log = record_all(engine)
    conn = engine.connect()
    t = engine.tube("t")
    ready = engine.put(None, t, 7, 0, 5000, b"r", T0)
    delayed = engine.put(None, t, 8, 60_000, 5000, b"d", T0)
    buried = engine.put(None, t, 9, 0, 5000, b"b", T0)
    reserved = engine.put(None, t, 1, 0, 5000, b"x", T0)
    gone = engine.put(None, t, 1, 0, 5000, b"g", T0)
    engine.delete(None, gone.id, T0)
    conn.watch = [t]
    assert engine.reserve(conn, 0, T0, lambda _: None) is reserved
    engine.reserve_job(conn, buried.id, T0)
    engine.bury(conn, buried.id, 3, T0)
    back = replay(log, T0 + 1000)
    states = {j.id: (j.state, j.pri) for j in back.jobs.values()}
    assert states == {
        ready.id: (JobState.READY, 7), delayed.id: (JobState.DELAYED, 8),
        buried.id: (JobState.BURIED, 3), reserved.id: (JobState.READY, 1),
    }  # fmt: skip
    assert back.jobs[delayed.id].deadline == T0 + 60_000  # wall-clock due time kept
    assert back.jobs[buried.id].buries == 1 and back.jobs[reserved.id].body == b"x"
    assert back.next_id == gone.id + 1
    assert back.counts.ready == 2 and back.counts.delayed == 1 and back.counts.buried == 1
    assert back.tubes["t"].jobs == 4


def test_release_with_zero_delay_keeps_its_priority_and_delayed_release_its_due() -> None:
    engine = Engine(MoveCheck())
    log = record_all(engine)
    conn = engine.connect()
    a = engine.put(None, engine.default_tube, 100, 0, 5000, b"a", T0)
    b = engine.put(None, engine.default_tube, 200, 0, 5000, b"b", T0)
    engine.reserve(conn, 0, T0, lambda _: None)
    engine.release(conn, a.id, 5, 0, T0)
    engine.reserve_job(conn, b.id, T0)
    engine.release(conn, b.id, 6, 30_000, T0 + 10)
    back = replay(log, T0 + 20)
    assert (back.jobs[a.id].state, back.jobs[a.id].pri, back.jobs[a.id].releases) == (
        JobState.READY, 5, 1)  # fmt: skip
    assert (back.jobs[b.id].state, back.jobs[b.id].deadline) == (JobState.DELAYED, T0 + 30_010)


def test_due_delayed_jobs_become_ready_at_the_first_tick() -> None:
    engine = Engine(MoveCheck())
    log = record_all(engine)
    job = engine.put(None, engine.default_tube, 0, 1000, 5000, b"d", T0)
    back = replay(log, T0 + 5000)
    back.tick(T0 + 5000)
    assert back.jobs[job.id].state is JobState.READY


def test_ids_continue_above_the_watermark() -> None:
    back = replay([(1, decode(encode_next_id(500)))], T0)
    assert back.next_id == 500


def test_kicks_and_pauses() -> None:
    engine = Engine(MoveCheck())
    log = record_all(engine)
    conn = engine.connect()
    job = engine.put(None, engine.default_tube, 0, 0, 5000, b"k", T0)
    engine.reserve(conn, 0, T0, lambda _: None)
    engine.bury(conn, job.id, 0, T0)
    assert engine.kick(None, engine.default_tube, 5, T0) == 1
    engine.pause_tube(None, "default", 60_000, T0)
    back = replay(log, T0 + 1000)
    assert (back.jobs[job.id].state, back.jobs[job.id].kicks) == (JobState.READY, 1)
    assert back.default_tube.pause_until == T0 + 60_000
    assert replay(log, T0 + 61_000).default_tube.pause_ms == 0  # expired while down


def test_extensions_survive_and_unknown_kinds_are_refused() -> None:
    engine = Engine(MoveCheck())
    log = record_all(engine)
    engine.put(None, engine.default_tube, 0, 0, 5000, b"e", T0, ext=Extra(b"payload"))
    with pytest.raises(RestoreError, match="902"):
        replay(log, T0)
    EXT_DECODERS[Extra.KIND] = Extra
    try:
        ext = replay(log, T0).jobs[1].ext
        assert isinstance(ext, Extra) and ext.data == b"payload"
    finally:
        del EXT_DECODERS[Extra.KIND]


def test_extension_bytes_that_do_not_decode_are_a_restore_error() -> None:
    """A decoder's own error (bad JSON, short struct) is one line, not a traceback."""
    engine = Engine(MoveCheck())
    log = record_all(engine)
    engine.put(None, engine.default_tube, 0, 0, 5000, b"e", T0, ext=Extra(b"not json"))
    EXT_DECODERS[Extra.KIND] = lambda data: json.loads(data)
    try:
        with pytest.raises(RestoreError, match="kind 902 does not decode: Expecting value"):
            replay(log, T0)
    finally:
        del EXT_DECODERS[Extra.KIND]


def test_later_records_win_and_orphan_updates_are_ignored() -> None:
    engine = Engine(MoveCheck())
    log = record_all(engine)
    conn = engine.connect()
    job = engine.put(None, engine.default_tube, 0, 0, 5000, b"v", T0)
    engine.reserve(conn, 0, T0, lambda _: None)
    engine.bury(conn, job.id, 4, T0)
    update = log[-1]
    back = replay([update], T0)  # its put was in a dropped segment
    assert not back.jobs
    back = replay([*log, (2, decode(encode_put(job)))], T0)  # a migrated copy
    assert back.jobs[job.id].file == 2


def test_named_states_latest_wins_and_empty_removes() -> None:
    log = [
        (1, decode(encode_state("a", b"1"))),
        (1, decode(encode_state("b", b"2"))),
        (2, decode(encode_state("a", b"3"))),
        (3, decode(encode_state("b", b""))),
        (3, decode(encode_state("c", b""))),
    ]
    restored = restore(Engine(MoveCheck()), log, T0)  # type: ignore[arg-type]
    assert restored.states == {"a": (2, b"3")}


def test_buried_jobs_come_back_in_bury_order_not_id_order() -> None:
    """The index holds jobs by id; the bury order is each buried job's latest record
    (a kicked and re-buried job goes last, a deleted one leaves it)."""
    engine = Engine(MoveCheck())
    log = record_all(engine)
    conn = engine.connect()
    t, u = engine.tube("t"), engine.tube("u")
    jobs = [engine.put(None, t, 0, 0, 5000, b"%d" % i, T0) for i in range(5)]
    other = engine.put(None, u, 0, 0, 5000, b"u", T0)
    for job in (jobs[4], jobs[2], jobs[0], other, jobs[3], jobs[1]):
        engine.reserve_job(conn, job.id, T0)
        engine.bury(conn, job.id, 0, T0)
    assert engine.kick_job(None, jobs[2].id, T0)
    engine.reserve_job(conn, jobs[2].id, T0)
    engine.bury(conn, jobs[2].id, 0, T0)
    engine.delete(None, jobs[0].id, T0)
    want = [jobs[4].id, jobs[3].id, jobs[1].id, jobs[2].id]
    assert list(t.buried) == want
    back = replay(log, T0 + 1000)
    assert list(back.tubes["t"].buried) == want and list(back.tubes["u"].buried) == [other.id]
    assert list(back.jobs) == sorted(j.id for j in (*jobs[1:], other))


def test_ready_jobs_on_both_sides_of_the_compact_id_range_come_back_in_order() -> None:
    """Ids below and above COMPACT_IDS in one tube (keys of both forms at the restart):
    the tube's queue turns wide and serves (priority, id) order; its urgent count holds."""
    engine = Engine(MoveCheck())
    log = record_all(engine)
    engine.ids_above(COMPACT_IDS - 3)
    t = engine.tube("t")
    jobs = [engine.put(None, t, pri, 0, 5000, b"j", T0) for pri in (2000, 5, 2000, 5, 1023, 7)]
    assert jobs[0].id < COMPACT_IDS <= jobs[-1].id
    back = replay(log, T0)
    conn = back.connect()
    conn.watch = [back.tubes["t"]]
    assert back.counts.urgent == 4 and back.tubes["t"].urgent == 4
    order = [back.reserve(conn, 0, T0, lambda _: None).id for _ in jobs]  # type: ignore[union-attr]
    assert order == [j.id for j in sorted(jobs, key=lambda j: (j.pri, j.id))]
