"""A priority queue of integer keys with O(1) removal by lazy deletion.

Each key packs the item's rank above its id, which sits in the low 64 bits, so the queue
holds plain ints: cheaper to compare than tuples, and 16 bytes smaller per job than a
`(pri, id, job)` entry (an int is not tracked by the garbage collector either). The
item is found again through the id → item map the queue is given.

Keys live in two places: a *run*, a deque of keys in non-decreasing order, and a binary
heap for the rest. A key no smaller than the run's last one is appended to the run;
only one that would break its order goes to the heap. The smallest key is the smaller
of the two fronts. Queues usually fill in key order (jobs of one priority get rising
ids; delayed jobs of one delay get rising due times), so most keys never enter the heap:
push and pop are O(1) and touch only the run's ends, where a heap pop of a backlog of
500k jobs walks 19 levels of scattered ints (about 0.8 µs, mostly cache misses).

A key is live only while `item.entry is key`. Removing an item clears `item.entry` and
leaves the dead key in place until it reaches a front or the queue is rebuilt. Keys
are always at least 2**64, so each is a freshly allocated int (never one of CPython's
shared small ints) and identity tells a live key from an equal dead one.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Iterable, Iterator
from heapq import heapify, heappop, heappush, merge
from itertools import chain, islice, repeat
from operator import add, lshift
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from beanpod.core.job import Job
    from beanpod.core.job_index import JobIndex

ID_BITS: Final = 64
ID_MASK: Final = (1 << ID_BITS) - 1
_ID_TWICE: Final = (1 << ID_BITS) + 1  # id * _ID_TWICE == id << 64 | id


def ready_key(pri: int, job_id: int, order: int = 0) -> int:
    """Ready-heap key: by priority, then `order` (the id unless an extension reorders),
    then id. Every key of one tube must be built here so they compare consistently."""
    if order:
        return (pri << 2 * ID_BITS) | (order << ID_BITS) | job_id
    return (pri << 2 * ID_BITS) + job_id * _ID_TWICE


def ready_keys(pris: Iterable[int], job_ids: Iterable[int]) -> list[int]:
    """`ready_key(pri, id)` of each pair, in C-level passes (a restart's bulk placement);
    `pris` may be an endless repeat of one priority (then one pass fewer)."""
    ids = map(_ID_TWICE.__mul__, job_ids)
    if isinstance(pris, repeat):
        return list(map(ready_key(next(pris), 0).__add__, ids))
    return list(map(add, map(lshift, pris, repeat(2 * ID_BITS)), ids))


def delayed_key(due: int, job_id: int) -> int:
    """Delayed-heap key: by due time, then id (the +1 keeps it at least 2**64)."""
    return ((due + 1) << ID_BITS) | job_id


class LazyHeap:
    __slots__ = ("_heap", "_items", "_live", "_run")

    def __init__(self, items: JobIndex) -> None:
        self._run: deque[int] = deque()  # keys in non-decreasing order
        self._heap: list[int] = []  # keys that arrived out of order
        self._items = items  # id -> item, to find an item from its key (compiled: a native get)
        self._live = 0

    def __len__(self) -> int:
        return self._live

    @property
    def stored(self) -> int:
        """Keys held, live and dead (how much lazy deletion has left behind)."""
        return len(self._run) + len(self._heap)

    def push(self, key: int, item: Job) -> None:
        """Add `item` under `key` (built by ready_key or delayed_key)."""
        item.entry = key
        run = self._run
        if not run or key >= run[-1]:
            run.append(key)
        else:
            heappush(self._heap, key)
        self._live += 1

    def push_ready(self, pri: int, item_id: int, order: int = 0) -> int:
        """Queue the key `ready_key(pri, item_id, order)` and return it for the caller to
        store in its item's `entry` (compiled, the engine stores it in its native Job at
        once). The key's formula and push's body are written out (test_pqueue checks they
        agree): each of the two calls costs about 1 % of a put."""
        if order:
            key = (pri << 2 * ID_BITS) | (order << ID_BITS) | item_id
        else:
            key = (pri << 2 * ID_BITS) + item_id * _ID_TWICE
        run = self._run
        if not run or key >= run[-1]:
            run.append(key)
        else:
            heappush(self._heap, key)
        self._live += 1
        return key

    def extend(self, keys: list[int]) -> None:
        """`push` for many items that hold their keys in `entry` already, `keys` in order
        (a restart's bulk placement): one extend of the run when they follow it."""
        if not keys:
            return
        run = self._run
        if not run or keys[0] >= run[-1]:
            run.extend(keys)
        else:
            self._heap.extend(keys)
            heapify(self._heap)
        self._live += len(keys)

    def discard(self, item: Job) -> None:
        """Forget `item`'s live key (it stays queued, dead)."""
        item.entry = None
        live = self._live = self._live - 1
        if not live:
            self._run.clear()
            self._heap.clear()
        elif len(self._run) + len(self._heap) > 2 * live + 64:
            self._rebuild()

    def _rebuild(self) -> None:
        """Drop every dead key (the run stays in order, the heap is heapified again)."""
        items = self._items
        self._run = deque(key for key in self._run if _is_live(items, key))
        heap = [key for key in self._heap if _is_live(items, key)]
        heapify(heap)
        self._heap = heap

    def live_items(self) -> Iterator[tuple[int, Job]]:
        """Every live (key, item), in no particular order (listings, not per-job paths)."""
        items = self._items
        for key in chain(self._run, self._heap):
            item = items.get(key & ID_MASK)
            if item is not None and item.entry is key:
                yield key, item

    def top(self) -> tuple[int, Job] | None:
        """The smallest live (key, item), or None (to compare the tops of several queues)."""
        run, heap, items = self._run, self._heap, self._items
        while True:
            in_run = bool(run) and (not heap or run[0] <= heap[0])
            if not in_run and not heap:
                return None
            key = run[0] if in_run else heap[0]
            item = items.get(key & ID_MASK)
            if item is not None and item.entry is key:
                return key, item
            if in_run:  # dead: drop it from its front
                run.popleft()
            else:
                heappop(heap)

    def peek(self) -> Job | None:
        """The item with the smallest key, or None."""
        top = self.top()
        return None if top is None else top[1]

    def pop(self) -> Job | None:
        """Remove and return the item with the smallest key, or None."""
        run, heap, items = self._run, self._heap, self._items
        while True:
            if run and (not heap or run[0] <= heap[0]):
                key = run.popleft()
            elif heap:
                key = heappop(heap)
            else:
                return None
            item = items.get(key & ID_MASK)
            if item is not None and item.entry is key:
                item.entry = None
                self._live -= 1
                return item

    def first(self, count: int) -> list[Job]:
        """The `count` items with the smallest keys, in order, left in place."""
        taken: list[tuple[int, Job]] = []
        while len(taken) < count and (top := self.top()) is not None:
            taken.append(top)
            self.pop()
        run = self._run
        for key, item in taken[::-1]:  # back in front, none smaller; not reversed(): mypyc
            item.entry = key
            run.appendleft(key)
        self._live += len(taken)
        return [item for _, item in taken]

    def after(self, key: int | None, count: int) -> list[tuple[int, Job]]:
        """The `count` live (key, item) with the smallest keys above `key` (None: from
        the start), in order, for paged listings: a binary search of the run (O(log n)
        reads) and a best-first walk of the heap, which visits only the heap's keys up
        to `key` (its top) and the page: never a sort of the whole queue."""
        run = self._run
        start = 0 if key is None else bisect_right(run, key)
        from_run = (run[i] for i in range(start, len(run)))
        merged = merge(self._live_keys(from_run), self._live_keys(self._heap_after(key)))
        return [(k, self._items[k & ID_MASK]) for k in islice(merged, count)]

    def _live_keys(self, keys: Iterable[int]) -> Iterator[int]:
        items = self._items
        return (k for k in keys if _is_live(items, k))

    def _heap_after(self, key: int | None) -> Iterator[int]:
        """The heap's keys above `key`, smallest first, without popping it: a frontier
        of heap positions ordered by key (a node's children are never smaller)."""
        heap = self._heap
        frontier = [(heap[0], 0)] if heap else []
        while frontier:
            k, i = heappop(frontier)
            for child in (2 * i + 1, 2 * i + 2):
                if child < len(heap):
                    heappush(frontier, (heap[child], child))
            if key is None or k > key:
                yield k

    def in_order(self) -> list[Job]:
        """Every live item, smallest key first (listings)."""
        return [item for _, item in sorted(self.live_items(), key=_by_key)]


def _is_live(items: JobIndex, key: int) -> bool:
    item = items.get(key & ID_MASK)
    return item is not None and item.entry is key


def _by_key(pair: tuple[int, Job]) -> int:
    return pair[0]
