"""Every job state change is declared in TRANSITIONS.

beanstalkd, Workq and qless moves (and restarts from the log) are driven at random on one
engine; every old -> new pair that `move()` makes, and every removal, is recorded and
checked against the table. The engine's check is the recorder, so this test reads
the table itself rather than trusting the engine's check. A fixed tour shows the random
drive can reach the extension edges at all.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from beanpod.cli import serve as serve_command
from beanpod.core import job as job_states
from beanpod.core import query
from beanpod.core.engine import Engine
from beanpod.core.job import RESTART_STATES, TRANSITIONS, Job, JobState, MoveCheck
from beanpod.core.qless import Qless, QlessError
from beanpod.core.qless.api import call
from beanpod.core.qless.names import worker_of
from beanpod.core.workq import Workq, WorkqError
from beanpod.durability.records import NextIdRecord, Record, StateRecord, decode, encode_put
from beanpod.durability.restore import restore
from beanpod.server import app

Pair = tuple[JobState | None, JobState | None, bool]  # old, new (None: removed), restarting
S = JobState
R, D, V, B, DEP, DONE, REC = (
    S.READY,
    S.DELAYED,
    S.RESERVED,
    S.BURIED,
    S.DEPENDS,
    S.COMPLETE,
    S.RECUR,
)
QUEUES = st.sampled_from(["q", "r"])
PICK = st.integers(0, 60)


def declared(pair: Pair) -> bool:
    """The table's answer, read here independently of `check_move`."""
    old, new, restarting = pair
    if restarting and (old is None or old is new):
        return new in RESTART_STATES  # re-created from the log, or re-placed after it
    return new in TRANSITIONS[old]


class MoveLog(MoveCheck):
    """Stands in for the engine's check (`Engine(check=...)`): records each pair instead
    of judging it. A removal (destroy) is no move: `note_removals` finds the jobs gone
    since it last looked, each removed from the state it was last moved to."""

    __slots__ = ("pairs", "placed")

    def __init__(self) -> None:
        super().__init__()
        self.pairs: set[Pair] = set()
        # id(job) -> the job and the state it was last moved to
        self.placed: dict[int, tuple[Job, JobState]] = {}

    def __call__(self, job: Job, new: JobState) -> None:
        old = getattr(job, "state", None)
        self.pairs.add((old, new, self.restarting))
        self.placed[id(job)] = (job, new)

    def note_removals(self, engine: Engine) -> None:
        """Record (state, None) for each job moved before and now gone from `engine`."""
        jobs = engine.jobs
        for key, (job, state) in list(self.placed.items()):
            if jobs.get(job.id) is not job:
                self.pairs.add((state, None, False))
                del self.placed[key]

    def restarted(self, engine: Engine) -> None:
        """`engine` is left for a new one, which re-creates its jobs by moves: its jobs
        are not removed."""
        self.note_removals(engine)
        self.placed.clear()

    def undeclared(self) -> list[Pair]:
        return sorted((p for p in self.pairs if not declared(p)), key=repr)


@pytest.fixture
def move_log() -> Iterator[MoveLog]:
    yield MoveLog()


class MemoryJournal:
    """Keeps the named states (STATE records); jobs are snapshotted at a restart."""

    def __init__(self) -> None:
        self.state: dict[str, bytes] = {}

    def room(self, nbytes: int) -> bool:
        return True

    def record_put(self, job: Job) -> None: ...
    def record_update(self, job: Job) -> None: ...
    def record_delete(self, job: Job) -> None: ...
    def record_pause(self, tube: Any) -> None: ...

    def record_state(self, key: str, value: bytes) -> None:
        if value:
            self.state[key] = value
        else:
            self.state.pop(key, None)

    def states(self, prefix: str) -> dict[str, bytes]:
        return {k: v for k, v in self.state.items() if k.startswith(prefix)}


