"""A tube (= Workq name = qless queue): its ready and delayed heaps, buried list, counters."""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Any

from beanpod.core.pqueue import LazyHeap
from beanpod.core.timings import Tally

if TYPE_CHECKING:
    from beanpod.core.job import Job
    from beanpod.core.job_index import JobIndex
    from beanpod.core.waiters import Waiter

MAX_TUBE_NAME = 200


class Tube:
    """Ready jobs ordered by (pri, id); delayed by (due, id); buried FIFO by bury time."""

    __slots__ = (
        "buried",
        "buries",
        "cmd_delete",
        "cmd_pause",
        "delayed",
        "index",
        "jobs",
        "kicks",
        "name",
        "name_bytes",
        "pause_ms",
        "pause_until",
        "ready",
        "refs",
        "reserved",
        "run_times",
        "timeouts",
        "timer",
        "total_jobs",
        "urgent",
        "using",
        "wait_times",
        "waiters",
        "waiting",
        "watching",
    )

    def __init__(self, name: str, index: int, jobs: JobIndex) -> None:
        self.name = name
        self.name_bytes = name.encode("ascii")
        self.index = index  # position in the engine's tube list (list-tubes order)
        self.ready = LazyHeap(jobs)  # jobs: every job by id, to find a job from its heap key
        self.delayed = LazyHeap(jobs, wide=True)
        self.buried: OrderedDict[int, Job] = OrderedDict()
        self.waiters: deque[Waiter] = deque()  # parked reserves, arrival order (lazily pruned)
        self.refs = 0  # connections using or watching it, plus its jobs
        self.jobs = 0
        self.using = 0
        self.watching = 0
        self.waiting = 0
        self.urgent = 0
        self.reserved = 0
        self.total_jobs = 0
        self.cmd_delete = 0
        self.cmd_pause = 0
        # Lifetime totals for /metrics (like total_jobs: they start again with the tube).
        self.timeouts = 0  # reservations that ran out of time
        self.buries = 0  # jobs buried
        self.kicks = 0  # jobs kicked
        # The tallies of this tube's wait and run histograms (core/timings.py), attached
        # while the engine keeps timings; unused otherwise.
        self.wait_times = Tally()
        self.run_times = Tally()
        self.pause_ms = 0  # length of the current pause; 0 when not paused
        self.pause_until = 0
        self.timer: Any = None

    @property
    def paused(self) -> bool:
        return self.pause_ms > 0

    def __repr__(self) -> str:
        return f"<Tube {self.name}>"
