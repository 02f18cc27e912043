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
leaves the dead key in place until it reaches a front or the queue is rebuilt. Keys are
always above 256, so each is a freshly allocated int (never one of CPython's shared small
ints) and identity tells a live key from an equal dead one; the queue passes keys as
`Any` so mypyc keeps each key's one object (an `int` variable would unbox a small key
and box a new one).

Ready keys take one of two forms. *Compact*: `(pri << 30) + id + 257` while the priority
is a u32, the id below 2**30 - 257 and no extension reorders; it stays below 2**62, so
compiled it is a native int and costs a shift and two adds, where the *wide* form
`pri << 128 | order << 64 | id` (any priority, order and id) took three big-int
operations (~1,460 instructions a put). Both forms order by (priority, order, id), but
not against each other: a ready queue holds one form (`_wide`), switching its keys to
the wide form when a key that does not fit the compact one arrives, and back to the
compact form when it is empty. Compact keys are 0..2**62-1, wide ready keys and delayed
keys are 2**64 and above (or negative), so a key tells its form (`canonical` is the
wide form of either: what crosses queues and leaves the engine as a page cursor).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Iterable, Iterator
from heapq import heapify, heappop, heappush, merge
from itertools import chain, islice, repeat
from operator import add, lshift
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from beanpod.core.job import Job
    from beanpod.core.job_index import JobIndex

ID_BITS: Final = 64
ID_MASK: Final = (1 << ID_BITS) - 1
_ID_TWICE: Final = (1 << ID_BITS) + 1  # id * _ID_TWICE == id << 64 | id
COMPACT_BITS: Final = 30  # a compact key's id field
COMPACT_MASK: Final = (1 << COMPACT_BITS) - 1
FRESH: Final = 257  # added to a compact key: above CPython's shared small ints
COMPACT_IDS: Final = (1 << COMPACT_BITS) - FRESH  # ids below it fit a compact key
U32_MAX: Final = 0xFFFFFFFF
COMPACT_MAX: Final = (1 << 62) - 1  # the largest compact key (and mypyc native int)


def ready_key(pri: int, job_id: int, order: int = 0) -> int:
    """Ready-heap key: by priority, then `order` (the id unless an extension reorders),
    then id; compact when it fits (the module's docstring), else wide. A queue holds
    one form: `LazyHeap.extend` makes keys of both forms wide."""
    if not order and 0 <= pri <= U32_MAX and 0 <= job_id < COMPACT_IDS:
        return (pri << COMPACT_BITS) + job_id + FRESH
    return wide_key(pri, job_id, order)


def wide_key(pri: int, job_id: int, order: int = 0) -> int:
    """The wide form of `ready_key` (any priority, order and id)."""
    if order:
        return (pri << 2 * ID_BITS) | (order << ID_BITS) | job_id
    return (pri << 2 * ID_BITS) + job_id * _ID_TWICE


def ready_keys(pris: Iterable[int], job_ids: list[int]) -> list[int]:
    """`ready_key(pri, id)` of each pair, in C-level passes (a restart's bulk placement),
    all compact or all wide; `pris` may be an endless repeat of one priority."""
    if isinstance(pris, repeat):
        one = next(pris)
        if not job_ids or (0 <= one <= U32_MAX and 0 <= min(job_ids) <= max(job_ids) < COMPACT_IDS):
            return list(map(ready_key(one, 0).__add__, job_ids))
        return list(map(wide_key(one, 0).__add__, map(_ID_TWICE.__mul__, job_ids)))
    pris = list(pris)
    if not job_ids or (
        0 <= min(pris) <= max(pris) <= U32_MAX and 0 <= min(job_ids) <= max(job_ids) < COMPACT_IDS
    ):
        compact = map(lshift, pris, repeat(COMPACT_BITS))
        return list(map(add, compact, map(FRESH.__add__, job_ids)))
    ids = map(_ID_TWICE.__mul__, job_ids)
    return list(map(add, map(lshift, pris, repeat(2 * ID_BITS)), ids))


def is_compact(key: int) -> bool:
    return 0 <= key <= COMPACT_MAX


def key_id(key: int) -> int:
    """The id a ready or delayed key of either form holds."""
    if 0 <= key <= COMPACT_MAX:
        return (key - FRESH) & COMPACT_MASK
    return key & ID_MASK


def canonical(key: int) -> int:
    """The wide form of a ready key (a wide one as it is): comparable across queues."""
    if 0 <= key <= COMPACT_MAX:
        key -= FRESH
        return wide_key(key >> COMPACT_BITS, key & COMPACT_MASK)
    return key