class Dialects:
    """One engine with both extensions, as server/app.py builds it."""

    def __init__(self, log: MoveLog, journal: MemoryJournal | None = None) -> None:
        self.log = log
        self.journal = journal or MemoryJournal()
        self.engine = Engine(check=log)
        self.engine.journal = self.journal
        self.q = Qless(self.engine)
        self.wq = Workq(self.engine)
        self.conns = [self.engine.connect() for _ in range(2)]
        self.now = 0
        self.uuids: list[bytes] = []
        self.jids: list[str] = []

    def restarted(self) -> Dialects:
        """A new engine restored from a snapshot of every live job (as compaction writes)."""
        records: list[tuple[int, Record]] = [
            (1, decode(encode_put(job))) for job in self.engine.jobs.values()
        ]
        records += [(1, StateRecord(k, v)) for k, v in self.journal.state.items()]
        records.append((1, NextIdRecord(self.engine.next_id)))
        self.log.restarted(self.engine)
        fresh = Dialects(self.log, self.journal)
        fresh.now, fresh.uuids, fresh.jids = self.now, self.uuids, self.jids
        restore(fresh.engine, records, self.now)
        fresh.q.reattach(self.now)
        fresh.wq.reattach(self.now)
        return fresh

    def free_conn(self, i: int) -> Any:
        conn = self.conns[i % len(self.conns)]
        self.engine.cancel_wait(conn)
        return conn

    def job_id(self, pick: int) -> int:
        ids = sorted(self.engine.jobs)
        return ids[pick % len(ids)] if ids else 0

    def qless(self, fn: str, *args: Any) -> Any:
        try:
            return call(self.q, fn, list(args), self.now)
        except QlessError:
            return None

    def workq(self, op: str, *args: Any) -> None:
        with contextlib.suppress(WorkqError):
            getattr(self.wq, op)(*args)


class StateTableMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.log = MoveLog()
        self.d = Dialects(self.log)

    # ---- beanstalkd ----------------------------------------------------------------

    @rule(i=st.integers(0, 1), delay=st.sampled_from([0, 0, 2000]))
    def put(self, i: int, delay: int) -> None:
        d = self.d
        d.engine.put(d.free_conn(i), d.engine.tube("q"), 10, delay, 5000, b"x", d.now)

    @rule(i=st.integers(0, 1))
    def reserve(self, i: int) -> None:
        d = self.d
        d.engine.watch(d.free_conn(i), "q")
        d.engine.reserve(d.free_conn(i), 0, d.now, lambda outcome: None)

    @rule(i=st.integers(0, 1), pick=PICK, op=st.sampled_from(
        ["release", "release_later", "bury", "kick_job", "delete", "reserve_job"]))  # fmt: skip
    def job_op(self, i: int, pick: int, op: str) -> None:
        d = self.d
        conn, job_id, e = d.free_conn(i), d.job_id(pick), d.engine
        mine = sorted(conn.reserved)  # release and bury need the connection's own job
        if mine and op in ("release", "release_later", "bury"):
            job_id = mine[pick % len(mine)]
        if op.startswith("release"):
            e.release(conn, job_id, 5, 1000 if op == "release_later" else 0, d.now)
        elif op == "bury":
            e.bury(conn, job_id, 5, d.now)
        elif op == "kick_job":
            e.kick_job(conn, job_id, d.now)
        elif op == "reserve_job":
            e.reserve_job(conn, job_id, d.now)
        else:
            e.delete(conn, job_id, d.now)

    # ---- Workq -----------------------------------------------------------------------

    @rule(later=st.booleans(), fails=st.sampled_from([0, 2]))
    def workq_add(self, later: bool, fails: int) -> None:
        d = self.d
        uuid = b"6ba7b810-9dad-41d1-80b4-%012x" % len(d.uuids)
        d.uuids.append(uuid)
        at = d.now + 1500 if later else None
        d.workq("add", None, uuid, "q", 3000, 20_000, b"w", d.now, 0, 0, fails, at)

    @rule(i=st.integers(0, 1))
    def workq_lease(self, i: int) -> None:
        d = self.d
        d.workq("lease", d.free_conn(i), ["q"], 0, d.now, lambda outcome: None)

    @rule(pick=PICK, op=st.sampled_from(["complete", "fail", "delete"]))
    def workq_finish(self, pick: int, op: str) -> None:
        d = self.d
        if d.uuids:
            uuid = d.uuids[pick % len(d.uuids)]
            args = (None, uuid, d.now) if op == "delete" else (None, uuid, b"r", d.now)
            d.workq(op, *args)

    # ---- qless -----------------------------------------------------------------------

    @rule(queue=QUEUES, delay=st.sampled_from([0, 0, 2]), dep=st.booleans(), pick=PICK,
          throttled=st.booleans())  # fmt: skip
    def qless_put(self, queue: str, delay: int, dep: bool, pick: int, throttled: bool) -> None:
        d = self.d
        reput = bool(d.jids) and pick % 3 == 0  # sometimes put an existing jid again
        jid = d.jids[pick % len(d.jids)] if reput else f"j{len(d.jids)}"
        opts: list[Any] = []
        if dep and d.jids:
            opts += ["depends", [d.jids[pick % len(d.jids)]]]
        if throttled:
            opts += ["throttles", ["t"]]
        if d.qless("put", "w", queue, jid, "k", {}, delay, *opts) is not None and not reput:
            d.jids.append(jid)

    @rule(queue=QUEUES, worker=st.sampled_from(["w1", "w2"]))
    def qless_pop(self, queue: str, worker: str) -> None:
        self.d.qless("pop", queue, worker, 2)

    @rule(pick=PICK, worker=st.sampled_from(["w1", "w2"]), op=st.sampled_from(
        ["complete", "complete_next", "fail", "retry", "cancel", "timeout", "unfail"]))  # fmt: skip
    def qless_job_op(self, pick: int, worker: str, op: str) -> None:
        d = self.d
        if not d.jids:
            return
        jid = d.jids[pick % len(d.jids)]
        running = [j for j in d.jids if (job := d.q.jobs.get(j)) is not None and job.state is V]
        if running and op in ("complete", "complete_next", "fail", "retry"):
            jid = running[pick % len(running)]  # these need a job a worker holds
            worker = worker_of(d.q.jobs[jid])
        got = d.qless("get", jid)
        queue = got["queue"] if got else "q"
        if op == "complete":
            d.qless("complete", jid, worker, queue, {})
        elif op == "complete_next":
            d.qless("complete", jid, worker, queue, {}, "next", "r", "delay", pick % 2)
        elif op == "fail":
            d.qless("fail", jid, worker, "g", "m", {})
        elif op == "retry":
            d.qless("retry", jid, queue, worker, pick % 2, "g", "m")
        elif op == "unfail":
            d.qless("unfail", queue, "g", 5)
        else:
            d.qless(op, jid)

    @rule(limit=st.sampled_from([0, 1]))
    def qless_throttle(self, limit: int) -> None:
        self.d.qless("throttle.set", "t", limit)

    @rule()
    def qless_recur(self) -> None:
        d = self.d
        d.qless("recur", "q", "rec", "k", {}, "interval", 1, 0)

    # ---- time and restarts -----------------------------------------------------------

    @rule(step=st.sampled_from([500, 1000, 2500, 6000, 70_000]))  # 70 s: qless locks expire
    def advance(self, step: int) -> None:
        d = self.d
        d.now += step
        d.engine.tick(d.now)

    @rule()
    def restart(self) -> None:
        self.d = self.d.restarted()

    @invariant()
    def every_move_is_declared(self) -> None:
        self.log.note_removals(self.d.engine)
        assert self.log.undeclared() == []

    @invariant()
    def the_holders_hold_every_reserved_job(self) -> None:
        """query.held (the console's Busy view) reads the holders' reservations: it finds
        what a walk of every job finds."""
        d = self.d
        holders = {view.id for view in query.held(d.engine, d.now, d.q, d.wq)}
        walked = {j.id for j in d.engine.jobs.values() if j.reserver is not None}
        assert holders == walked


