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
