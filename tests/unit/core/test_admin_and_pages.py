"""Operator moves (core/admin.py) and the admin API's listings (core/query.py pages)."""

from __future__ import annotations

from beanpod.core import admin, query
from beanpod.core.engine import Engine
from beanpod.core.job import Job, MoveCheck

S = 1000


class Recorder:
    """A journal that records what it is told and can run out of room."""

    def __init__(self) -> None:
        self.records: list[tuple[str, int]] = []
        self.full = False

    def record_put(self, job: Job) -> None:
        self.records.append(("put", job.id))

    def record_update(self, job: Job) -> None:
        self.records.append(("update", job.id))

    def record_delete(self, job: Job) -> None:
        self.records.append(("delete", job.id))

    def record_pause(self, tube: object) -> None:
        self.records.append(("pause", 0))

    def record_state(self, key: str, value: bytes) -> None: ...

    def states(self, prefix: str) -> dict[str, bytes]:
        return {}

    def room(self, nbytes: int) -> bool:
        return not self.full


def buried_tube(n: int) -> tuple[Engine, list[int]]:
    engine = Engine(MoveCheck())
    conn = engine.connect()
    tube = engine.use(conn, "work")
    engine.watch(conn, "work")
    engine.ignore(conn, "default")
    ids = []
    for i in range(n):
        job = engine.put(conn, tube, 10, 0, 60 * S, b"body %d" % i, 0)
        assert engine.reserve(conn, 0, 0, lambda _: None) is job
        engine.bury(conn, job.id, 10, 0)
        ids.append(job.id)
    return engine, ids


def test_candidates_and_matches_select_a_filter() -> None:
    engine, ids = buried_tube(30)
    flt = query.JobFilter("work", "buried", contains=b"body 1")
    assert query.candidate_ids(engine, flt) == ids  # every buried id, oldest first
    expected = [i for n, i in enumerate(ids) if b"body 1" in b"body %d" % n]
    assert [i for i in ids if query.matches(engine, flt, i)] == expected
    assert not query.matches(engine, query.JobFilter("work", "ready"), ids[0])
    assert not query.matches(engine, query.JobFilter("other", "buried"), ids[0])
    assert query.candidate_ids(engine, query.JobFilter("nope", "buried")) == []


def test_kick_bury_delete_move_are_journalled_moves() -> None:
    engine, ids = buried_tube(3)
    journal = Recorder()
    engine.journal = journal
    a, b, c = ids
    assert admin.kick_job(engine, None, a, 1 * S) is admin.Outcome.DONE
    assert query.where(engine, a) == ("work", "ready")
    operator = admin.operator_conn(engine)
    assert admin.bury(engine, operator, a, 2 * S) is admin.Outcome.DONE
    assert query.where(engine, a) == ("work", "buried")
    assert admin.delete(engine, b, 3 * S) is admin.Outcome.DONE
    assert query.where(engine, b) is None
    outcome, copy = admin.move(engine, c, "elsewhere", 4 * S)
    assert outcome is admin.Outcome.DONE and copy is not None
    assert query.where(engine, copy.id) == ("elsewhere", "ready") and query.where(engine, c) is None
    assert journal.records == [("update", a), ("update", a), ("delete", b), ("put", copy.id),
                               ("delete", c)]  # fmt: skip
    assert engine.counts.conns == 1 and engine.counts.workers == 1  # the operator is no client


def test_full_disk_changes_nothing() -> None:
    engine, (a, b, _) = buried_tube(3)
    journal = Recorder()
    journal.full = True
    engine.journal = journal
    assert admin.kick_job(engine, None, a, 0) is admin.Outcome.NO_ROOM
    assert admin.move(engine, b, "x", 0)[0] is admin.Outcome.NO_ROOM
    assert admin.kick(engine, None, engine.tubes["work"], 10, 0) == 0
    assert admin.pause(engine, None, "work", 5 * S, 0) is admin.Outcome.NO_ROOM
    assert journal.records == [] and query.where(engine, a) == ("work", "buried")


def test_refusals() -> None:
    engine, (a, _, _) = buried_tube(3)
    assert admin.kick_job(engine, None, 999, 0) is admin.Outcome.NOT_FOUND
    assert admin.bury(engine, admin.operator_conn(engine), a, 0) is admin.Outcome.NOT_FOUND
    conn = engine.connect()
    job = engine.put(conn, engine.default_tube, 1, 0, 60 * S, b"x", 0)
    assert engine.reserve(conn, 0, 0, lambda _: None) is job
    assert admin.delete(engine, job.id, 0) is admin.Outcome.HELD
    assert not admin.valid_tube_name("-bad") and admin.valid_tube_name("good.tube")
    engine.draining = True
    assert admin.move(engine, a, "elsewhere", 0)[0] is admin.Outcome.DRAINING
