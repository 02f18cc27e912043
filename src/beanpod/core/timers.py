"""One heap for every deadline in the engine, with lazy invalidation.

An entry `(when, seq, kind, target)` is live only while `target.timer is entry`;
re-arming or cancelling a target simply replaces or clears `target.timer`.
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush
from itertools import count
from typing import Any, cast

# Timer kinds: what to do when an entry falls due.
DELAY_DUE = 0  # a delayed job becomes ready
TTR_EXPIRY = 1  # a reserved job's time to run is over
WAITER = 2  # a parked reserve times out or reaches its DEADLINE_SOON margin
PAUSE_END = 3  # a paused tube resumes

TimerEntry = tuple[int, int, int, Any]


def heap_entry(entry: Any) -> TimerEntry:
    """Type the entry again (mypy widens it to Any after an identity test)."""
    return cast(TimerEntry, entry)


class TimerHeap:
    __slots__ = ("_dead", "_heap", "_seq")

    def __init__(self) -> None:
        self._heap: list[TimerEntry] = []
        self._seq = count()
        self._dead = 0

    def __len__(self) -> int:
        return len(self._heap) - self._dead

    def arm(self, when: int, kind: int, target: Any) -> None:
        """(Re)arm `target`'s single timer to fire at `when`."""
        if target.timer is not None:
            self._dead += 1
        entry = (when, next(self._seq), kind, target)
        target.timer = entry
        heappush(self._heap, entry)

    def cancel(self, target: Any) -> None:
        if target.timer is not None:
            target.timer = None
            self._dead += 1
            if self._dead > 4096 and self._dead * 2 > len(self._heap):
                self._compact()

    def _compact(self) -> None:
        heap = [e for e in self._heap if e[3].timer is e]
        heapify(heap)
        self._heap = heap
        self._dead = 0

    def next_due(self) -> int | None:
        """When the earliest live timer fires, or None if none is armed."""
        heap = self._heap
        while heap:
            entry = heap[0]
            if entry[3].timer is entry:
                return int(entry[0])
            heappop(heap)
            self._dead -= 1
        return None

    def pop_due(self, now: int) -> TimerEntry | None:
        """Disarm and return the earliest live entry due at or before `now`."""
        heap = self._heap
        while heap:
            entry = heap[0]
            if entry[3].timer is not entry:
                heappop(heap)
                self._dead -= 1
                continue
            if entry[0] > now:
                return None
            heappop(heap)
            entry[3].timer = None
            return heap_entry(entry)
        return None
