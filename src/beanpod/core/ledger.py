"""The engine's books: the jobs, tubes, counters, timers and ids every move keeps true,
and the seams plugged in from outside (journal, events, timings, memory meter).

The engine is built in layers, one concept per module, each class inheriting the one
below (single inheritance, attributes declared here with their types):
`Ledger` (this module: the books, tubes, ids, timers) <- `Moves` (core/moves.py: the
public queue moves and the parked reserves they serve) <- `ExtensionMoves`
(core/extension_moves.py) <- `Clients` (core/clients.py: connections, use/watch)
<- `Engine` (core/engine.py: the operations of the dialects, tick).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beanpod.core.conn import Conn
from beanpod.core.job import Job, MoveCheck
from beanpod.core.job_index import JobIndex
from beanpod.core.journal import EventSink, Journal
from beanpod.core.memory import MemoryMeter
from beanpod.core.stats import Counters
from beanpod.core.timers import TimerHeap
from beanpod.core.timings import JobTimings
from beanpod.core.tube import Tube

DEFAULT_TUBE = "default"


class Ledger:
    def __init__(self, check: MoveCheck | None = None) -> None:
        # The state table's check of every move (tests, `serve --check-moves`); None: off.
        self.check = check
        self.jobs = JobIndex()  # every job by id (a dict would cost ~65 bytes more a job)
        self.tubes: dict[str, Tube] = {}
        self.tube_list: list[Tube] = []  # list-tubes order (beanstalkd's swap-remove array)
        # The client connections by id (connect to disconnect; the console's Busy view).
        self.clients: dict[int, Conn] = {}
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
        # What each timer kind does when due (Engine registers its own kinds; extensions
        # theirs).
        self.timer_handlers: dict[int, Callable[[Any, int], None]] = {}
        # Called as hook(job, now) when a job carrying extension data (job.ext) is destroyed,
        # so extensions drop their indexes and timers (e.g. the Workq uuid index).
        self.destroy_hooks: list[Callable[[Job, int], None]] = []
        # Called as hook(job, now) before a job carrying extension data is kicked, so
        # extensions see it leave buried/delayed (a kicked failed qless job leaves its group).
        self.kick_hooks: list[Callable[[Job, int], None]] = []
        # Called as hook(job, now) when the TTR of a reserved job carrying extension data
        # ran out (the reservation has ended, counted as a timeout): True when the
        # extension placed the job itself (a Workq job out of attempts fails), else the
        # engine makes it ready.
        self.expire_hooks: list[Callable[[Job, int], bool]] = []
        self.default_tube = self.tube(DEFAULT_TUBE)
        self.default_tube.refs += 1  # "default" always exists

    # ---- the memory meter --------------------------------------------------------------

    def keep_meter(self, meter: MemoryMeter) -> None:
        """From now on, count the jobs held and their bytes against `meter` (the memory
        cap): those held now, then every job put adds and destroy drops."""
        meter.jobs = len(self.jobs)
        meter.body_bytes = sum(len(job.body) for job in self.jobs.values())
        self.meter = meter

    def keep_journal(self, journal: Journal | None) -> None:
        """From now on, record every change in `journal` (None: in none)."""
        self.journal = journal

    def keep_events(self, events: EventSink, first_conn_id: int) -> None:
        """From now on, tell `events` every job and connection event; connections are
        numbered from `first_conn_id` (ids stay unique in a log kept across restarts)."""
        self.events = events
        self.next_conn_id = first_conn_id

    def start_draining(self) -> None:
        """Refuse new jobs (put answers DRAINING) from now on: SIGUSR1's drain mode."""
        self.draining = True

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

    def drop_if_unused(self, tube: Tube) -> None:
        """Forget `tube` if nothing refers to it (a restart created it for jobs all
        deleted since)."""
        if not tube.refs:
            tube.refs = 1
            self.unref(tube)

    def allocate_id(self) -> int:
        """Use up the next job id (beanstalkd spends one even on a put it then refuses)."""
        job_id = self.next_id
        self.next_id = job_id + 1
        return job_id

    def keep_tube(self, name: str) -> Tube:
        """The tube `name`, with one more reference on it (it outlives its jobs, a pause
        included); `unref` gives the reference back."""
        tube = self.tube(name)
        tube.refs += 1
        return tube

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
