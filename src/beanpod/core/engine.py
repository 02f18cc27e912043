"""The engine: every queue operation, synchronous, with `now` (integer ms) passed in.

Dialects call these operations; `tick(now)` fires due timers and returns the next
deadline for the server's ticker. No I/O, no clocks: effects leave through the
`journal` and `events` seams.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from operator import attrgetter
from typing import Any

from beanpod.core.conn import UNKNOWN, Conn
from beanpod.core.job import (
    BURIED,
    DELAYED,
    HELD_STATES,
    ONE_RESERVE,
    READY,
    RESERVED,
    RESERVES_MASK,
    STATE_NAMES,
    URGENT_PRIORITY,
    Job,
    JobExt,
    JobState,
    MoveCheck,
    check_placed,
    move,
)
from beanpod.core.journal import EventSink, Journal
from beanpod.core.memory import MemoryMeter
from beanpod.core.pqueue import delayed_key, ready_key
from beanpod.core.stats import Counters
from beanpod.core.timers import DELAY_DUE, PAUSE_END, TTR_EXPIRY, WAITER, TimerHeap
from beanpod.core.timings import JobTimings
from beanpod.core.tube import Tube
from beanpod.core.waiters import DEADLINE_SOON, TIMED_OUT, Deliver, ReserveOutcome, Waiter

DEFAULT_TUBE = "default"
SAFETY_MARGIN_MS = 1000  # the last second of a reservation (DEADLINE_SOON)
_URGENT_KEY = ready_key(URGENT_PRIORITY, 0)  # every urgent job's ready key is below it
_ENTRY = attrgetter("entry")


class Engine:
    def __init__(self, check: MoveCheck | None = None) -> None:
        # The state table's check of every move (tests, `serve --check-moves`); None: off.
        self.check = check
        self.jobs: dict[int, Job] = {}
        self.tubes: dict[str, Tube] = {}
        self.tube_list: list[Tube] = []  # list-tubes order (beanstalkd's swap-remove array)
        self.timers = TimerHeap()
        self.counts = Counters()
        self.next_id = 1
        self.next_conn_id = 1
        self.draining = False
        self.journal: Journal | None = None
        self.events: EventSink | None = None
        self.timings: JobTimings | None = None  # wait/run histograms (/metrics), when on
        # --max-memory / --max-jobs-per-tube (`keep_meter`): put and destroy count what
        # they add and drop; one attribute test each when off.
        self.meter: MemoryMeter | None = None
        # What each timer kind does when due; extensions register their own kinds.
        self.timer_handlers: dict[int, Callable[[Any, int], None]] = {
            DELAY_DUE: self._delay_due,
            TTR_EXPIRY: self.expire,
            WAITER: self._waiter_due,
            PAUSE_END: self._unpause,
        }
        # Called as hook(job, now) when a job carrying extension data (job.ext) is destroyed,
        # so extensions drop their indexes and timers (e.g. the Workq uuid index).
        self.destroy_hooks: list[Callable[[Job, int], None]] = []
        # Called as hook(job, now) before a job carrying extension data is kicked, so
        # extensions see it leave buried/delayed (a kicked failed qless job leaves its group).
        self.kick_hooks: list[Callable[[Job, int], None]] = []
        self.default_tube = self.tube(DEFAULT_TUBE)
        self.default_tube.refs += 1  # "default" always exists

    def keep_meter(self, meter: MemoryMeter) -> None:
        """From now on, count the jobs held and their bytes against `meter` (the memory
        cap): those held now, then every job put adds and destroy drops."""
        meter.jobs = len(self.jobs)
        meter.body_bytes = sum(len(job.body) for job in self.jobs.values())
        self.meter = meter

    # ---- tubes -------------------------------------------------------------------------

    def tube(self, name: str) -> Tube:
        """The tube called `name`, created on first reference."""
        tube = self.tubes.get(name)
        if tube is None:
            tube = Tube(name, len(self.tube_list), self.jobs)
            self.tubes[name] = tube
            self.tube_list.append(tube)
            if self.timings is not None:
                self.timings.attach(tube)
        return tube

    def keep_timings(self, timings: JobTimings) -> None:
        """From now on, record how long jobs wait and run (for /metrics)."""
        self.timings = timings
        for tube in self.tube_list:
            timings.attach(tube)

    def unref(self, tube: Tube) -> None:
        """Drop one reference to `tube`; at zero it is forgotten: out of `tubes`, out of
        the list-tubes order (swap-remove), its pause timer cancelled."""
        tube.refs -= 1
        if tube.refs == 0:
            del self.tubes[tube.name]
            last = self.tube_list.pop()
            if last is not tube:
                self.tube_list[tube.index] = last
                last.index = tube.index
            self.timers.cancel(tube)

    # ---- admission ---------------------------------------------------------------------

    def refuses(self, nbytes: int = 0) -> bool:
        """The one admission check, asked before any change that writes a record: True
        when the write-ahead log's disk cannot take one carrying `nbytes` of payload.
        The caller then answers its protocol's refusal (beanstalkd OUT_OF_MEMORY, a Workq
        or qless error, the admin API's 507) and changes nothing. Every dialect asks here;
        beanstalkd's put inlines these two lines (a call costs ~2 % of a put)."""
        journal = self.journal
        return journal is not None and not journal.room(nbytes)

    # ---- connections -------------------------------------------------------------------

    def connect(self, peer: str = "", now: int = 0) -> Conn:
        """A client connection from `peer` (its address), opened at `now`."""
        conn = Conn(self.next_conn_id, self.default_tube, peer, now)
        self.next_conn_id += 1
        tube = self.default_tube
        tube.refs += 2
        tube.using += 1
        tube.watching += 1
        self.counts.conns += 1
        self.counts.total_connections += 1
        return conn

    def disconnect(self, conn: Conn, now: int) -> None:
        """Forget `conn`: its reserved jobs return to ready at once (no counters change)."""
        if conn.waiter is not None:
            self.unpark(conn.waiter)
        counts = self.counts
        counts.conns -= 1
        if conn.producer:
            counts.producers -= 1
        if conn.worker:
            counts.workers -= 1
        for job in list(conn.reserved.values()):
            self.unreserve(job)
            self.make_ready(job, now)
        conn.use.using -= 1
        self.unref(conn.use)
        for tube in conn.watch:
            tube.watching -= 1
            self.unref(tube)
        conn.watch = []

    def use(self, conn: Conn, name: str) -> Tube:
        tube = self.tube(name)
        tube.refs += 1
        tube.using += 1
        old = conn.use
        conn.use = tube
        old.using -= 1
        self.unref(old)
        return tube

    def watch(self, conn: Conn, name: str) -> int:
        tube = self.tube(name)
        if tube not in conn.watch:
            conn.watch.append(tube)
            tube.refs += 1
            tube.watching += 1
        return len(conn.watch)

    def ignore(self, conn: Conn, name: str) -> int | None:
        """Stop watching `name`; None when it is the last watched tube (NOT_IGNORED)."""
        watch = conn.watch
        for i, tube in enumerate(watch):
            if tube.name == name:
                if len(watch) < 2:
                    return None
                last = watch.pop()
                if last is not tube:
                    watch[i] = last
                tube.watching -= 1
                self.unref(tube)
                break
        return len(watch)

    def set_producer(self, conn: Conn) -> None:
        if not conn.producer:
            conn.producer = True
            self.counts.producers += 1

    def set_worker(self, conn: Conn) -> None:
        if not conn.worker:
            conn.worker = True
            self.counts.workers += 1

    # ---- producing ---------------------------------------------------------------------

    def allocate_id(self) -> int:
        """Use up the next job id (beanstalkd spends one even on a put it then refuses)."""
        job_id = self.next_id
        self.next_id = job_id + 1
        return job_id

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
        tube.ready.push_ready(job, order)
        counts = self.counts
        counts.ready += 1
        if job.pri < URGENT_PRIORITY:
            counts.urgent += 1
            tube.urgent += 1
        if tube.waiting:
            self._serve(tube, now)

    def make_ready_restored(
        self, tube: Tube, jobs: list[Job], now: int, keys: list[int] | None = None
    ) -> None:
        """`make_ready` for many jobs of `tube` at once: jobs a restart re-created READY,
        each holding its ready key (`restored_job`; `keys`: those keys, when the caller
        has them, sorted here in place). The keys are sorted once and join the heap in
        one extend, the counters change once (urgent jobs are the keys below pri 1024's
        first): C-level passes instead of a call per job."""
        check_placed(jobs, READY, self.check)
        if keys is None:
            keys = list(map(_ENTRY, jobs))
        keys.sort()
        tube.ready.extend(keys)
        urgent = bisect_left(keys, _URGENT_KEY)
        counts = self.counts
        counts.ready += len(keys)
        counts.urgent += urgent
        tube.urgent += urgent
        if tube.waiting:
            self._serve(tube, now)

    def make_delayed(self, job: Job, due: int) -> None:
        """Place a job that is in no queue in its tube's delayed heap until `due`: state
        DELAYED, `job.deadline = due`, count delayed, a DELAY_DUE timer armed."""
        move(job, DELAYED, self.check)
        job.deadline = due
        job.tube.delayed.push(delayed_key(due, job.id), job)
        self.counts.delayed += 1
        self.timers.arm(due, DELAY_DUE, job)

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
            self.timers.cancel(job)
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
            if not job.counters & RESERVES_MASK:  # its first reserve: it waited this long
                job.tube.wait_times.append(now - job.created)  # binned later (timings.py)
            job.entry = now  # in no heap while reserved: the slot keeps the reserve time
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
        self.timers.arm(deadline, TTR_EXPIRY, job)
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
        self.timers.cancel(job)
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

    # ---- the extensions' moves ------------------------------------------------------------
    # What qless and Workq need beyond the queue moves above, so that no field the engine
    # owns is written and no timer armed outside it (tests/unit/test_architecture.py).

    def detached_conn(self, dialect: str, peer: str = "", since: int = 0, name: str = "") -> Conn:
        """A connection for work no client holds (a qless worker's locks, a Workq lease, an
        operator's bury): it watches nothing, is not counted among clients and is never
        disconnected. `dialect`, `peer`, `since` and `name` tell the console who it is."""
        conn = Conn(self.next_conn_id, self.default_tube, peer, since, name, dialect)
        conn.watch = []
        self.next_conn_id += 1
        return conn

    def keep_tube(self, name: str) -> Tube:
        """The tube `name`, with one more reference on it (it outlives its jobs, a pause
        included); `unref` gives the reference back."""
        tube = self.tube(name)
        tube.refs += 1
        return tube

    def retube(self, job: Job, tube: Tube, counted: bool = False) -> bool:
        """Move a job that is in no queue to `tube` (its reference moves with it; an old
        tube left unused goes); False if it is there already. `counted`: the job counts
        as put into `tube` (stats-tube total-jobs), as a qless move does."""
        old = job.tube
        if old is tube:
            return False
        old.jobs -= 1
        job.tube = tube
        tube.jobs += 1
        tube.refs += 1
        if counted:
            tube.total_jobs += 1
        self.unref(old)
        return True

    def amend(
        self,
        job: Job,
        pri: int | None = None,
        delay: int | None = None,
        ttr: int | None = None,
        body: bytes | None = None,
    ) -> None:
        """Change what a job carries. `pri` only while it is in no queue (the heaps and
        the urgent counts read it when it is placed); `delay`, `ttr` and `body` any time
        (the next reservation reads the TTR; the memory cap counts the new body)."""
        if pri is not None:
            job.pri = pri
        if delay is not None:
            job.delay = delay
        if ttr is not None:
            job.ttr = ttr
        if body is not None:
            meter = self.meter
            if meter is not None:
                meter.removed(job)
            job.body = body
            if meter is not None:
                meter.added(job)

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

    def attach(self, job: Job, ext: JobExt) -> None:
        """Give a plain job an extension's extras (qless pop adopting a beanstalkd job)."""
        job.ext = ext

    def ids_above(self, used: int) -> None:
        """Ids an extension spent elsewhere (qless ready-key orders) are not handed out:
        the next id is above `used`."""
        if used >= self.next_id:
            self.next_id = used + 1

    def arm(self, when: int, kind: int, target: Any) -> None:
        """(Re)arm `target`'s timer of an extension's `kind` (see `timer_handlers`) for
        `when`; its handler runs then. A job's or tube's timer replaces the engine's own."""
        self.timers.arm(when, kind, target)

    def disarm(self, target: Any) -> None:
        """Cancel `target`'s timer, if armed."""
        self.timers.cancel(target)

    def move_deadline(self, job: Job, deadline: int, kind: int = TTR_EXPIRY) -> None:
        """A reserved job's reservation now ends at `deadline` (touch, a qless lock
        renewal): its connection's soonest deadline is found again, and the timer of
        `kind` (the TTR expiry, or an extension's) armed for then."""
        job.deadline = deadline
        conn = job.reserver
        assert conn is not None
        conn.deadline_moved(job)
        self.timers.arm(deadline, kind, job)

    def count_delete(self, job: Job) -> None:
        """A delete command of another dialect removes `job` (stats-tube cmd-delete)."""
        job.tube.cmd_delete += 1

    def time_out(self, job: Job, now: int) -> None:
        """A reservation ran out of time: it ends, counted as a timeout (job, tube and
        engine) with a timeout event. The job is then in no queue: `expire` makes it
        ready, an extension may finish it instead (a Workq job out of attempts)."""
        self.unreserve(job)
        job.timeouts += 1
        job.tube.timeouts += 1
        self.counts.job_timeouts += 1
        if self.events is not None:
            self.events.emit(now, "timeout", job.id, job.tube.name, None)

    # ---- consuming ---------------------------------------------------------------------

    def _best_in(self, tubes: list[Tube]) -> Job | None:
        """The smallest (pri, id) ready job across the unpaused `tubes`."""
        best: tuple[int, Job] | None = None
        for tube in tubes:
            if tube.pause_ms or not tube.ready:
                continue
            top = tube.ready.top()
            if top is not None and (best is None or top[0] < best[0]):
                best = top
        return None if best is None else best[1]

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
            job = self._best_in(watch)
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
        job = self._best_in(tubes)
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

    def _serve(self, tube: Tube, now: int) -> None:
        """Hand ready jobs of `tube` to its parked reserves, first come first served."""
        if tube.pause_ms:
            return
        waiters = tube.waiters
        while waiters and tube.ready:
            waiter = waiters.popleft()
            if not waiter.active:
                continue
            job = self._best_in(waiter.tubes)
            assert job is not None
            self.unpark(waiter)
            self.take_out(job)
            self.make_reserved(waiter.conn, job, now)
            waiter.deliver(job)

    def reserve_job(self, conn: Conn, job_id: int, now: int) -> Job | None:
        """Reserve a specific ready, delayed or buried job (beanstalkd 1.12 reserve-job)."""
        job = self.jobs.get(job_id)
        if job is None or job.state is RESERVED or job.state in HELD_STATES:
            return None
        self.set_worker(conn)
        self.take_out(job)
        self.make_reserved(conn, job, now)
        return job

    def cancel_wait(self, conn: Conn) -> None:
        """Withdraw `conn`'s parked reserve without answering it."""
        if conn.waiter is not None:
            self.unpark(conn.waiter)

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
                job.tube.run_times.append(now - job.entry)
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
            tube.pause_ms = delay
            tube.pause_until = now + delay
            self.timers.arm(tube.pause_until, PAUSE_END, tube)
        else:
            self._unpause(tube, now)
        if self.journal is not None:
            self.journal.record_pause(tube)
        return True

    def _unpause(self, tube: Tube, now: int) -> None:
        tube.pause_ms = 0
        tube.pause_until = 0
        self.timers.cancel(tube)
        if tube.waiting:
            self._serve(tube, now)

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

    def expire(self, job: Job, now: int) -> None:
        """A reservation ran out of time: the job goes back to ready (the TTR_EXPIRY
        handler; an extension's handler may call it for the jobs it leaves alone)."""
        self.time_out(job, now)
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
        return tube.ready.peek()  # type: ignore[no-any-return]

    def peek_delayed(self, tube: Tube) -> Job | None:
        return tube.delayed.peek()  # type: ignore[no-any-return]

    def peek_buried(self, tube: Tube) -> Job | None:
        return next(iter(tube.buried.values()), None)
