"""The engine's index of every job by id, in pages of consecutive ids.

Ids are handed out in sequence, so the live ones sit close together: a page is a list of
PAGE slots for ids `no * PAGE` to `no * PAGE + PAGE - 1`, and finding a job is a shift,
a page and a slot. A job costs its 8-byte slot, where a dict costs ~75 bytes (its entry,
its share of the table, and the boxed int key: a job's id is unboxed in the compiled
Job). Pages are made only at the top (the highest page yet), as ids grow; a page whose
jobs thin out below SPARSE (old jobs left buried or delayed among deleted ones) gives
them to a plain dict, `_spill`, and goes: at worst a job costs a dict entry, as before.

The top page is never dropped, even empty (a put, then its delete, would otherwise make
a page each time). Iteration is in id order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from heapq import merge
from typing import TYPE_CHECKING, Final, TypeVar

if TYPE_CHECKING:
    from beanpod.core.job import Job

PAGE_BITS: Final = 9
PAGE: Final = 1 << PAGE_BITS
SLOT_MASK: Final = PAGE - 1
SPARSE: Final = PAGE // 8  # fewer live jobs than this: a page (not the top) is dissolved

_D = TypeVar("_D")


class Page:
    __slots__ = ("live", "slots")

    def __init__(self) -> None:
        self.slots: list[Job | None] = [None] * PAGE
        self.live = 0


class JobIndex:
    """A `dict[int, Job]` for the engine's jobs: get, [], in, len, del, pop, iteration."""

    __slots__ = ("_len", "_pages", "_spill", "_top", "_top_page")

    def __init__(self) -> None:
        self._pages: dict[int, Page] = {}  # page number -> page, made in rising order
        self._spill: dict[int, Job] = {}  # jobs of pages that are not (or no longer) there
        self._top = -1  # the highest page number made
        self._top_page: Page | None = None  # the page `_top`
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def _page(self, no: int) -> Page | None:
        return self._top_page if no == self._top else self._pages.get(no)

    def get(self, job_id: int, default: Job | None = None) -> Job | None:
        no = job_id >> PAGE_BITS
        page = self._top_page if no == self._top else self._pages.get(no)
        if page is not None:
            job = page.slots[job_id & SLOT_MASK]
            return default if job is None else job
        if self._spill:
            return self._spill.get(job_id, default)
        return default

    def __getitem__(self, job_id: int) -> Job:
        job = self.get(job_id)
        if job is None:
            raise KeyError(job_id)
        return job

    def __contains__(self, job_id: object) -> bool:
        return isinstance(job_id, int) and self.get(job_id) is not None

    def __setitem__(self, job_id: int, job: Job) -> None:
        no = job_id >> PAGE_BITS
        if no == self._top:
            page: Page | None = self._top_page
        elif no > self._top:
            page = self._new_top(no)
        else:
            page = self._pages.get(no)
        if page is None:
            if job_id not in self._spill:
                self._len += 1
            self._spill[job_id] = job
            return
        slots = page.slots
        at = job_id & SLOT_MASK
        if slots[at] is None:
            page.live += 1
            self._len += 1
        slots[at] = job

    def update(self, pairs: Iterable[tuple[int, Job]]) -> None:
        """Add every (id, job) of `pairs` (a restart hands over its folded jobs)."""
        for job_id, job in pairs:
            self[job_id] = job

    def __delitem__(self, job_id: int) -> None:
        if self.pop(job_id) is None:
            raise KeyError(job_id)

    def pop(self, job_id: int, default: Job | None = None) -> Job | None:
        """Remove and return the job `job_id`, or `default`."""
        no = job_id >> PAGE_BITS
        page = self._page(no)
        if page is None:
            job = self._spill.pop(job_id, None)
            if job is None:
                return default
            self._len -= 1
            return job
        slots = page.slots
        at = job_id & SLOT_MASK
        job = slots[at]
        if job is None:
            return default
        slots[at] = None
        self._len -= 1
        page.live -= 1
        if page.live < SPARSE and no != self._top:
            self._dissolve(no, page)
        return job

    def _new_top(self, no: int) -> Page:
        """Make page `no` the top; the old top, no longer spared, goes if thinned out."""
        old, old_no = self._top_page, self._top
        page = self._top_page = self._pages[no] = Page()
        self._top = no
        if old is not None and old.live < SPARSE:
            self._dissolve(old_no, old)
        return page

    def _dissolve(self, no: int, page: Page) -> None:
        """Move a thinned-out page's jobs to the spill dict and drop the page."""
        base = no << PAGE_BITS
        spill = self._spill
        for at, job in enumerate(page.slots):
            if job is not None:
                spill[base + at] = job
        del self._pages[no]

    def clear(self) -> None:
        self._pages.clear()
        self._spill.clear()
        self._top, self._top_page, self._len = -1, None, 0

    def values(self) -> Iterator[Job]:
        """Every job, in id order."""
        for _, job in self.items():
            yield job

    def keys(self) -> Iterator[int]:
        for job_id, _ in self.items():
            yield job_id

    def __iter__(self) -> Iterator[int]:
        return self.keys()

    def items(self) -> Iterator[tuple[int, Job]]:
        """Every (id, job), in id order (pages come in rising order; the spill is sorted)."""
        spill = sorted(self._spill.items(), key=_first)
        if not spill:
            return self._paged()
        return merge(spill, self._paged(), key=_first)

    def _paged(self) -> Iterator[tuple[int, Job]]:
        for no, page in list(self._pages.items()):
            base = no << PAGE_BITS
            for at, job in enumerate(page.slots):
                if job is not None:
                    yield base + at, job


def _first(pair: tuple[int, Job]) -> int:
    return pair[0]
