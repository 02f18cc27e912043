"""A binary heap with O(1) removal by lazy deletion.

Entries are tuples whose last element is the item; an entry is live only while
`item.entry is entry`. Removing an item clears `item.entry` and leaves the dead
entry in the heap until it reaches the top or the heap is rebuilt. Keys must be
unique before the item (they end with the job id), so items are never compared.
"""

from __future__ import annotations

from collections.abc import Iterator
from heapq import heapify, heappop, heappush
from typing import Any, cast


class LazyHeap:
    __slots__ = ("_heap", "_live")

    def __init__(self) -> None:
        self._heap: list[tuple[Any, ...]] = []
        self._live = 0

    def __len__(self) -> int:
        return self._live

    def push(self, entry: tuple[Any, ...]) -> None:
        """Add `entry`; the caller has set `entry[-1].entry = entry`."""
        heappush(self._heap, entry)
        self._live += 1

    def discard(self, item: Any) -> None:
        """Forget `item`'s live entry (it stays in the heap, dead)."""
        item.entry = None
        live = self._live = self._live - 1
        heap = self._heap
        if not live:
            heap.clear()  # all dead: the common case of a connection's one reservation
        elif len(heap) > 2 * live + 64:
            heap[:] = [e for e in heap if e[-1].entry is e]
            heapify(heap)

    def live_entries(self) -> Iterator[tuple[Any, ...]]:
        """Every live entry, in no particular order (for listings, not per-job paths)."""
        return (e for e in self._heap if e[-1].entry is e)

    def peek(self) -> Any:
        """The item with the smallest key, or None."""
        heap = self._heap
        while heap:
            entry = heap[0]
            if entry[-1].entry is entry:
                return entry[-1]
            heappop(heap)
        return None

    def peek_entry(self) -> tuple[Any, ...] | None:
        heap = self._heap
        while heap:
            entry = heap[0]
            if entry[-1].entry is entry:
                return cast(tuple[Any, ...], entry)
            heappop(heap)
        return None

    def pop(self) -> Any:
        """Remove and return the item with the smallest key, or None."""
        heap = self._heap
        while heap:
            entry = heappop(heap)
            item = entry[-1]
            if item.entry is entry:
                item.entry = None
                self._live -= 1
                return item
        return None
