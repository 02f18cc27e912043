"""Compaction: which segment pins which live item, and when to migrate.

Every live item (a job, a paused tube, a named state) pins the segment holding its latest
*full* record. Segments are dropped oldest first, and only once nothing pins them: updates
and deletes in a segment are superseded by (or refer to) records in the same or older
segments, so dropping a prefix of the log never changes what replay rebuilds.

Policy: when the log's disk use exceeds twice the live bytes plus a few segments, live
items of the oldest segment are rewritten forward ("migrated") into the current segment,
a bounded number of bytes per flush (buried jobs move with the rest of their tube's
buried list, see durability/compactor.py), until it pins nothing and can be dropped. Disk use
therefore stays near `2 * live + 3 * segment size` under any churn.
"""

from __future__ import annotations

from collections.abc import Hashable
from itertools import islice

MIN_BUDGET = 256 * 1024  # bytes migrated per flush at least, when compaction is due
MAX_BUDGET = 4 << 20  # ... and at most (bounds the pause one flush can add)
SLACK_SEGMENTS = 3  # current, spare, and one being emptied


def should_compact(disk_bytes: int, live_bytes: int, segment_size: int) -> bool:
    return disk_bytes > 2 * live_bytes + SLACK_SEGMENTS * segment_size


def budget(bytes_written: int) -> int:
    """Migrate at least twice what was written since the last pass, so compaction
    outruns churn."""
    return min(MAX_BUDGET, max(MIN_BUDGET, 2 * bytes_written))


class Ledger:
    """Live items by the segment that holds their latest full record, with its size."""

    __slots__ = ("by_segment", "live_bytes", "pending")

    def __init__(self) -> None:
        self.by_segment: dict[int, dict[Hashable, int]] = {}
        self.live_bytes = 0
        # segment -> runs of items added in bulk, grouped on the segment's first use
        self.pending: dict[int, list[tuple[list[Hashable], int | list[int]]]] = {}

    def add_run(self, segment: int, items: list[Hashable], sizes: int | list[int]) -> None:
        """Items of one segment, each of size `sizes` or sizes[i] (start-up: a snapshot's
        jobs, a run at a time). Grouping a million items costs ~0.1 s, so each segment's
        are grouped when it is first asked about (its first remove, live or items), not
        before the server's first reply."""
        self.pending.setdefault(segment, []).append((items, sizes))
        self.live_bytes += sizes * len(items) if isinstance(sizes, int) else sum(sizes)

    def _group(self, segment: int) -> None:
        held = self.by_segment.setdefault(segment, {})
        for items, sizes in self.pending.pop(segment):
            if isinstance(sizes, int):
                held.update(dict.fromkeys(items, sizes))
            else:
                held.update(zip(items, sizes, strict=True))
        if not held:
            del self.by_segment[segment]

    def segments(self) -> dict[int, dict[Hashable, int]]:
        """Every segment's items (all grouped now: for checks, not for the hot path)."""
        for segment in list(self.pending):
            self._group(segment)
        return self.by_segment

    def add(self, item: Hashable, segment: int, size: int) -> None:
        if self.pending and segment in self.pending:
            self._group(segment)
        items = self.by_segment.get(segment)
        if items is None:
            items = self.by_segment[segment] = {}
        items[item] = size
        self.live_bytes += size

    def adopt(self, by_segment: dict[int, dict[Hashable, int]]) -> None:
        """Take over items already grouped by segment, {item: size} each (start-up: the
        restore pins every job as it folds it, so no pass over the jobs is left here)."""
        for segment, items in by_segment.items():
            held = self.by_segment.get(segment)
            if held is None:
                self.by_segment[segment] = items
            else:
                held.update(items)
            self.live_bytes += sum(items.values())

    def remove(self, item: Hashable, segment: int) -> None:
        if self.pending and segment in self.pending:
            self._group(segment)
        items = self.by_segment.get(segment)
        if items is None:
            return
        size = items.get(item)  # get and del: compiled, native (pop is a generic call)
        if size is not None:
            del items[item]
            self.live_bytes -= size
            if not items:
                del self.by_segment[segment]

    def live(self, segment: int) -> int:
        if self.pending and segment in self.pending:
            self._group(segment)
        items = self.by_segment.get(segment)
        return 0 if items is None else len(items)

    def items(self, segment: int, limit: int) -> list[Hashable]:
        """Up to `limit` items pinning `segment` (oldest placed first)."""
        if self.pending and segment in self.pending:
            self._group(segment)
        return list(islice(self.by_segment.get(segment, ()), limit))
