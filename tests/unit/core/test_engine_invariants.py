"""Property test: random operations never break the engine's bookkeeping.

After every step the incrementally kept counters must equal a full recount, every job
must sit in exactly the queue its state names, and timers must agree with states.
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from beanpod.core.engine import Engine
from beanpod.core.job import TRANSITIONS, JobState, MoveCheck
from beanpod.core.pqueue import canonical, wide_key

TUBES = st.sampled_from(["default", "a", "b"])
PRI = st.sampled_from([0, 5, 1023, 1024, 2**32 - 1])


class EngineMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.engine = Engine(MoveCheck())
        self.conns = [self.engine.connect() for _ in range(3)]
        self.now = 0
        self.delivered: list[Any] = []
        self.last_state: dict[int, JobState | None] = {}

    def _conn(self, i: int) -> Any:
        """A connection free to send a command (a parked one is blocked, as on the wire)."""
        conn = self.conns[i % len(self.conns)]
        if conn.waiter is not None:
            self.engine.cancel_wait(conn)
        return conn

    def _job_ids(self) -> list[int]:
        return sorted(self.engine.jobs)

    @rule(i=st.integers(0, 2), tube=TUBES, pri=PRI, delay=st.sampled_from([0, 0, 1000, 3000]),
          ttr=st.sampled_from([1000, 2000, 5000]))  # fmt: skip
    def put(self, i: int, tube: str, pri: int, delay: int, ttr: int) -> None:
        conn = self._conn(i)
        self.engine.use(conn, tube)
        self.engine.put(conn, conn.use, pri, delay, ttr, b"body", self.now)

    @rule(i=st.integers(0, 2), tube=TUBES)
    def watch(self, i: int, tube: str) -> None:
        self.engine.watch(self._conn(i), tube)

    @rule(i=st.integers(0, 2), tube=TUBES)
    def ignore(self, i: int, tube: str) -> None:
        self.engine.ignore(self._conn(i), tube)

    @rule(i=st.integers(0, 2), timeout=st.sampled_from([0, 0, 1000, None]))
    def reserve(self, i: int, timeout: int | None) -> None:
        conn = self._conn(i)
        self.engine.reserve(conn, timeout, self.now, self.delivered.append)

    @rule(i=st.integers(0, 2), pick=st.integers(0, 50))
    def reserve_job(self, i: int, pick: int) -> None:
        ids = self._job_ids()
        if ids:
            self.engine.reserve_job(self._conn(i), ids[pick % len(ids)], self.now)

    @rule(i=st.integers(0, 2), pick=st.integers(0, 50), op=st.sampled_from(["delete", "release",
          "bury", "touch", "kick_job"]), pri=PRI, delay=st.sampled_from([0, 2000]))  # fmt: skip
    def job_op(self, i: int, pick: int, op: str, pri: int, delay: int) -> None:
        ids = self._job_ids()
        if not ids:
            return
        conn, job_id, e = self._conn(i), ids[pick % len(ids)], self.engine
        if op == "delete":
            e.delete(conn, job_id, self.now)
        elif op == "release":
            e.release(conn, job_id, pri, delay, self.now)
        elif op == "bury":
            e.bury(conn, job_id, pri, self.now)
        elif op == "touch":
            e.touch(conn, job_id, self.now)
        else:
            e.kick_job(conn, job_id, self.now)

    @rule(i=st.integers(0, 2), bound=st.integers(0, 5))
    def kick(self, i: int, bound: int) -> None:
        conn = self._conn(i)
        self.engine.kick(conn, conn.use, bound, self.now)

    @rule(tube=TUBES, delay=st.sampled_from([0, 1000, 4000]))
    def pause(self, tube: str, delay: int) -> None:
        self.engine.pause_tube(None, tube, delay, self.now)

    @rule(i=st.integers(0, 2))
    def reconnect(self, i: int) -> None:
        k = i % len(self.conns)
        self.engine.disconnect(self.conns[k], self.now)
        self.conns[k] = self.engine.connect()

    @rule(step=st.sampled_from([1, 500, 999, 1000, 2500]))
    def advance(self, step: int) -> None:
        self.now += step
        self.engine.tick(self.now)

    @invariant()
    def transitions_are_declared(self) -> None:
        states: dict[int, JobState | None] = {i: j.state for i, j in self.engine.jobs.items()}
        for job_id in set(states) | set(self.last_state):
            old, new = self.last_state.get(job_id), states.get(job_id)
            # One step may pass through several states (e.g. put -> ready -> reserved);
            # only states a job can never reach directly from nothing are checked here.
            if old is None and new is not None:
                assert new in TRANSITIONS[None] or new in (JobState.RESERVED,)
        self.last_state = states

    @invariant()
    def counters_match_a_recount(self) -> None:
        e = self.engine
        jobs = list(e.jobs.values())
        by_state = {s: [j for j in jobs if j.state is s] for s in JobState}
        n = e.counts
        assert n.ready == len(by_state[JobState.READY])
        assert n.delayed == len(by_state[JobState.DELAYED])
        assert n.reserved == len(by_state[JobState.RESERVED])
        assert n.buried == len(by_state[JobState.BURIED])
        assert n.urgent == sum(1 for j in by_state[JobState.READY] if j.pri < 1024)
        for tube in e.tube_list:
            mine = [j for j in jobs if j.tube is tube]
            assert tube.jobs == len(mine)
            assert len(tube.ready) == sum(1 for j in mine if j.state is JobState.READY)
            assert len(tube.delayed) == sum(1 for j in mine if j.state is JobState.DELAYED)
            assert list(tube.buried.values()) == [
                j for j in tube.buried.values() if j.state is JobState.BURIED
            ]
            assert tube.reserved == sum(1 for j in mine if j.state is JobState.RESERVED)
            assert tube.using == sum(1 for c in self.conns if c.use is tube)
            assert tube.watching == sum(1 for c in self.conns if tube in c.watch)
            assert tube.waiting == sum(
                1 for c in self.conns if c.waiter is not None and tube in c.watch
            )
        assert [t.index for t in e.tube_list] == list(range(len(e.tube_list)))
        assert n.waiting == sum(1 for c in self.conns if c.waiter is not None)
        assert n.conns == len(self.conns)

    @invariant()
    def jobs_sit_where_their_state_says(self) -> None:
        for job in self.engine.jobs.values():
            if job.state is JobState.RESERVED:
                assert job.reserver is not None and job.reserver.reserved[job.id] is job
                assert job.timer is not None and job.timer[0] == job.deadline
                assert job.deadline > self.now
            else:
                assert job.reserver is None
            if job.state is JobState.DELAYED:
                assert job.timer is not None and job.deadline > self.now
            if job.state is JobState.READY:
                assert job.entry is not None and canonical(job.entry) == wide_key(job.pri, job.id)

    @invariant()
    def each_connection_knows_its_soonest_deadline(self) -> None:
        for conn in self.conns:
            deadlines = [job.deadline for job in conn.reserved.values()]
            assert conn.soonest_deadline() == (min(deadlines) if deadlines else None)
            if conn.ordered:  # the O(1) shortcut's premise
                assert deadlines == sorted(deadlines)

    @invariant()
    def no_reservable_job_is_left_while_someone_waits(self) -> None:
        for conn in self.conns:
            if conn.waiter is not None:
                assert all(not t.ready or t.paused for t in conn.watch)


TestEngineMachine = EngineMachine.TestCase
TestEngineMachine.settings = settings(max_examples=100, stateful_step_count=40, deadline=None)