def ready_before(a: int, b: int) -> bool:
    """Ready key `a` ranks before `b`, whatever their forms (the tops of two queues)."""
    if is_compact(a) == is_compact(b):
        return a < b
    return canonical(a) < canonical(b)


def count_below(keys: list[int], pri: int) -> int:
    """How many of the sorted ready keys `keys` (one form, as `extend` leaves them) have a
    priority below `pri`."""
    if keys and is_compact(keys[0]) and is_compact(keys[-1]):
        return bisect_left(keys, pri << COMPACT_BITS)
    return bisect_left(keys, wide_key(pri, 0))


def delayed_key(due: int, job_id: int) -> int:
    """Delayed-heap key: by due time, then id (the +1 keeps it at least 2**64)."""
    return ((due + 1) << ID_BITS) | job_id


class LazyHeap:
    __slots__ = ("_append", "_fits", "_heap", "_items", "_last", "_live", "_run", "_wide")

    def __init__(self, items: JobIndex, wide: bool = False) -> None:
        """`wide`: a queue of delayed keys (or any keys but push_ready's compact ones)."""
        self._run: deque[Any] = deque()  # keys in non-decreasing order (never replaced)
        self._append = self._run.append  # bound once: compiled, a call, not a method lookup
        self._last = 0  # the run's last key, native (stale while the run is empty)
        self._heap: list[Any] = []  # keys that arrived out of order
        self._items = items  # id -> item, to find an item from its key (compiled: a native get)
        self._live = 0
        self._wide = wide  # the keys held are wide (the module's docstring)
        self._fits = 0 if wide else COMPACT_IDS  # ids push_ready makes compact keys for

    def __len__(self) -> int:
        return self._live

    @property
    def stored(self) -> int:
        """Keys held, live and dead (how much lazy deletion has left behind)."""
        return len(self._run) + len(self._heap)

    def push(self, key: Any, item: Job) -> None:
        """Add `item` under `key` (a delayed_key; a ready key of the queue's form)."""
        item.entry = key
        last: int = key
        if last >= self._last or not self._run:
            self._append(key)
            self._last = last
        else:
            heappush(self._heap, key)
        self._live += 1

    def push_ready(self, pri: int, item_id: int, order: int = 0) -> Any:
        """Queue the key `ready_key(pri, item_id, order)` (or its wide form, when the queue
        holds wide keys) and return it for the caller to store in its item's `entry`
        (compiled, the engine stores it in its native Job at once). The compact formula
        and push's body are written out (test_pqueue checks they agree): each of the two
        calls costs about 1 % of a put."""
        # `_fits` is COMPACT_IDS, 0 when wide; the constants written out are COMPACT_BITS,
        # FRESH and U32_MAX (interpreted, a literal costs less than a global).
        if item_id < self._fits and not order and 0 <= pri <= 0xFFFFFFFF:
            last = (pri << 30) + item_id + 257
            key: Any = last  # boxed once: its identity
        else:
            key = self._other_key(pri, item_id, order)
            last = key
        if last >= self._last or not self._run:  # the run's end, compared natively
            self._append(key)
            self._last = last
        else:
            heappush(self._heap, key)
        self._live += 1
        return key

    def _other_key(self, pri: int, item_id: int, order: int) -> Any:
        """push_ready's key when the compact form is not the queue's or does not fit: an
        empty queue takes the new key's form, a compact one turns wide first."""
        compact = not order and 0 <= pri <= U32_MAX and 0 <= item_id < COMPACT_IDS
        if not self._live:  # every key held is dead
            self._run.clear()
            self._heap.clear()
            self._set_wide(not compact)
        elif not compact and not self._wide:
            self._widen()
        key: Any = wide_key(pri, item_id, order) if self._wide else ready_key(pri, item_id)
        return key

    def _set_wide(self, wide: bool) -> None:
        self._wide = wide
        self._fits = 0 if wide else COMPACT_IDS

    def _widen(self) -> None:
        """Hold every live key in the wide form (its item's entry too); drop dead ones."""
        items = self._items
        run = [_rekey(item, key) for key in self._run if (item := _live_item(items, key))]
        heap = [_rekey(item, key) for key in self._heap if (item := _live_item(items, key))]
        heapify(heap)
        self._refill(run)
        self._heap = heap
        self._set_wide(True)

    def _refill(self, keys: list[Any]) -> None:
        """The run holds `keys` (in order) instead."""
        self._run.clear()
        self._run.extend(keys)
        if keys:
            self._last = keys[-1]

    def extend(self, keys: list[Any]) -> None:
        """`push` for many items that hold their keys in `entry` already, `keys` in order
        (a restart's bulk placement): one extend of the run when they follow it. Keys of
        both forms, or of the other form than the queue's, are made wide first (`keys`
        and the items' entries too, `keys` sorted again)."""
        if not keys:
            return
        wide = not (is_compact(keys[0]) and is_compact(keys[-1]))
        if not self._live:
            self._run.clear()
            self._heap.clear()
            self._set_wide(wide)
        elif wide and not self._wide:
            self._widen()
        if self._wide and any(map(is_compact, keys)):
            items = self._items
            keys[:] = sorted(_rekey(items[key_id(k)], k) for k in keys)
        run = self._run
        if not run or keys[0] >= self._last:
            run.extend(keys)
            self._last = keys[-1]
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
        self._refill([key for key in self._run if _live_item(items, key) is not None])
        heap = [key for key in self._heap if _live_item(items, key) is not None]
        heapify(heap)
        self._heap = heap

    def live_items(self) -> Iterator[tuple[Any, Job]]:
        """Every live (key, item), in no particular order (listings, not per-job paths);
        the keys of one queue are of one form, comparable with each other."""
        items = self._items
        for key in chain(self._run, self._heap):
            item = _live_item(items, key)
            if item is not None:
                yield key, item

    def top(self) -> tuple[Any, Job] | None:
        """The smallest live (key, item), or None (to compare the tops of several queues:
        `ready_before`)."""
        run, heap, items = self._run, self._heap, self._items
        while True:
            in_run = bool(run) and (not heap or run[0] <= heap[0])
            if not in_run and not heap:
                return None
            key: Any = run[0] if in_run else heap[0]
            item = _live_item(items, key)
            if item is not None:
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
            key: Any
            if run and (not heap or run[0] <= heap[0]):
                key = run.popleft()
            elif heap:
                key = heappop(heap)
            else:
                return None
            k: int = key  # key_id written out by the queue's form (a reserve's path)
            item = items.get(k & ID_MASK if self._wide else (k - 257) & 0x3FFFFFFF)
            if item is not None and item.entry is key:
                item.entry = None
                self._live -= 1
                return item

    def first(self, count: int) -> list[Job]:
        """The `count` items with the smallest keys, in order, left in place."""
        taken: list[tuple[Any, Job]] = []
        while len(taken) < count and (top := self.top()) is not None:
            taken.append(top)
            self.pop()
        run = self._run
        for key, item in taken[::-1]:  # back in front, none smaller; not reversed(): mypyc
            item.entry = key
            run.appendleft(key)
        if taken and len(run) == len(taken):  # the run was empty: its last key is new
            self._last = run[-1]
        self._live += len(taken)
        return [item for _, item in taken]

    def after(self, key: int | None, count: int) -> list[tuple[int, Job]]:
        """The `count` live (key, item) with the smallest keys above `key` (None: from
        the start), in order, for paged listings: a binary search of the run (O(log n)
        reads) and a best-first walk of the heap, which visits only the heap's keys up
        to `key` (its top) and the page: never a sort of the whole queue. The keys, and
        `key`, are in the wide form (`canonical`), whatever form the queue holds."""
        run = self._run
        start = 0 if key is None else bisect_right(run, key, key=canonical)
        from_run = (run[i] for i in range(start, len(run)))
        merged = merge(self._live_keys(from_run), self._live_keys(self._heap_after(key)))
        return [(canonical(k), self._items[key_id(k)]) for k in islice(merged, count)]

    def _live_keys(self, keys: Iterable[Any]) -> Iterator[Any]:
        items = self._items
        return (k for k in keys if _live_item(items, k) is not None)

    def _heap_after(self, key: int | None) -> Iterator[Any]:
        """The heap's keys above `key` (wide), smallest first, without popping it: a
        frontier of heap positions ordered by key (a node's children are never smaller)."""
        heap = self._heap
        frontier = [(heap[0], 0)] if heap else []
        while frontier:
            k, i = heappop(frontier)
            for child in (2 * i + 1, 2 * i + 2):
                if child < len(heap):
                    heappush(frontier, (heap[child], child))
            if key is None or canonical(k) > key:
                yield k

    def in_order(self) -> list[Job]:
        """Every live item, smallest key first (listings)."""
        return [item for _, item in sorted(self.live_items(), key=_by_key)]


def _live_item(items: JobIndex, key: Any) -> Job | None:
    """The item whose live key is `key` (identity: the one object), or None."""
    item = items.get(key_id(key))
    return item if item is not None and item.entry is key else None


def _rekey(item: Job, key: Any) -> Any:
    """Give `item`, whose live key is `key`, that key's wide form."""
    wide: Any = canonical(key)
    item.entry = wide
    return wide


def _by_key(pair: tuple[Any, Job]) -> Any:
    return pair[0]