TestStateTable = StateTableMachine.TestCase
TestStateTable.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)


def test_the_dialects_make_every_declared_move(move_log: MoveLog) -> None:
    """A fixed tour makes each edge of TRANSITIONS once: the table declares no edge that
    no dialect uses (and the random drive above can reach them all)."""
    d = Dialects(move_log)
    _beanstalkd_tour(d)
    _workq_tour(d)
    _qless_tour(d)
    move_log.note_removals(d.engine)
    moves = {(old, new) for old, new, restarting in move_log.pairs if not restarting}
    declared = {(old, new) for old, allowed in TRANSITIONS.items() for new in allowed}
    assert sorted(declared - moves, key=repr) == []
    assert move_log.undeclared() == []


def _beanstalkd_tour(d: Dialects) -> None:
    e, c, now = d.engine, d.conns[0], d.now
    ids = iter(range(1, 100))

    def put(delay: int = 0) -> int:
        return e.put(c, e.tube("q"), 1, delay, 5000, b"x", now, job_id=next(ids)).id

    a = put()  # none -> ready
    e.reserve_job(c, a, now)  # ready -> reserved
    e.release(c, a, 1, 1000, now)  # reserved -> delayed
    e.reserve_job(c, a, now)  # delayed -> reserved
    e.bury(c, a, 1, now)  # reserved -> buried
    e.reserve_job(c, a, now)  # buried -> reserved
    e.release(c, a, 1, 0, now)  # reserved -> ready
    e.delete(c, a, now)  # ready -> none
    b = put(1000)  # none -> delayed
    e.delete(c, b, now)  # delayed -> none
    b = put()
    e.reserve_job(c, b, now)
    e.delete(c, b, now)  # reserved -> none
    b = put()
    e.reserve_job(c, b, now)
    e.bury(c, b, 1, now)
    e.kick_job(c, b, now)  # buried -> ready
    e.reserve_job(c, b, now)
    e.bury(c, b, 1, now)
    e.delete(c, b, now)  # buried -> none
    put(1000)
    e.tick(now + 1000)  # delayed -> ready


