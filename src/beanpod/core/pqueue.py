"""A binary heap of integer keys with O(1) removal by lazy deletion.

Each key packs the item's rank above its id, which sits in the low 64 bits, so the heap
holds plain ints: cheaper to compare than tuples, and 16 bytes smaller per job than a
`(pri, id, job)` entry (an int is not tracked by the garbage collector either). The
item is found again through the id → item map the heap is given.

A key is live only while `item.entry is key`. Removing an item clears `item.entry` and
leaves the dead key in the heap until it reaches the top or the heap is rebuilt. Keys
are always at least 2**64, so each is a freshly allocated int (never one of CPython's
shared small ints) and identity tells a live key from an equal dead one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from heapq import heapify, heappop, heappush
from typing import Any

ID_BITS = 64
ID_MASK = (1 << ID_BITS) - 1
_ID_TWICE = (1 << ID_BITS) + 1  # id * _ID_TWICE == id << 64 | id


def ready_key(pri: int, job_id: int, order: int = 0) -> int:
    """Ready-heap key: by priority, then `order` (the id unless an extension reorders),
    then id. Every key of one tube must be built here so they compare consistently."""
    if order:
        return (pri << 2 * ID_BITS) | (order << ID_BITS) | job_id
    return (pri << 2 * ID_BITS) + job_id * _ID_TWICE


def delayed_key(due: int, job_id: int) -> int:
    """Delayed-heap key: by due time, then id (the +1 keeps it at least 2**64)."""
    return ((due + 1) << ID_BITS) | job_id


class LazyHeap:
    __slots__ = ("_heap", "_items", "_live")

    def __init__(self, items: Mapping[int, Any]) -> None:
        self._heap: list[int] = []
        self._items = items  # id -> item, to find an item from its key
        self._live = 0

    def __len__(self) -> int:
        return self._live

    def push(self, key: int, item: Any) -> None:
        """Add `item` under `key` (built by ready_key or delayed_key)."""
        item.entry = key
        heappush(self._heap, key)
        self._live += 1

    def discard(self, item: Any) -> None:
        """Forget `item`'s live key (it stays in the heap, dead)."""
        item.entry = None
        live = self._live = self._live - 1
        heap = self._heap
        if not live:
            heap.clear()
        elif len(heap) > 2 * live + 64:
            heap[:] = [key for key, _ in self.live_items()]
            heapify(heap)

    def _item(self, key: int) -> Any:
        """The item `key` is live for, or None if the key is dead."""
        item = self._items.get(key & ID_MASK)
        return item if item is not None and item.entry is key else None

    def live_items(self) -> Iterator[tuple[int, Any]]:
        """Every live (key, item), in no particular order (listings, not per-job paths)."""
        for key in self._heap:
            item = self._item(key)
            if item is not None:
                yield key, item

    def top(self) -> tuple[int, Any] | None:
        """The smallest live (key, item), or None (to compare the tops of several heaps)."""
        heap = self._heap
        items = self._items
        while heap:
            key = heap[0]
            item = items.get(key & ID_MASK)
            if item is not None and item.entry is key:
                return key, item
            heappop(heap)
        return None

    def peek(self) -> Any:
        """The item with the smallest key, or None."""
        top = self.top()
        return None if top is None else top[1]

    def pop(self) -> Any:
        """Remove and return the item with the smallest key, or None."""
        heap = self._heap
        items = self._items
        while heap:
            key = heappop(heap)
            item = items.get(key & ID_MASK)
            if item is not None and item.entry is key:
                item.entry = None
                self._live -= 1
                return item
        return None

    def first(self, count: int) -> list[Any]:
        """The `count` items with the smallest keys, in order, left in place."""
        taken: list[tuple[int, Any]] = []
        while len(taken) < count and (top := self.top()) is not None:
            taken.append(top)
            self.pop()
        for key, item in taken:
            self.push(key, item)
        return [item for _, item in taken]

    def in_order(self) -> list[Any]:
        """Every live item, smallest key first (listings)."""
        return [item for _, item in sorted(self.live_items(), key=_by_key)]


def _by_key(pair: tuple[int, Any]) -> int:
    return pair[0]
