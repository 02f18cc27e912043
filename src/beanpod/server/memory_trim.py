"""Giving memory back to the OS once jobs are gone.

Job bodies above pymalloc's 512 bytes come from glibc malloc. When they are freed,
malloc keeps the space for reuse, and only returns what sits at the very top of its
heap: after 26,880 jobs of 64 KB were put and deleted, a server stayed at 1.9 GiB
(beanstalkd went back to 11 MiB). `malloc_trim(0)` hands every free page back
(madvise), wherever it sits in the heap.

A trim costs a walk of malloc's free lists plus the page-table work, so it is not done
per delete: once a second a timer asks `mallinfo2()` how much free space malloc holds,
and trims (on a worker thread; ctypes releases the GIL) only when that grew by
`MIN_GROWTH` since the last trim. Nothing runs on the command path. Elsewhere than
glibc (musl, macOS) the trimmer does nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging

log = logging.getLogger("beanpod")

CHECK_EVERY_S = 1.0
MIN_GROWTH = 32 << 20  # free bytes malloc gained since the last trim before trimming again


_MALLINFO2 = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
              "uordblks", "fordblks", "keepcost")  # fmt: skip


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _MALLINFO2]


def load_libc() -> ctypes.CDLL | None:
    """glibc with malloc_trim and mallinfo2 (2.33+), or None."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        trim, info = libc.malloc_trim, libc.mallinfo2
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    info.argtypes, info.restype = [], MallInfo2
    return libc


class MemoryTrimmer:
    def __init__(self, libc: ctypes.CDLL | None = None) -> None:
        self.libc = libc if libc is not None else load_libc()
        self.baseline = 0  # free bytes malloc held after the last trim (or since, the least)
        self.trims = 0
        self._timer: asyncio.TimerHandle | None = None
        self._trimming = False

    def free_bytes(self) -> int:
        """Bytes malloc holds free (in every arena), released to the OS or not."""
        assert self.libc is not None
        info: MallInfo2 = self.libc.mallinfo2()
        return int(info.fordblks)

    def due(self) -> bool:
        """Has malloc gained enough free space since the last trim to trim again?"""
        free = self.free_bytes()
        if free < self.baseline:
            self.baseline = free  # reused since: count growth from here
            return False
        return free - self.baseline >= MIN_GROWTH

    def trim(self) -> None:
        assert self.libc is not None
        self.libc.malloc_trim(0)
        self.baseline = self.free_bytes()
        self.trims += 1

    # ---- on the event loop ---------------------------------------------------------------

    def start(self) -> None:
        if self.libc is not None:
            self.baseline = self.free_bytes()
            self._arm()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(CHECK_EVERY_S, self._check)

    def _check(self) -> None:
        self._arm()
        if not self._trimming and self.due():
            self._trimming = True
            future = asyncio.get_running_loop().run_in_executor(None, self.trim)
            future.add_done_callback(self._trimmed)

    def _trimmed(self, future: asyncio.Future[None]) -> None:
        self._trimming = False
        if future.exception() is not None:
            log.warning("malloc_trim failed: %s", future.exception())