def _workq_tour(d: Dialects) -> None:
    u1, u2 = b"6ba7b810-9dad-41d1-80b4-000000000001", b"6ba7b810-9dad-41d1-80b4-000000000002"
    d.wq.add(None, u1, "w", 1000, 60_000, b"", d.now, max_fails=2)  # none -> ready
    d.wq.fail(None, u1, b"", d.now)  # ready -> ready: back for another attempt
    d.wq.complete(None, u1, b"r", d.now)  # ready -> complete (no lease needed)
    d.wq.delete(None, u1, d.now)  # complete -> none
    d.wq.add(None, u2, "w", 1000, 60_000, b"", d.now, at=d.now + 5000)  # none -> delayed
    d.wq.complete(None, u2, b"r", d.now)  # delayed -> complete


def _qless_tour(d: Dialects) -> None:
    def put(queue: str, jid: str, delay: int = 0, *opts: Any) -> None:
        assert d.qless("put", "w", queue, jid, "k", {}, delay, *opts) == jid

    def run(queue: str, jid: str, worker: str = "w") -> None:
        assert [job["jid"] for job in d.qless("pop", queue, worker, 1)] == [jid]

    put("x", "x")  # a dependency that never completes
    put("a", "a", 5)  # none -> delayed
    put("a", "a", 5)  # delayed -> delayed
    put("a", "a", 0, "depends", ["x"])  # delayed -> depends
    put("a", "a", 0, "depends", ["x"])  # depends -> depends
    d.qless("cancel", "a")  # depends -> none
    put("b", "b")
    put("b", "b", 5)  # ready -> delayed
    put("c", "c")
    put("c", "c", 0, "depends", ["x"])  # ready -> depends
    put("d", "d")
    put("d", "d")  # ready -> ready (re-put: last in its band)
    put("e", "e")
    put("f", "f", 0, "depends", ["e"])  # none -> depends
    put("g", "g", 5, "depends", ["e"])
    run("e", "e")
    assert d.qless("complete", "e", "w", "e", {}) == "complete"  # reserved -> complete
    # ...and it unlocks f (depends -> ready) and g (depends -> delayed)
    put("e", "e", 5)  # complete -> delayed
    for jid, opts in (("h", ()), ("i", ("depends", ["x"]))):
        put(jid, jid)
        run(jid, jid)
        d.qless("complete", jid, "w", jid, {})
        put(jid, jid, 0, *opts)  # complete -> ready, complete -> depends
    for jid, delay, opts in (("j", 5, ()), ("k", 0, ("depends", ["x"]))):
        put(jid, jid)
        run(jid, jid)
        d.qless("fail", jid, "w", "g", "m", {})  # reserved -> buried
        put(jid, jid, delay, *opts)  # buried -> delayed, buried -> depends
    put("l", "l")
    run("l", "l")
    d.qless("complete", "l", "w", "l", {}, "next", "l2", "depends", ["x"])  # reserved -> depends
    put("m", "m")
    run("m", "m", "w1")
    d.now += 70_000  # past the heartbeat: w1's lock expires
    assert d.qless("pop", "m", "w2", 1) == []  # first its grace period
    d.now += 11_000
    run("m", "m", "w2")  # reserved -> reserved: the stalled job goes to w2
    d.qless("recur", "r", "r", "k", {}, "interval", 60, 0)  # none -> recur
    d.qless("unrecur", "r")  # recur -> none


def test_the_recorder_catches_an_undeclared_move(move_log: MoveLog) -> None:
    """A READY -> BURIED move (no such edge) is reported."""
    e = Engine(check=move_log)
    job = e.put(None, e.tube("q"), 1, 0, 5000, b"x", 0)
    e.take_out(job)
    e.make_buried(job)
    assert move_log.undeclared() == [(R, B, False)]


def test_the_engine_check_refuses_an_undeclared_move() -> None:
    e = Engine(check=MoveCheck())
    job = e.put(None, e.tube("q"), 1, 0, 5000, b"x", 0)
    e.take_out(job)
    with pytest.raises(job_states.IllegalMove, match="ready -> buried"):
        e.make_buried(job)


@pytest.mark.parametrize(("args", "env", "checked"), [
    ([], {}, False),
    (["--check-moves"], {}, True),
    ([], {"BEANPOD_CHECK_MOVES": "1"}, True),
])  # fmt: skip
def test_serve_turns_the_check_on_for_debugging(
    monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str], checked: bool
) -> None:
    seen: list[bool] = []
    monkeypatch.setattr(app, "serve", lambda config: seen.append(config.check_moves))
    monkeypatch.setattr(serve_command, "setup_logging", lambda verbose, log_format: None)
    monkeypatch.delenv("BEANPOD_CHECK_MOVES", raising=False)
    result = CliRunner().invoke(serve_command.serve, ["-p", "0", *args], env=env)
    assert result.exit_code == 0, result.output
    assert seen == [checked]
