"""MemoryTrimmer: trims only when malloc's free space grew by MIN_GROWTH since the last
trim (a trim does not shrink what malloc counts as free, so it must not trim again)."""

from __future__ import annotations

from typing import Any

from beanpod.server.memory_trim import MIN_GROWTH, MallInfo2, MemoryTrimmer, load_libc


class FakeLibc:
    def __init__(self) -> None:
        self.free = 0
        self.trims = 0

    def mallinfo2(self) -> MallInfo2:
        info = MallInfo2()
        info.fordblks = self.free
        return info

    def malloc_trim(self, pad: int) -> int:
        self.trims += 1
        return 1


def trimmer(libc: FakeLibc) -> MemoryTrimmer:
    fake: Any = libc
    return MemoryTrimmer(fake)


def test_trims_once_per_growth_and_counts_growth_from_the_low_water_mark() -> None:
    libc = FakeLibc()
    t = trimmer(libc)
    libc.free = MIN_GROWTH - 1
    assert not t.due()
    libc.free = MIN_GROWTH
    assert t.due()
    t.trim()
    assert libc.trims == 1 and not t.due()  # still counted free after the trim
    libc.free = 10  # reused by new jobs
    assert not t.due()
    libc.free = 10 + MIN_GROWTH  # freed again
    assert t.due()


def test_real_glibc_answers() -> None:
    libc = load_libc()
    if libc is None:  # not glibc: the trimmer does nothing
        assert MemoryTrimmer().libc is None
        return
    t = MemoryTrimmer(libc)
    assert t.free_bytes() >= 0
    t.trim()
    assert t.trims == 1
