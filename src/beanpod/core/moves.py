"""The engine's public queue moves, and the parked reserves they serve (core/ledger.py
tells the engine's layers)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from operator import attrgetter
from typing import Any, Final

from beanpod.core.conn import UNKNOWN, Conn
from beanpod.core.job import (
    BURIED,
    DELAYED,
    HELD_STATES,
    ONE_RESERVE,
    READY,
    RESERVED,
    RESERVES_MASK,
    URGENT_PRIORITY,
    Job,
    JobState,
    check_placed,
    move,
)
from beanpod.core.ledger import Ledger
from beanpod.core.pqueue import count_below, delayed_key, ready_before
from beanpod.core.timers import DELAY_DUE, TTR_EXPIRY, WAITER
from beanpod.core.tube import Tube
from beanpod.core.waiters import Deliver, Waiter

SAFETY_MARGIN_MS: Final = 1000  # the last second of a reservation (DEADLINE_SOON)
_ENTRY: Final = attrgetter("entry")


class Moves(Ledger):
    # ---- the public moves -----------------------------------------------------------------
    # What an extension (core/qless, core/workq), the test harness or the admin API may
    # compose: take a job out of its place (take_out / unreserve), then give it a new one
    # (make_ready / make_delayed / make_buried / make_reserved) or destroy it. Each keeps
    # the engine's counters, heaps and timers true; the job's state changes through
    # job.move() (checked against TRANSITIONS). No move writes a journal record: the
    # operation that composes them records the outcome once the job is placed
    # (journal.record_put / record_update / record_delete).

    def make_ready(self, job: Job, now: int, order: int = 0) -> None:
        """Place a job that is in no queue in its tube's ready heap: state READY, the heap
        key (pri, `order` or its id), counts ready and urgent (pri < 1024, engine and
        tube). Then the tube's parked reserves are served, so the job may leave at once
        (RESERVED, a reserve event). `order`: rank within the priority band (0: the id;
        qless passes its own)."""
        tube = job.tube
        move(job, READY, self.check)
        job.entry = tube.ready.push_ready(job.pri, job.id, order)
        counts = self.counts
        counts.ready += 1
        if job.pri < URGENT_PRIORITY:
            counts.urgent += 1
            tube.urgent += 1
        if tube.waiting:
            self.serve_waiters(tube, now)

    def make_ready_restored(
        self, tube: Tube, jobs: list[Job], now: int, keys: list[int] | None = None
    ) -> None:
        """`make_ready` for many jobs of `tube` at once: jobs a restart re-created READY,
        each holding its ready key (`restored_job`; `keys`: those keys, when the caller
        has them, sorted here in place). The keys are sorted once and join the heap in
        one extend, the counters change once (urgent jobs are the keys below pri 1024's
        first): C-level passes instead of a call per job. The jobs count in `tube` (and
        hold a reference on it) from now on."""
        check_placed(jobs, READY, self.check)
        tube.jobs += len(jobs)
        tube.refs += len(jobs)
        if keys is None:
            keys = list(map(_ENTRY, jobs))
        keys.sort()
        tube.ready.extend(keys)  # (made wide there if the tube's form asks)
        urgent = count_below(keys, URGENT_PRIORITY)
        counts = self.counts
        counts.ready += len(keys)
        counts.urgent += urgent
        tube.urgent += urgent
        if tube.waiting:
            self.serve_waiters(tube, now)

    def place_restored(self, job: Job, now: int) -> None:
        """Place a job a restart re-created in a state other than READY (inside
        `restarting()`): it counts in its tube from now on; a delayed one keeps its due
        time, a buried one goes last in the bury order, a reserved one comes back ready
        with a timeout event (a restart ends every reservation), a job in an extension's
        held state (HELD_STATES) is left for the extension to re-place."""
        tube = job.tube
        tube.jobs += 1
        tube.refs += 1
        state = job.state
        if state is DELAYED:
            self.make_delayed(job, job.deadline)
        elif state is BURIED:
            self.make_buried(job)
        elif state is RESERVED:
            if self.events is not None:
                self.events.emit(now, "timeout", job.id, tube.name, None)
            self.make_ready(job, now)
        else:
            self.hold(job, state)

    def make_delayed(self, job: Job, due: int) -> None:
        """Place a job that is in no queue in its tube's delayed heap until `due`: state
        DELAYED, `job.deadline = due`, count delayed, a DELAY_DUE timer armed."""
        move(job, DELAYED, self.check)
        job.deadline = due
        job.tube.delayed.push(delayed_key(due, job.id), job)
        self.counts.delayed += 1
        self.timers.arm_job(due, DELAY_DUE, job)

    def make_buried(self, job: Job) -> None:
        """Place a job that is in no queue last in its tube's buried list (kick order):
        state BURIED, count buried."""
        move(job, BURIED, self.check)
        job.tube.buried[job.id] = job
        self.counts.buried += 1

    def take_out(self, job: Job) -> None:
        """Take `job` out of the queue that holds it: the ready heap (counts ready and
        urgent), the delayed heap (count delayed, its timer cancelled) or the buried list
        (count buried); a held job (an extension's state) is left to its extension. The
        state is not changed: it names where the job was until the next make_* move.
        Reserved jobs leave through `unreserve`."""
        state = job.state
        tube = job.tube
        counts = self.counts
        if state is READY:
            tube.ready.discard(job)
            counts.ready -= 1
            if job.pri < URGENT_PRIORITY:
                counts.urgent -= 1
                tube.urgent -= 1
        elif state is DELAYED:
            tube.delayed.discard(job)
            counts.delayed -= 1
            self.timers.cancel_job(job)
        elif state is BURIED:
            del tube.buried[job.id]
            counts.buried -= 1
        elif state in HELD_STATES:
            pass  # an extension holds it; its destroy hook or move forgets it
        else:  # pragma: no cover - reserved jobs leave through unreserve
            raise AssertionError(f"cannot take out {job!r}")

    def make_reserved(self, conn: Conn, job: Job, now: int, worker: str | None = None) -> None:
        """Hand a job that is in no queue to `conn` (`worker`: a name the client gave):
        state RESERVED, `job.reserver`, reserves +1, `job.deadline = now + ttr`, the
        connection's reservations and soonest deadline (DEADLINE_SOON), counts reserved
        (engine and tube), a TTR_EXPIRY timer armed, a reserve event emitted."""
        move(job, RESERVED, self.check)
        job.reserver = conn
        if self.timings is not None:
            waited = now - job.created
            if not job.counters & RESERVES_MASK:  # its first reserve: it waited this long
                job.tube.wait_times.add(waited)
            # In no heap while reserved, the slot keeps the reserve time, as ms after the
            # put: a small int for a job that waited little (CPython's own, no object).
            job.entry = waited
        job.counters += ONE_RESERVE
        deadline = now + job.ttr
        job.deadline = deadline
        conn.reserved[job.id] = job
        # Keep the connection's soonest reservation and deadline order (Conn; inline:
        # a call here costs more than the check).
        if deadline < conn.latest:
            conn.ordered = False
        else:
            conn.latest = deadline
        soonest = conn.soonest
        if soonest is None or (soonest is not UNKNOWN and deadline < soonest.deadline):
            conn.soonest = job
        job.tube.reserved += 1
        self.counts.reserved += 1
        self.timers.arm_job(deadline, TTR_EXPIRY, job)
        if self.events is not None:
            self.events.emit_reserve(now, job.id, job.tube.name, conn.id, worker)

    def unreserve(self, job: Job) -> Conn:
        """End `job`'s reservation and return who held it: out of the connection's
        reservations (its soonest deadline kept true), `job.reserver = None`, counts
        reserved -1 (engine and tube), its TTR timer cancelled. The state stays RESERVED
        until the next make_* move or `destroy`."""
        conn = job.reserver
        assert conn is not None
        del conn.reserved[job.id]
        if conn.soonest is job:
            if conn.reserved:
                conn.soonest = UNKNOWN
            else:
                conn.soonest = None
                conn.emptied()
        job.reserver = None
        job.tube.reserved -= 1
        self.counts.reserved -= 1
        self.timers.cancel_job(job)
        return conn

    def destroy(self, job: Job, now: int) -> None:
        """Forget a job that is in no queue and no reservation (take_out / unreserve
        first; the caller has recorded the delete): the extensions' destroy hooks run
        (jobs with `ext`), the id is freed, `tube.jobs` -1, and the job's reference on its
        tube dropped (an unused tube goes)."""
        if job.ext is not None:
            for hook in self.destroy_hooks:
                hook(job, now)
        del self.jobs[job.id]
        tube = job.tube
        tube.jobs -= 1
        if tube.refs > 1:
            tube.refs -= 1
        else:
            self.unref(tube)
        if self.meter is not None:
            self.meter.removed(job)

    def hold(self, job: Job, state: JobState) -> None:
        """Put a job that is in no queue in an extension's held state (HELD_STATES: qless
        depends/complete, a finished Workq job), in no engine queue."""
        move(job, state, self.check)

    @contextmanager
    def restarting(self) -> Iterator[None]:
        """Moves inside re-create jobs from the write-ahead log (start-up only): the check
        lets a job appear in any of RESTART_STATES, and an extension re-place a job it
        restored."""
        check = self.check
        if check is None:
            yield
            return
        check.restarting = True
        try:
            yield
        finally:
            check.restarting = False

    def best_in(self, tubes: list[Tube]) -> Job | None:
        """The smallest (pri, id) ready job across the unpaused `tubes`."""
        best: tuple[Any, Job] | None = None
        for tube in tubes:
            if tube.pause_ms or not tube.ready:
                continue
            top = tube.ready.top()
            if top is not None and (best is None or ready_before(top[0], best[0])):
                best = top
        return None if best is None else best[1]

    def park(
        self, conn: Conn, timeout_at: int | None, deliver: Deliver, named: list[Tube] | None = None
    ) -> None:
        """Make `conn` wait for a job of its watched tubes (or of the `named` tubes of a
        Workq lease: the caller took a reference on each, `unpark` drops it):
        `conn.waiter`, count waiting, a place in each tube's FIFO of waiters
        (`tube.waiting`), a WAITER timer at the earlier of `timeout_at` and the
        DEADLINE_SOON margin. `deliver` gets the outcome."""
        waiter = Waiter(conn, timeout_at, deliver, conn.watch if named is None else named)
        waiter.named = named is not None
        conn.waiter = waiter
        self.counts.waiting += 1
        for tube in waiter.tubes:
            waiters = tube.waiters
            if not tube.waiting:
                waiters.clear()  # every queued entry is stale
            elif len(waiters) > 2 * tube.waiting + 16:
                live = [w for w in waiters if w.active]
                waiters.clear()
                waiters.extend(live)
            tube.waiting += 1
            waiters.append(waiter)
        soonest = None if waiter.named else conn.soonest_deadline()
        when = timeout_at
        if soonest is not None and (when is None or soonest - SAFETY_MARGIN_MS < when):
            when = soonest - SAFETY_MARGIN_MS
        if when is not None:
            self.timers.arm(when, WAITER, waiter)

    def unpark(self, waiter: Waiter) -> None:
        """Undo `park` without answering: the waiter goes inactive (its FIFO entries are
        dropped lazily), counts waiting -1, its timer cancelled, named tubes released."""
        waiter.active = False
        conn = waiter.conn
        conn.waiter = None
        self.counts.waiting -= 1
        for tube in waiter.tubes:
            tube.waiting -= 1
        self.timers.cancel(waiter)
        if waiter.named:
            for tube in waiter.tubes:
                self.unref(tube)

    def serve_waiters(self, tube: Tube, now: int) -> None:
        """Hand ready jobs of `tube` to its parked reserves, first come first served."""
        if tube.pause_ms:
            return
        waiters = tube.waiters
        while waiters and tube.ready:
            waiter = waiters.popleft()
            if not waiter.active:
                continue
            job = self.best_in(waiter.tubes)
            assert job is not None
            self.unpark(waiter)
            self.take_out(job)
            self.make_reserved(waiter.conn, job, now)
            waiter.deliver(job)
