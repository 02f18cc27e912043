"""Which ready-heap key a past instant had: lets a recurring child rank by its intended
time, as qless scores it, although it is spawned later (at a pop or peek).

Ready keys within a priority band come from the engine's id sequence (moves.py), which
grows with time. When a qless call's `now` is later than the previous call's
(`latest`), `advance` notes (`note(latest, next_id)`) that every id below `next_id` was
allocated at or before `last_now`. A child intended at `s` (before the current call's
`now`) then takes key `next_id - 1` of the last mark at or before `s`: it ties with the
last job allocated by then and ranks after it (ties go by job id, and the child's id is
newer), ahead of every job that became waiting later. Ids used by beanstalkd commands
between two qless calls count as allocated at the earlier call (docs/qless.md). Memory
is bounded: past MAX_MARKS the older half of the marks is dropped, and an instant older
than every mark ranks as the oldest mark.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right

MAX_MARKS = 1 << 16


class Timeline:
    __slots__ = ("ids", "latest", "times")

    def __init__(self) -> None:
        self.times = array("q")  # engine ms, increasing
        self.ids = array("q")  # the engine's next id once that instant was over
        self.latest = 0  # the latest instant a qless call ran at

    def advance(self, now: int, next_id: int) -> None:
        """A qless call runs at `now`: when that is later than the latest, every id
        below `next_id` was allocated at or before the latest."""
        if now > self.latest:
            self.note(self.latest, next_id)
            self.latest = now

    def note(self, when: int, next_id: int) -> None:
        """Every id below `next_id` was allocated at or before `when`."""
        if len(self.times) >= MAX_MARKS:
            half = MAX_MARKS // 2
            del self.times[:half]
            del self.ids[:half]
        self.times.append(when)
        self.ids.append(next_id)

    def key_at(self, when: int, now: int) -> int | None:
        """The ready key that ranks a job as if it became waiting at `when`; None when
        `when` is `now` or later (allocate a fresh key then)."""
        times = self.times
        if not times or when >= now:
            return None
        at = bisect_right(times, when) - 1
        return max(1, self.ids[max(0, at)] - 1)
