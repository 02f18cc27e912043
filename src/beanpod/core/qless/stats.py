"""Per-queue per-day statistics, kept live (qless's `stats`): wait and run time series
with Welford's mean/variance and the 148-bucket histogram; failures, failed, retries.

Nothing is computed by scanning: every pop, complete, fail and lock loss updates one day
bin. Bins older than `stats-history` days are dropped as new days begin.

Persistence: every bin handed out for a change is marked dirty; the store journals the
dirty bins (one STATE record each, see `Qless.flush_stats`) at the end of the call that
changed them, and removes the records of dropped bins. `to_state`/`load` are the codec.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

DAY_MS = 86_400_000
BUCKETS = 148  # s0..s59, m1..m59, h1..h23, d1..d6


def bucket(seconds: float) -> int | None:
    """The histogram slot of a duration (None for 7 days or more: counted nowhere)."""
    s = max(0, math.floor(seconds))
    if s < 60:
        return s
    if s < 3600:
        return 59 + s // 60
    if s < 86400:
        return 118 + s // 3600
    if s < 7 * 86400:
        return 141 + s // 86400
    return None


class Series:
    __slots__ = ("count", "histogram", "mean", "vk")

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self.vk = 0.0
        self.histogram = [0] * BUCKETS

    def add(self, seconds: float) -> None:
        self.count += 1
        old = self.mean
        self.mean = old + (seconds - old) / self.count
        self.vk += (seconds - self.mean) * (seconds - old)
        slot = bucket(seconds)
        if slot is not None:
            self.histogram[slot] += 1

    def to_json(self) -> dict[str, Any]:
        std = math.sqrt(self.vk / (self.count - 1)) if self.count > 1 else 0
        return {"count": self.count, "mean": self.mean, "std": std,
                "histogram": list(self.histogram)}  # fmt: skip

    def to_state(self) -> dict[str, Any]:
        """The exact accumulators (the histogram sparse: {slot: count})."""
        slots = {str(i): n for i, n in enumerate(self.histogram) if n}
        return {"count": self.count, "mean": self.mean, "vk": self.vk, "histogram": slots}

    def load(self, doc: dict[str, Any]) -> None:
        self.count = int(doc["count"])
        self.mean = float(doc["mean"])
        self.vk = float(doc["vk"])
        for slot, n in doc["histogram"].items():
            self.histogram[int(slot)] = int(n)


class DayStats:
    __slots__ = ("failed", "failures", "retries", "run", "wait")

    def __init__(self) -> None:
        self.retries = 0
        self.failed = 0
        self.failures = 0
        self.wait = Series()
        self.run = Series()

    def to_json(self) -> dict[str, Any]:
        return {"retries": self.retries, "failed": self.failed, "failures": self.failures,
                "wait": self.wait.to_json(), "run": self.run.to_json()}  # fmt: skip

    def to_state(self) -> dict[str, Any]:
        return {"retries": self.retries, "failed": self.failed, "failures": self.failures,
                "wait": self.wait.to_state(), "run": self.run.to_state()}  # fmt: skip

    def load(self, doc: dict[str, Any]) -> None:
        self.retries = int(doc["retries"])
        self.failed = int(doc["failed"])
        self.failures = int(doc["failures"])
        self.wait.load(doc["wait"])
        self.run.load(doc["run"])


class Stats:
    """Day bins per queue; `history_days` bounds how many days are kept."""

    def __init__(self) -> None:
        self.bins: dict[tuple[str, int], DayStats] = {}
        self.days: dict[str, deque[int]] = {}  # per queue, days with a bin, oldest first
        self.history_days = 30
        self.dirty: set[tuple[str, int]] = set()  # bins changed since the last flush
        self.dropped: set[tuple[str, int]] = set()  # bins dropped since the last flush

    def day(self, queue: str, when_ms: int) -> DayStats:
        """The bin of the UTC day containing `when_ms`, created on first use (marked
        dirty: the caller changes it)."""
        day = when_ms // DAY_MS
        key = (queue, day)
        found = self.bins.get(key)
        if found is None:
            found = self.bins[key] = DayStats()
            self._note_day(queue, day)
        self.dirty.add(key)
        return found

    def _note_day(self, queue: str, day: int) -> None:
        days = self.days.setdefault(queue, deque())
        days.append(day)
        while days and days[0] <= day - self.history_days:
            old = (queue, days.popleft())
            self.bins.pop(old, None)
            self.dirty.discard(old)
            self.dropped.add(old)

    def load(self, queue: str, day: int, doc: dict[str, Any]) -> None:
        """Restore a journalled bin (call in day order)."""
        found = self.bins[(queue, day)] = DayStats()
        found.load(doc)
        self._note_day(queue, day)

    def forget_all(self) -> None:
        """Drop every bin (journalled as dropped at the next flush)."""
        self.dropped.update(self.bins)
        self.bins.clear()
        self.days.clear()
        self.dirty.clear()

    def take_changes(self) -> tuple[list[tuple[str, int, DayStats]], list[tuple[str, int]]]:
        """(dirty bins, dropped bins) since the last call; both are then forgotten."""
        bins = self.bins
        dirty = [(queue, day, found) for queue, day in sorted(self.dirty)
                 if (found := bins.get((queue, day))) is not None]  # fmt: skip
        dropped = sorted(self.dropped)
        self.dirty.clear()
        self.dropped.clear()
        return dirty, dropped

    def get(self, queue: str, when_ms: int) -> dict[str, Any]:
        found = self.bins.get((queue, when_ms // DAY_MS))
        return (found or DayStats()).to_json()

    def existing(self, queue: str, when_ms: int) -> DayStats | None:
        """The bin of an earlier day, if still kept (for `failed -1` on the failure's day);
        marked dirty when found."""
        key = (queue, when_ms // DAY_MS)
        found = self.bins.get(key)
        if found is not None:
            self.dirty.add(key)
        return found
