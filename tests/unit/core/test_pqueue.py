"""LazyHeap (run + heap, lazy deletion) against a sorted-list model."""

from __future__ import annotations

from itertools import repeat

from hypothesis import given, settings
from hypothesis import strategies as st

from beanpod.core.job import Job
from beanpod.core.job_index import JobIndex
from beanpod.core.pqueue import LazyHeap, delayed_key, ready_key, ready_keys
from beanpod.core.tube import Tube

TUBE = Tube("default", 0, JobIndex())


def _job(job_id: int, pri: int = 0) -> Job:
    """A queue's item: a job (compiled, the queue reads and writes its `entry` natively)."""
    return Job(job_id, TUBE, pri, 0, 1000, b"", 0)


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("push"), st.integers(0, 3), st.integers(0, 2)),  # pri, order
        st.tuples(st.just("push_delayed"), st.integers(0, 50), st.just(0)),  # due
        st.tuples(st.just("discard"), st.integers(0, 1000), st.just(0)),
        st.tuples(st.just("repush"), st.integers(0, 1000), st.integers(0, 3)),
        st.tuples(st.just("pop"), st.just(0), st.just(0)),
        st.tuples(st.just("first"), st.integers(0, 5), st.just(0)),
    ),
    max_size=120,
)


@settings(max_examples=300)
@given(OPS)
def test_matches_a_sorted_model(ops: list[tuple[str, int, int]]) -> None:
    items = JobIndex()
    queue = LazyHeap(items)
    model: dict[int, int] = {}  # id -> key of the items queued
    next_id = 1
    for op, a, b in ops:
        if op in ("push", "push_delayed"):
            item = items[next_id] = _job(next_id, a)
            if op == "push":  # push_ready writes ready_key's formula out: same key
                key = ready_key(a, next_id, b)
                item.entry = queue.push_ready(a, next_id, b)
                assert item.entry == key
            else:
                key = delayed_key(a, next_id)
                queue.push(key, item)
            model[next_id] = key
            next_id += 1
        elif op == "discard" and model:
            victim = sorted(model)[a % len(model)]
            queue.discard(items[victim])
            del model[victim]
        elif op == "repush" and model:  # e.g. a release: out, then in again (same id)
            victim = sorted(model)[a % len(model)]
            queue.discard(items[victim])
            key = ready_key(b, victim)
            queue.push(key, items[victim])
            model[victim] = key
        elif op == "pop":
            expected = min(model, key=model.__getitem__) if model else None
            got = queue.pop()
            assert (got.id if got else None) == expected
            if expected is not None:
                del model[expected]
        elif op == "first":
            expected_ids = sorted(model, key=model.__getitem__)[:a]
            assert [item.id for item in queue.first(a)] == expected_ids
        assert len(queue) == len(model)
        top = queue.top()
        best = min(model, key=model.__getitem__) if model else None
        assert (top[1].id if top else None) == best
        assert [item.id for item in queue.in_order()] == sorted(model, key=model.__getitem__)
        _check_pages(queue, model, b + 1)


def _check_pages(queue: LazyHeap, model: dict[int, int], size: int) -> None:
    """`after` pages through every live key in order, `size` at a time, from any cursor."""
    expected = sorted(model.values())
    cursor, seen = None, []
    while page := queue.after(cursor, size):
        assert len(page) <= size and all(item.entry is key for key, item in page)
        seen += [key for key, _ in page]
        cursor = page[-1][0]
    assert seen == expected
    for start in expected[:3]:
        assert [k for k, _ in queue.after(start, size)] == [k for k in expected if k > start][:size]


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


@given(st.lists(st.integers(0, 2**32 - 1), max_size=20), st.integers(0, 2**32 - 1))
def test_ready_keys_are_ready_key_of_each_pair(pris: list[int], one: int) -> None:
    ids = list(range(7, 7 + len(pris)))
    assert ready_keys(pris, ids) == [ready_key(p, i) for p, i in zip(pris, ids, strict=True)]
    assert ready_keys(repeat(one), ids) == [ready_key(one, i) for i in ids]


@given(st.lists(st.integers(0, 3), max_size=30), st.lists(st.integers(0, 3), max_size=30))
def test_extend_places_items_that_hold_their_keys(before: list[int], bulk: list[int]) -> None:
    """A bulk extend after pushes (its keys may fall below the run's last: the heap)
    pops in the same order as pushing each item would."""
    items = JobIndex()
    queue = LazyHeap(items)
    for job_id, pri in enumerate(before, 1):
        items[job_id] = _job(job_id)
        queue.push(ready_key(pri, job_id), items[job_id])
    keys = []
    for job_id, pri in enumerate(bulk, len(before) + 1):
        item = items[job_id] = _job(job_id)
        item.entry = ready_key(pri, job_id)
        keys.append(item.entry)
    queue.extend(sorted(keys))
    assert len(queue) == len(before) + len(bulk)
    expected = sorted(items, key=lambda i: (([*before, *bulk])[i - 1], i))
    assert [queue.pop().id for _ in expected] == expected
    assert queue.pop() is None
