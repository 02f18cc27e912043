"""Workq semantics on the engine (a core extension, above it: uses its public moves).

A Workq job is an ordinary engine Job in tube = the Workq name, with `job.ext` a
`WorkqExt`. States map onto the engine's: NEW/PENDING = ready (or delayed while
scheduled), LEASED = reserved, COMPLETED/FAILED = the held state COMPLETE (in no queue)
with an outcome, kept until the TTL runs out so `result` can read it. A job buried
through beanstalkd counts as finished (FAILED, empty result) until it is kicked.
Everything is synchronous with `now` in ms.

Limits enforced here (the protocol layer validates ranges): max-attempts counts every
lease and fails the job when a TTR expiry or an explicit fail uses the last attempt
(255 when unset); max-fails lets `fail` put the job back until the max-fails-th fail.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from beanpod.core.conn import Conn
from beanpod.core.job import COMPLETE, RESERVED, STATE_NAMES, Job
from beanpod.core.waiters import TIMED_OUT, ReserveOutcome
from beanpod.core.workq.ext import (
    OUTCOME_COMPLETED,
    OUTCOME_FAILED,
    WorkqExt,
    is_finished,
    synthetic_id,
    to_engine_pri,
    uuid_of,
    workq_ext,
)
from beanpod.core.workq.waits import (
    DRAINING,
    DUPLICATE_JOB,
    DUPLICATE_RESULT,
    NO_ROOM,
    NOT_FOUND,
    OUT_OF_MEMORY,
    TIMEOUT,
    DeliverResult,
    Result,
    Wait,
    WaitOutcome,
    WorkqError,
)

if TYPE_CHECKING:
    from beanpod.core.engine import Engine

TTL_DUE = 10  # timer kind: a Workq job's TTL ran out (target: its WorkqExt)
WAIT_DUE = 11  # timer kind: a run/result wait reached its wait-timeout (target: Wait)

QUEUE_STATE = "workq.queue."  # journal state key prefix: one per Workq queue ever created


class Workq:
    """The Workq dialect's state on one engine: uuid index, waits, evictions."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.index: dict[bytes, Job] = {}
        self.waits: dict[int, list[Wait]] = {}  # job id -> parked run/result commands
        self.evicted = 0  # unfinished jobs removed by TTL (`inspect server` evicted-jobs)
        # The connections that may hold leases (the console's Busy view): the open ones,
        # and those that closed holding leases (a lease outlives its connection), swept
        # of the emptied ones when they double (amortised O(1) per connection).
        self.open: dict[int, Conn] = {}
        self.closed: dict[int, Conn] = {}
        self.sweep_at = 16
        self.queues: set[str] = set()  # every queue add/schedule/run/lease created
        handlers = engine.timer_handlers
        handlers[TTL_DUE] = self._ttl_due
        handlers[WAIT_DUE] = self._wait_due
        engine.destroy_hooks.append(self._forget)
        engine.expire_hooks.append(self._expired)

    # ---- connections -------------------------------------------------------------------

    def connect(self, peer: str = "", now: int = 0) -> Conn:
        """A connection for Workq leases: not on beanstalkd's connection counters, and
        never disconnected from the engine, because a lease outlives its connection."""
        conn = self.engine.detached_conn("workq", peer, now)
        self.open[conn.id] = conn
        return conn

    def disconnect(self, conn: Conn, wait: Wait | None, now: int) -> None:
        self.engine.cancel_wait(conn)
        if wait is not None and wait.active:
            self._end_wait(wait)
            job = self.engine.jobs.get(wait.job_id)
            if wait.run and job is not None:
                self._remove(job, now, None, "delete")  # a run's job lives as long as the run
        del self.open[conn.id]
        if conn.reserved:
            self._linger(conn)

    def _linger(self, conn: Conn) -> None:
        self.closed[conn.id] = conn
        if len(self.closed) > self.sweep_at:
            self.closed = {i: c for i, c in self.closed.items() if c.reserved}
            self.sweep_at = 2 * len(self.closed) + 16

    @property
    def clients(self) -> int:
        """Open Workq connections (`inspect server`'s clients)."""
        return len(self.open)

    def holders(self) -> list[Conn]:
        """The connections that may hold leases now (some closed ones hold none)."""
        return [*self.open.values(), *self.closed.values()]

    # ---- queues ------------------------------------------------------------------------

    def keep_queue(self, name: str) -> None:
        """A Workq queue, once created, is never removed (as the reference's): remember
        its name, journalled the first time so a restart keeps it."""
        if name in self.queues:
            return
        self.queues.add(name)
        journal = self.engine.journal
        if journal is not None:
            journal.record_state(QUEUE_STATE + name, b"1")

    def has_queue(self, name: str) -> bool:
        return name in self.queues or name in self.engine.tubes

    # ---- lookups -----------------------------------------------------------------------

    def find(self, uuid: bytes) -> Job | None:
        job = self.index.get(uuid)
        if job is None and (job_id := synthetic_id(uuid)) is not None:
            job = self.engine.jobs.get(job_id)
            if job is not None and job.ext is not None:
                return None  # jobs with extras are named by their own uuid
        return job

    def _find(self, uuid: bytes) -> Job:
        job = self.find(uuid)
        if job is None:
            raise WorkqError(NOT_FOUND)
        return job

    # ---- producing ---------------------------------------------------------------------

    def add(
        self,
        conn: Conn | None,
        uuid: bytes,
        name: str,
        ttr: int,
        ttl: int,
        body: bytes,
        now: int,
        priority: int = 0,
        max_attempts: int = 0,
        max_fails: int = 0,
        at: int | None = None,
    ) -> Job:
        """add/schedule: a job ready now, or due at `at` (TTL then counts from `at`)."""
        start = now if at is None else at
        ext = WorkqExt(uuid, ttl, start + ttl, at or 0, max_attempts, max_fails)
        job = self._put(conn, ext, name, ttr, body, priority, max(0, start - now), now)
        self.engine.arm(ext.expires, TTL_DUE, ext)
        return job

    def run(
        self,
        conn: Conn | None,
        uuid: bytes,
        name: str,
        ttr: int,
        wait: int,
        body: bytes,
        now: int,
        deliver: DeliverResult,
        priority: int = 0,
    ) -> Wait:
        """run: a ready job without TTL, and the wait that answers when it finishes."""
        job = self._put(conn, WorkqExt(uuid, is_run=True), name, ttr, body, priority, 0, now)
        parked = Wait(job.id, uuid, True, now + wait, deliver)
        self.waits.setdefault(job.id, []).append(parked)
        self.engine.arm(parked.timeout_at, WAIT_DUE, parked)
        return parked

    def _put(
        self, conn: Conn | None, ext: WorkqExt, name: str, ttr: int, body: bytes,
        priority: int, delay: int, now: int,
    ) -> Job:  # fmt: skip
        engine = self.engine
        if engine.draining:
            raise WorkqError(DRAINING)
        self._need_room(len(body))
        if self.find(ext.uuid) is not None:
            raise WorkqError(DUPLICATE_JOB)
        meter = engine.meter
        if meter is not None and meter.refuses(len(body), self._tube_jobs(name)):
            raise WorkqError(OUT_OF_MEMORY)
        # A parked lease may be served inside put(); it needs only job.ext, set by put.
        job = engine.put(
            conn, engine.tube(name), to_engine_pri(priority), delay, ttr, body, now, ext=ext
        )
        ext.job = job
        self.index[ext.uuid] = job
        self.keep_queue(name)
        return job

    # ---- consuming ---------------------------------------------------------------------

    def lease(
        self,
        conn: Conn,
        names: list[str],
        wait: int,
        now: int,
        deliver: Callable[[ReserveOutcome], None],
    ) -> ReserveOutcome | None:
        """lease: the best ready job of `names`, TIMED_OUT, or None (parked; `deliver`
        is called later). Each lease counts an attempt; its names become queues."""
        for name in names:
            self.keep_queue(name)

        def leased(outcome: ReserveOutcome) -> None:
            if outcome is not TIMED_OUT:
                self._count_attempt(outcome)
            deliver(outcome)

        outcome = self.engine.reserve_from(conn, names, wait, now, leased)
        if outcome is not None and outcome is not TIMED_OUT:
            self._count_attempt(outcome)
        return outcome

    def _count_attempt(self, job: Job) -> None:
        ext = workq_ext(job)
        if ext is not None:
            ext.attempts += 1
            ext.outcome = 0
            ext.result = b""
            self._journal_update(job)

    def complete(self, conn: Conn | None, uuid: bytes, result: bytes, now: int) -> None:
        """complete: finish a job of any unfinished state with a result (success 1)."""
        job = self._unfinished(uuid, result)
        events = self.engine.events
        if events is not None:
            events.emit(now, "complete", job.id, job.tube.name, _cid(conn), bytes=len(result))
        self._finish(job, OUTCOME_COMPLETED, result, now)

    def fail(self, conn: Conn | None, uuid: bytes, result: bytes, now: int) -> None:
        """fail: an explicit failure; the job goes back for another attempt while fails <
        max-fails (and attempts remain), else it is finished with success 0."""
        job = self._unfinished(uuid, result)
        engine = self.engine
        tube = job.tube
        if engine.events is not None:
            engine.events.emit(
                now, "fail", job.id, tube.name, _cid(conn), group=None, message=None,
                bytes=len(result),
            )  # fmt: skip
        ext = workq_ext(job)
        if ext is None or ext.is_run:
            self._finish(job, OUTCOME_FAILED, result, now)
            return
        ext.fails += 1
        if ext.fails >= ext.max_fails or ext.attempts >= ext.attempt_limit:
            self._finish(job, OUTCOME_FAILED, result, now)
            return
        self._detach(job)
        self._journal_update(job)
        if engine.events is not None:
            engine.events.emit(
                now, "release", job.id, tube.name, _cid(conn), pri=job.pri, delay_ms=0
            )
        engine.make_ready(job, now)

    def delete(self, conn: Conn | None, uuid: bytes, now: int) -> None:
        """delete: remove a job whatever its state."""
        job = self._find(uuid)
        self._need_room(0)
        self.engine.count_delete(job)
        self._remove(job, now, conn, "delete")

    def result(
        self, uuid: bytes, wait: int, now: int, deliver: DeliverResult
    ) -> WaitOutcome | Wait:
        """result: the finished job's result now, TIMEOUT (wait 0), or a parked Wait."""
        job = self._find(uuid)
        if is_finished(job):
            return _result_of(job)
        if wait <= 0:
            return TIMEOUT
        parked = Wait(job.id, uuid, False, now + wait, deliver)
        self.waits.setdefault(job.id, []).append(parked)
        self.engine.arm(parked.timeout_at, WAIT_DUE, parked)
        return parked

    # ---- restart -----------------------------------------------------------------------

    def reattach(self, now: int) -> None:
        """After the write-ahead log restored the engine's jobs: index Workq jobs, re-arm
        their TTL, and drop jobs of `run` commands (a run does not survive a restart).
        Queues come back from their journal records, and (logs written before queues
        were journalled) from the names of the Workq jobs restored."""
        journal = self.engine.journal
        if journal is not None:
            self.queues.update(k[len(QUEUE_STATE) :] for k in journal.states(QUEUE_STATE))
        runs = []
        for job in [job for job in self.engine.jobs.values() if job.ext is not None]:
            ext = workq_ext(job)
            if ext is None or self.index.get(ext.uuid) is job:
                continue
            ext.job = job
            self.index[ext.uuid] = job
            self.keep_queue(job.tube.name)
            if ext.is_run:
                runs.append(job)
            elif ext.expires:
                self.engine.arm(ext.expires, TTL_DUE, ext)
        for job in runs:
            self._remove(job, now, None, "delete")

    # ---- internals ---------------------------------------------------------------------

    def _unfinished(self, uuid: bytes, result: bytes) -> Job:
        job = self._find(uuid)
        if is_finished(job):
            raise WorkqError(DUPLICATE_RESULT)
        self._need_room(len(result))
        return job

    def _tube_jobs(self, name: str) -> int:
        tube = self.engine.tubes.get(name)
        return 0 if tube is None else tube.jobs

    def _need_room(self, nbytes: int) -> None:
        if self.engine.refuses(nbytes):
            raise WorkqError(NO_ROOM)

    def _detach(self, job: Job) -> None:
        """Take `job` out of its ready/delayed/buried queue or its reservation."""
        if job.state is RESERVED:
            self.engine.unreserve(job)
        else:
            self.engine.take_out(job)

    def _finish(
        self, job: Job, outcome: int, result: bytes, now: int, detached: bool = False
    ) -> None:
        """Store the outcome (held COMPLETE until TTL) and wake the job's waits; jobs
        without a TTL (run jobs, plain beanstalkd jobs) are removed once answered."""
        ext = workq_ext(job)
        if not detached:
            self._detach(job)
        self._answer(job, (uuid_of(job), int(outcome == OUTCOME_COMPLETED), result))
        if ext is None or not ext.expires:
            self._remove(job, now, None, None, detached=True)
            return
        ext.outcome = outcome
        ext.result = result
        self.engine.hold(job, COMPLETE)
        self._journal_update(job)

    def _remove(
        self, job: Job, now: int, conn: Conn | None, event: str | None, detached: bool = False
    ) -> None:
        engine = self.engine
        state = job.state
        if not detached:
            self._detach(job)
        if engine.journal is not None:
            engine.journal.record_delete(job)
        if event is not None and engine.events is not None:
            extra = {"state": STATE_NAMES[state]} if event == "delete" else {}
            engine.events.emit(now, event, job.id, job.tube.name, _cid(conn), **extra)
        engine.destroy(job, now)

    def _journal_update(self, job: Job) -> None:
        if self.engine.journal is not None:
            self.engine.journal.record_update(job)

    def _answer(self, job: Job, outcome: WaitOutcome) -> None:
        waits = self.waits.pop(job.id, None)
        if waits:
            cancel = self.engine.disarm
            for wait in waits:
                wait.active = False
                cancel(wait)
                wait.deliver(outcome)

    def _end_wait(self, wait: Wait) -> None:
        wait.active = False
        self.engine.disarm(wait)
        waits = self.waits.get(wait.job_id)
        if waits is not None:
            waits.remove(wait)
            if not waits:
                del self.waits[wait.job_id]

    def _forget(self, job: Job, now: int) -> None:
        """Engine destroy hook: drop the uuid and TTL timer; pending waits learn the job
        is gone."""
        ext = workq_ext(job)
        if ext is None:
            return
        if self.index.get(ext.uuid) is job:
            del self.index[ext.uuid]
        self.engine.disarm(ext)
        self._answer(job, NOT_FOUND)

    # ---- timers ------------------------------------------------------------------------

    def _ttl_due(self, ext: WorkqExt, now: int) -> None:
        job = ext.job
        if job is None:  # pragma: no cover - armed only once the job exists
            return
        if is_finished(job):
            self._remove(job, now, None, None)  # the result's time is up
        else:
            self.evicted += 1
            self._remove(job, now, None, "evict")

    def _wait_due(self, wait: Wait, now: int) -> None:
        job = self.engine.jobs.get(wait.job_id)
        if wait.run and job is not None and job.state is RESERVED:
            wait.expired = True  # leased: the run now ends at the lease's TTR
            return
        self._end_wait(wait)
        wait.deliver(TIMEOUT)
        if wait.run and job is not None:
            self._remove(job, now, None, "delete")

    def _expired(self, job: Job, now: int) -> bool:
        """Engine expire hook (a lease's TTR ran out; the reservation has ended, counted as
        a timeout): a Workq job whose attempts are used up fails, an expired run ends;
        True when so. Otherwise the engine makes the job ready again."""
        ext = workq_ext(job)
        if ext is None:
            return False
        run_ended = ext.is_run and any(w.run and w.expired for w in self.waits.get(job.id, ()))
        if not run_ended and ext.attempts < ext.attempt_limit:
            return False
        if run_ended:
            self._answer(job, TIMEOUT)
            self._remove(job, now, None, "delete", detached=True)
        else:
            self._finish(job, OUTCOME_FAILED, b"", now, detached=True)  # out of attempts
        return True


def _cid(conn: Conn | None) -> int | None:
    return None if conn is None else conn.id


def _result_of(job: Job) -> Result:
    ext = workq_ext(job)
    if ext is None:
        return (uuid_of(job), 0, b"")
    return (ext.uuid, int(ext.outcome == OUTCOME_COMPLETED), ext.result)
