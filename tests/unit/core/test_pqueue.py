"""LazyHeap (run + heap, lazy deletion) against a sorted-list model."""

from __future__ import annotations

from itertools import repeat

from hypothesis import given, settings
from hypothesis import strategies as st

from beanpod.core.job import Job
from beanpod.core.job_index import JobIndex
from beanpod.core.pqueue import (
    COMPACT_IDS,
    LazyHeap,
    canonical,
    count_below,
    delayed_key,
    is_compact,
    key_id,
    ready_before,
    ready_key,
    ready_keys,
    wide_key,
)
from beanpod.core.tube import Tube

TUBE = Tube("default", 0, JobIndex())


def _job(job_id: int, pri: int = 0) -> Job:
    """A queue's item: a job (compiled, the queue reads and writes its `entry` natively)."""
    return Job(job_id, TUBE, pri, 0, 1000, b"", 0)


PRIS = st.one_of(st.integers(0, 3), st.sampled_from([1023, 1024, 2**32 - 1]))
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("push"), PRIS, st.integers(0, 2)),  # pri, order
        st.tuples(st.just("jump"), st.sampled_from([COMPACT_IDS - 2, 2**40]), st.just(0)),
        st.tuples(st.just("discard"), st.integers(0, 1000), st.just(0)),
        st.tuples(st.just("repush"), st.integers(0, 1000), PRIS),
        st.tuples(st.just("pop"), st.just(0), st.just(0)),
        st.tuples(st.just("first"), st.integers(0, 5), st.just(0)),
    ),
    max_size=120,
)


@settings(max_examples=300)
@given(OPS)
def test_matches_a_sorted_model(ops: list[tuple[str, int, int]]) -> None:
    """Ready keys of both forms (ids past the compact range, extension orders, the
    largest priority): the queue pops in (priority, order, id) order, its keys switch
    form as they must, and every item's entry is its live key."""
    items = JobIndex()
    queue = LazyHeap(items)
    model: dict[int, int] = {}  # id -> wide key of the items queued
    next_id = 1
    for op, a, b in ops:
        if op == "push":
            item = items[next_id] = _job(next_id, a)
            item.entry = queue.push_ready(a, next_id, b)
            if not queue._wide:  # push_ready writes ready_key's formula out: same key
                assert item.entry == ready_key(a, next_id, b)
            model[next_id] = wide_key(a, next_id, b)
            next_id += 1
        elif op == "jump":
            next_id = max(next_id, a)
        elif op == "discard" and model:
            victim = sorted(model)[a % len(model)]
            queue.discard(items[victim])
            del model[victim]
        elif op == "repush" and model:  # e.g. a release: out, then in again (same id)
            victim = sorted(model)[a % len(model)]
            queue.discard(items[victim])
            items[victim].entry = queue.push_ready(b, victim)
            model[victim] = wide_key(b, victim)
        elif op == "pop":
            expected = min(model, key=model.__getitem__) if model else None
            got = queue.pop()
            assert (got.id if got else None) == expected
            if expected is not None:
                del model[expected]
        elif op == "first":
            expected_ids = sorted(model, key=model.__getitem__)[:a]
            assert [item.id for item in queue.first(a)] == expected_ids
        _check_queue(queue, model, b + 1)


def _check_queue(queue: LazyHeap, model: dict[int, int], size: int) -> None:
    assert len(queue) == len(model)
    top = queue.top()
    best = min(model, key=model.__getitem__) if model else None
    assert (top[1].id if top else None) == best
    assert [item.id for item in queue.in_order()] == sorted(model, key=model.__getitem__)
    forms = {is_compact(key) for key, _ in queue.live_items()}
    assert forms <= {not queue._wide}
    _check_pages(queue, model, size)


def _check_pages(queue: LazyHeap, model: dict[int, int], size: int) -> None:
    """`after` pages through every live key in order, `size` at a time, from any cursor
    (the keys in the wide form, whatever the queue's)."""
    expected = sorted(model.values())
    cursor, seen = None, []
    while page := queue.after(cursor, size):
        assert len(page) <= size and all(canonical(item.entry) == key for key, item in page)
        seen += [key for key, _ in page]
        cursor = page[-1][0]
    assert seen == expected
    for start in expected[:3]:
        assert [k for k, _ in queue.after(start, size)] == [k for k in expected if k > start][:size]


def test_a_key_too_wide_turns_the_queue_wide_until_it_empties() -> None:
    items = JobIndex()
    queue = LazyHeap(items)
    for job_id, pri in ((5, 7), (6, 3), (COMPACT_IDS, 3), (2**40, 0), (8, 3)):
        item = items[job_id] = _job(job_id, pri)
        item.entry = queue.push_ready(pri, job_id)
    assert queue._wide and all(not is_compact(key) for key, _ in queue.live_items())
    assert all(key is item.entry for key, item in queue.live_items())
    assert [queue.pop().id for _ in range(5)] == [2**40, 6, 8, COMPACT_IDS, 5]
    items[9] = _job(9, 1)
    items[9].entry = queue.push_ready(1, 9)
    assert not queue._wide and items[9].entry == ready_key(1, 9) and is_compact(ready_key(1, 9))


