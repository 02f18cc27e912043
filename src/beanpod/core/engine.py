"""The engine: every queue operation, synchronous, with `now` (integer ms) passed in.

Dialects call these operations; `tick(now)` fires due timers and returns the next
deadline for the server's ticker. No I/O, no clocks: effects leave through the
`journal` and `events` seams. The books, the public moves and the connections are the
layers below (core/ledger.py, core/moves.py, core/extension_moves.py, core/clients.py).
"""

from __future__ import annotations

from beanpod.core.clients import Clients
from beanpod.core.conn import UNKNOWN, Conn
from beanpod.core.job import (
    BURIED,
    DELAYED,
    HELD_STATES,
    RESERVED,
    STATE_NAMES,
    URGENT_PRIORITY,
    Job,
    JobExt,
    JobState,
    MoveCheck,
    move,
)
from beanpod.core.moves import SAFETY_MARGIN_MS
from beanpod.core.timers import DELAY_DUE, PAUSE_END, TTR_EXPIRY, WAITER
from beanpod.core.tube import Tube
from beanpod.core.waiters import DEADLINE_SOON, TIMED_OUT, Deliver, ReserveOutcome, Waiter


class Engine(Clients):
    def __init__(self, check: MoveCheck | None = None) -> None:
        super().__init__(check)
        self.timer_handlers.update(
            {
                DELAY_DUE: self._delay_due,
                TTR_EXPIRY: self.expire,
                WAITER: self._waiter_due,
                PAUSE_END: self._unpause,
            }
        )

    # ---- admission ---------------------------------------------------------------------

    def refuses(self, nbytes: int = 0) -> bool:
        """The one admission check, asked before any change that writes a record: True
        when the write-ahead log's disk cannot take one carrying `nbytes` of payload.
        The caller then answers its protocol's refusal (beanstalkd OUT_OF_MEMORY, a Workq
        or qless error, the admin API's 507) and changes nothing. Every dialect asks here;
        beanstalkd's put inlines these two lines (a call costs ~2 % of a put)."""
        journal = self.journal
        return journal is not None and not journal.room(nbytes)

    # ---- producing ---------------------------------------------------------------------

    def put(
        self,
        conn: Conn | None,
        tube: Tube,
        pri: int,
        delay: int,
        ttr: int,
        body: bytes,
        now: int,
        job_id: int | None = None,
        ext: JobExt | None = None,
        held: JobState | None = None,
    ) -> Job:
        """Create a job in `tube`; ready now, or delayed by `delay` ms. TTR is in ms.
        `ext` (dialect extras) is attached before the put is journalled; `held` (one of
        HELD_STATES) creates it in an extension's state, in no engine queue."""
        if job_id is None:
            job_id = self.next_id
            self.next_id = job_id + 1
        job = Job(job_id, tube, pri, delay, ttr, body, now, ext)
        self.jobs[job_id] = job
        tube.jobs += 1
        tube.refs += 1
        tube.total_jobs += 1
        self.counts.total_jobs += 1
        if self.events is not None:
            self.events.emit_put(
                now, job_id, tube.name, conn.id if conn else None, pri, delay, ttr, len(body),
                None if ext is None else getattr(ext, "uuid_text", None),  # no failed lookup
            )  # fmt: skip
        if held is not None:
            move(job, held, self.check)
        elif delay > 0:
            self.make_delayed(job, now + delay)
        else:
            self.make_ready(job, now)
        if self.journal is not None:  # after placing it: the record holds its state
            self.journal.record_put(job)
        if self.meter is not None:
            self.meter.added(job)
        return job

    # ---- consuming ---------------------------------------------------------------------

    def _deadline_soon(self, conn: Conn, now: int) -> bool:
        deadline = conn.soonest_deadline()
        return deadline is not None and now >= deadline - SAFETY_MARGIN_MS

    def reserve(
        self, conn: Conn, timeout: int | None, now: int, deliver: Deliver
    ) -> ReserveOutcome | None:
        """Reserve the best ready job for `conn`, or park it (returns None) until a job
        arrives, `timeout` ms pass (None waits forever) or its DEADLINE_SOON margin comes;
        `deliver` is then called with the outcome."""
        if not conn.worker:
            self.set_worker(conn)
        watch = conn.watch
        soonest = conn.soonest  # the DEADLINE_SOON margin, checked inline (hot path)
        if soonest is not None:
            deadline = conn.soonest_deadline() if soonest is UNKNOWN else soonest.deadline
            if (
                deadline is not None
                and now >= deadline - SAFETY_MARGIN_MS
                and not any(t.ready for t in watch)
            ):
                return DEADLINE_SOON
        if len(watch) == 1:  # the common case: take the top of the one watched tube
            tube = watch[0]
            job = None if tube.pause_ms else tube.ready.pop()
            if job is not None:  # count it out of ready (inline: the hottest path)
                counts = self.counts
                counts.ready -= 1
                if job.pri < URGENT_PRIORITY:
                    counts.urgent -= 1
                    tube.urgent -= 1
        else:
            job = self.best_in(watch)
            if job is not None:
                self.take_out(job)
        if job is not None:
            self.make_reserved(conn, job, now)
            return job
        if timeout == 0:
            return TIMED_OUT
        self.park(conn, None if timeout is None else now + timeout, deliver)
        return None

    def reserve_from(
        self, conn: Conn, names: list[str], timeout: int, now: int, deliver: Deliver
    ) -> ReserveOutcome | None:
        """Reserve the best ready job of the tubes `names` (a Workq lease: named tubes, not
        the watch list; no DEADLINE_SOON), or park until one arrives or `timeout` ms pass."""
        tubes = [t for t in map(self.tubes.get, names) if t is not None]
        job = self.best_in(tubes)
        if job is not None:
            self.take_out(job)
            self.make_reserved(conn, job, now)
            return job
        if timeout <= 0:
            return TIMED_OUT
        tubes = [self.tube(name) for name in names]
        for tube in tubes:
            tube.refs += 1  # the parked lease keeps its tubes alive
        self.park(conn, now + timeout, deliver, tubes)
        return None

    def reserve_job(self, conn: Conn, job_id: int, now: int) -> Job | None:
        """Reserve a specific ready, delayed or buried job (beanstalkd 1.12 reserve-job)."""
        job = self.jobs.get(job_id)
        if job is None or job.state is RESERVED or job.state in HELD_STATES:
            return None
        self.set_worker(conn)
        self.take_out(job)
        self.make_reserved(conn, job, now)
        return job

    def delete(self, conn: Conn | None, job_id: int, now: int) -> bool:
        """Delete a ready, delayed or buried job, or one reserved by `conn`."""
        job = self.jobs.get(job_id)
        if job is None:
            return False
        state = job.state
        if state is RESERVED:
            if job.reserver is not conn:
                return False
            if self.timings is not None and job.entry is not None:  # reserved at job.entry
                reserved_at: int = job.entry  # ms after the put (Moves.make_reserved)
                job.tube.run_times.add(now - job.created - reserved_at)
            self.unreserve(job)
        else:
            self.take_out(job)
        job.tube.cmd_delete += 1
        if self.journal is not None:
            self.journal.record_delete(job)
        if self.events is not None:
            self.events.emit_delete(
                now, job_id, job.tube.name, conn.id if conn else None, STATE_NAMES[state]
            )
        self.destroy(job, now)
        return True

    def release(self, conn: Conn, job_id: int, pri: int, delay: int, now: int) -> bool:
        job = conn.reserved.get(job_id)
        if job is None:
            return False
        self.unreserve(job)
        job.pri = pri
        job.delay = delay
        job.releases += 1
        if self.events is not None:
            self.events.emit(
                now, "release", job_id, job.tube.name, conn.id, pri=pri, delay_ms=delay
            )
        if delay > 0:
            self.make_delayed(job, now + delay)
        else:
            self.make_ready(job, now)
        if self.journal is not None:
            self.journal.record_update(job)
        return True

    def bury(self, conn: Conn, job_id: int, pri: int, now: int) -> bool:
        job = conn.reserved.get(job_id)
        if job is None:
            return False
        self.unreserve(job)
        job.pri = pri
        job.buries += 1
        job.tube.buries += 1
        self.make_buried(job)
        if self.journal is not None:
            self.journal.record_update(job)
        if self.events is not None:
            self.events.emit(now, "bury", job_id, job.tube.name, conn.id, pri=pri)
        return True

    def touch(self, conn: Conn, job_id: int, now: int) -> bool:
        """Restart the full TTR of a job reserved by `conn`."""
        job = conn.reserved.get(job_id)
        if job is None:
            return False
        self.move_deadline(job, now + job.ttr)
        if self.events is not None:
            self.events.emit(now, "touch", job_id, job.tube.name, conn.id)
        return True

    # ---- kicking -----------------------------------------------------------------------

    def _kick(self, job: Job, now: int, conn: Conn | None) -> None:
        origin = "buried" if job.state is BURIED else "delayed"
        if job.ext is not None:
            for hook in self.kick_hooks:
                hook(job, now)
        self.take_out(job)
        job.kicks += 1
        job.tube.kicks += 1
        if self.events is not None:
            self.events.emit(
                now, "kick", job.id, job.tube.name, conn.id if conn else None, **{"from": origin}
            )
        self.make_ready(job, now)
        if self.journal is not None:
            self.journal.record_update(job)

    def kick(self, conn: Conn | None, tube: Tube, bound: int, now: int) -> int:
        """Kick up to `bound` jobs of `tube`: buried ones if any, else delayed ones."""
        kicked = 0
        if tube.buried:
            while kicked < bound and tube.buried:
                self._kick(next(iter(tube.buried.values())), now, conn)
                kicked += 1
        else:
            while kicked < bound:
                job = tube.delayed.peek()
                if job is None:
                    break
                self._kick(job, now, conn)
                kicked += 1
        return kicked

    def kick_job(self, conn: Conn | None, job_id: int, now: int) -> bool:
        job = self.jobs.get(job_id)
        if job is None or job.state not in (BURIED, DELAYED):
            return False
        self._kick(job, now, conn)
        return True

    # ---- tubes: pause ------------------------------------------------------------------

    def pause_tube(self, conn: Conn | None, name: str, delay: int, now: int) -> bool:
        """Stop reservations from `name` for `delay` ms (0 unpauses at once)."""
        tube = self.tubes.get(name)
        if tube is None:
            return False
        tube.cmd_pause += 1
        if self.events is not None:
            self.events.emit(now, "pause", None, name, conn.id if conn else None, delay_ms=delay)
        if delay > 0:
            self.restore_pause(tube, delay, now + delay)
        else:
            self._unpause(tube, now)
        if self.journal is not None:
            self.journal.record_pause(tube)
        return True

    def restore_pause(self, tube: Tube, pause_ms: int, until: int) -> None:
        """Stop reservations from `tube` until `until` (a pause of `pause_ms`, as
        stats-tube shows it): `pause_tube`'s, and the write-ahead log's restore of a pause
        still running (no event, no record: both were written when it began)."""
        tube.pause_ms = pause_ms
        tube.pause_until = until
        self.timers.arm(until, PAUSE_END, tube)

    def _unpause(self, tube: Tube, now: int) -> None:
        tube.pause_ms = 0
        tube.pause_until = 0
        self.timers.cancel(tube)
        if tube.waiting:
            self.serve_waiters(tube, now)

    # ---- time --------------------------------------------------------------------------

    def next_deadline(self) -> int | None:
        return self.timers.next_due()

    def tick(self, now: int) -> int | None:
        """Fire every timer due at `now`; return when the next one is due (or None)."""
        pop_due = self.timers.pop_due
        handlers = self.timer_handlers
        while (entry := pop_due(now)) is not None:
            handlers[entry[2]](entry[3], now)
        return self.timers.next_due()

    def _delay_due(self, job: Job, now: int) -> None:
        self.take_out(job)
        self.make_ready(job, now)

    def _waiter_due(self, waiter: Waiter, now: int) -> None:
        conn = waiter.conn
        if not waiter.named and self._deadline_soon(conn, now):
            outcome = DEADLINE_SOON
        elif waiter.timeout_at is not None and now >= waiter.timeout_at:
            outcome = TIMED_OUT
        else:  # pragma: no cover - armed for the earlier of the two
            return
        self.unpark(waiter)
        waiter.deliver(outcome)

    # ---- lookups -----------------------------------------------------------------------

    def peek(self, job_id: int) -> Job | None:
        return self.jobs.get(job_id)

    def peek_ready(self, tube: Tube) -> Job | None:
        return tube.ready.peek()

    def peek_delayed(self, tube: Tube) -> Job | None:
        return tube.delayed.peek()

    def peek_buried(self, tube: Tube) -> Job | None:
        return next(iter(tube.buried.values()), None)
