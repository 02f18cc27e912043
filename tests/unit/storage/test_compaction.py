from __future__ import annotations

from beanpod.storage.compaction import MAX_BUDGET, MIN_BUDGET, Ledger, budget, should_compact


def test_ledger_counts_live_items_and_bytes_per_segment() -> None:
    ledger = Ledger()
    ledger.add("a", 1, 100)
    ledger.add("b", 1, 50)
    ledger.add("c", 2, 10)
    assert (ledger.live(1), ledger.live(2), ledger.live_bytes) == (2, 1, 160)
    ledger.remove("a", 1)
    ledger.remove("a", 1)  # twice is harmless
    assert ledger.items(1, 10) == ["b"] and ledger.live_bytes == 60
    ledger.remove("b", 1)
    assert ledger.live(1) == 0 and 1 not in ledger.by_segment


def test_policy() -> None:
    assert not should_compact(disk_bytes=30, live_bytes=0, segment_size=10)
    assert should_compact(disk_bytes=31, live_bytes=0, segment_size=10)
    assert not should_compact(disk_bytes=100, live_bytes=40, segment_size=10)
    assert budget(0) == MIN_BUDGET and budget(1 << 40) == MAX_BUDGET


def test_runs_added_in_bulk_are_grouped_on_their_segments_first_use() -> None:
    """add_run defers grouping a segment's items, and answers as `add` would have."""
    bulk, one_by_one = Ledger(), Ledger()
    bulk.add_run(1, ["a", "b"], 10)
    bulk.add_run(2, ["c"], [7])
    bulk.add_run(1, ["d"], [5])
    for item, segment, size in (("a", 1, 10), ("b", 1, 10), ("c", 2, 7), ("d", 1, 5)):
        one_by_one.add(item, segment, size)
    assert bulk.live_bytes == one_by_one.live_bytes == 32 and bulk.by_segment == {}
    assert bulk.live(2) == 1 and 2 in bulk.by_segment and 1 not in bulk.by_segment
    bulk.remove("b", 1)
    one_by_one.remove("b", 1)
    assert bulk.items(1, 10) == one_by_one.items(1, 10) == ["a", "d"]
    assert bulk.segments() == one_by_one.by_segment and bulk.live_bytes == 22
    bulk.add_run(3, [], 4)
    assert bulk.live(3) == 0 and bulk.segments() == one_by_one.by_segment
