"""One queue for every deadline in the engine, with lazy invalidation.

An entry `(when, seq, kind, target)` is live only while `target.timer is entry`;
re-arming or cancelling a target simply replaces or clears `target.timer`. As in
`pqueue.LazyHeap`, entries armed in time order (TTRs of one length, delays of one
length) are appended to a run (a deque) and never enter the heap: arming and expiring
them is O(1), and a reserve+delete pair skips a heap push and a heap pop.
"""

from __future__ import annotations

from collections import deque
from heapq import heapify, heappop, heappush
from typing import TYPE_CHECKING, Any, Final, cast

if TYPE_CHECKING:
    from beanpod.core.job import Job

# Timer kinds: what to do when an entry falls due.
DELAY_DUE: Final = 0  # a delayed job becomes ready
TTR_EXPIRY: Final = 1  # a reserved job's time to run is over
WAITER: Final = 2  # a parked reserve times out or reaches its DEADLINE_SOON margin
PAUSE_END: Final = 3  # a paused tube resumes

# (when, seq, kind, target). Variable-length to mypyc: kept as the one tuple object, not
# unboxed and boxed again, since liveness is tested by identity (`target.timer is entry`).
TimerEntry = tuple[Any, ...]


def heap_entry(entry: Any) -> TimerEntry:
    """Type the entry again (mypy widens it to Any after an identity test)."""
    return cast(TimerEntry, entry)


class TimerHeap:
    __slots__ = ("_dead", "_heap", "_run", "_seq")

    def __init__(self) -> None:
        self._run: deque[TimerEntry] = deque()  # entries in (when, seq) order
        self._heap: list[TimerEntry] = []  # entries armed out of time order
        self._seq = 0  # breaks ties of `when` in arming order (compiled: a native int)
        self._dead = 0

    def __len__(self) -> int:
        return len(self._run) + len(self._heap) - self._dead

    @property
    def stored(self) -> int:
        """Entries held, live and dead (how much lazy deletion has left behind)."""
        return len(self._run) + len(self._heap)

    def arm(self, when: int, kind: int, target: Any) -> None:
        """(Re)arm `target`'s single timer to fire at `when`."""
        if target.timer is not None:
            self._dead += 1
        target.timer = self._queue(when, kind, target)

    def arm_job(self, when: int, kind: int, job: Job) -> None:
        """`arm` for a job, the engine's own target (compiled, the job's `timer` is read
        and written natively; `arm`'s `Any` target is a generic attribute lookup each)."""
        if job.timer is not None:
            self._dead += 1
        job.timer = self._queue(when, kind, job)

    def _queue(self, when: int, kind: int, target: object) -> TimerEntry:
        seq = self._seq = self._seq + 1
        entry: TimerEntry = (when, seq, kind, target)  # one object: see TimerEntry
        run = self._run
        if not run or when >= run[-1][0]:  # seq breaks the tie: still in order
            run.append(entry)
        else:
            heappush(self._heap, entry)
        return entry

    def cancel(self, target: Any) -> None:
        entry = target.timer
        if entry is not None:
            target.timer = None
            self._drop(entry)

    def cancel_job(self, job: Job) -> None:
        """`cancel` for a job (see `arm_job`)."""
        entry = job.timer
        if entry is not None:
            job.timer = None
            self._drop(entry)

    def _drop(self, entry: TimerEntry) -> None:
        """Forget a disarmed entry: at either end of the run (FIFO or LIFO finishing) it
        goes at once; elsewhere it stays, dead, until it reaches a front or a compaction."""
        run = self._run
        if run:
            if run[0] is entry:
                run.popleft()
                return
            if run[-1] is entry:
                run.pop()
                return
        dead = self._dead = self._dead + 1
        if dead > 4096 and dead * 2 > len(self._run) + len(self._heap):
            self._compact()

    def _compact(self) -> None:
        self._run = deque(e for e in self._run if e[3].timer is e)
        heap = [e for e in self._heap if e[3].timer is e]
        heapify(heap)
        self._heap = heap
        self._dead = 0

    def _front(self) -> TimerEntry | None:
        """The earliest live entry (dead ones in front are dropped), left in place."""
        run, heap = self._run, self._heap
        while run:
            entry = run[0]
            if entry[3].timer is entry:
                break
            run.popleft()
            self._dead -= 1
        while heap:
            entry = heap[0]
            if entry[3].timer is entry:
                break
            heappop(heap)
            self._dead -= 1
        if run:
            return run[0] if not heap or run[0] < heap[0] else heap[0]
        return heap[0] if heap else None

    def next_due(self) -> int | None:
        """When the earliest live timer fires, or None if none is armed."""
        run = self._run
        if not self._heap:  # the usual case: the run alone, empty or its front live
            if not run:
                return None
            head = run[0]
            when: int = head[0]
            if head[3].timer is head:
                return when
        entry = self._front()
        return None if entry is None else entry[0]

    def pop_due(self, now: int) -> TimerEntry | None:
        """Disarm and return the earliest live entry due at or before `now`."""
        entry = self._front()
        if entry is None or entry[0] > now:
            return None
        run = self._run
        if run and run[0] is entry:
            run.popleft()
        else:
            heappop(self._heap)
        entry[3].timer = None
        return heap_entry(entry)