def test_delayed_keys_pop_by_due_time_then_id() -> None:
    items = JobIndex()
    queue = LazyHeap(items, wide=True)
    for job_id, due in ((1, 50), (2, 10), (3, 50), (4, 0)):
        items[job_id] = _job(job_id)
        queue.push(delayed_key(due, job_id), items[job_id])
    queue.discard(items[3])
    assert [queue.pop().id for _ in range(3)] == [4, 2, 1] and queue.pop() is None


def test_tops_of_either_form_compare_by_priority_then_id() -> None:
    pairs = [(0, 5), (3, 1), (3, 2**40), (2**32 - 1, 1), (7, COMPACT_IDS - 1), (7, COMPACT_IDS)]
    for p, i in pairs:
        for q, j in pairs:
            assert ready_before(ready_key(p, i), wide_key(q, j)) == ((p, i) < (q, j))
            assert ready_before(wide_key(p, i), ready_key(q, j)) == ((p, i) < (q, j))
            assert key_id(ready_key(p, i)) == i and canonical(ready_key(p, i)) == wide_key(p, i)


def test_keys_in_order_never_enter_the_heap() -> None:
    items = JobIndex()
    queue = LazyHeap(items)
    for job_id in range(1, 1001):
        items[job_id] = _job(job_id)
        queue.push(ready_key(1024, job_id), items[job_id])
    assert not queue._heap and len(queue._run) == 1000
    assert [queue.pop().id for _ in range(1000)] == list(range(1, 1001))
    assert queue.pop() is None and queue.stored == 0


def test_dead_keys_are_dropped_when_they_outnumber_the_live() -> None:
    items = JobIndex()
    queue = LazyHeap(items)
    for job_id in range(1, 5001):
        items[job_id] = _job(job_id)
        queue.push(ready_key(5000 - job_id, job_id), items[job_id])  # falling: the heap
    for job_id in range(1, 4990):
        queue.discard(items[job_id])
    assert len(queue) == 11 and queue.stored < 200
    assert [item.id for item in queue.in_order()] == list(range(5000, 4989, -1))


@given(
    st.lists(st.integers(0, 2**32 - 1), max_size=20),
    st.integers(0, 2**32 - 1),
    st.sampled_from([7, COMPACT_IDS - 5, 2**40]),
)
def test_ready_keys_are_ready_key_of_each_pair(pris: list[int], one: int, first: int) -> None:
    """In one form: compact when every pair fits, else wide."""
    ids = list(range(first, first + len(pris)))
    keys = ready_keys(pris, ids)
    assert all(map(is_compact, keys)) or not any(map(is_compact, keys))
    assert list(map(canonical, keys)) == [wide_key(p, i) for p, i in zip(pris, ids, strict=True)]
    keys = ready_keys(repeat(one), ids)
    assert all(map(is_compact, keys)) or not any(map(is_compact, keys))
    assert list(map(canonical, keys)) == [wide_key(one, i) for i in ids]
    if first == 7:
        assert keys == [ready_key(one, i) for i in ids]


@given(
    st.lists(st.integers(0, 1100), max_size=30),
    st.lists(st.integers(0, 1100), max_size=30),
    st.sampled_from([0, COMPACT_IDS - 40, 2**40]),
)
def test_extend_places_items_that_hold_their_keys(
    before: list[int], bulk: list[int], skip: int
) -> None:
    """A bulk extend after pushes (its keys may fall below the run's last: the heap;
    of either form, or both) pops in the same order as pushing each item would, and
    counts its urgent keys."""
    items = JobIndex()
    queue = LazyHeap(items)
    pris = {}
    for job_id, pri in enumerate(before, 1):
        items[job_id] = _job(job_id)
        items[job_id].entry = queue.push_ready(pri, job_id)
        pris[job_id] = pri
    keys = []
    for job_id, pri in enumerate(bulk, len(before) + 1 + skip):
        item = items[job_id] = _job(job_id)
        item.entry = ready_key(pri, job_id)
        keys.append(item.entry)
        pris[job_id] = pri
    keys.sort()
    queue.extend(keys)
    assert count_below(keys, 1024) == sum(pri < 1024 for pri in bulk)
    assert all(items[key_id(key)].entry is key for key in keys)
    assert len(queue) == len(before) + len(bulk)
    expected = sorted(pris, key=lambda i: (pris[i], i))
    assert [queue.pop().id for _ in expected] == expected
    assert queue.pop() is None
