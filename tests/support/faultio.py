"""A FileIO for WAL tests: injects ENOSPC, failing or short writes and fsync errors, and
simulates a power cut (every byte written but not yet fsynced is lost)."""

from __future__ import annotations

import errno
import os
import threading

from beanpod.storage.segments import OsFileIO


def enospc() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class FaultIO(OsFileIO):
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.full = False  # allocating new space fails with ENOSPC (preallocated space works)
        self.write_error: OSError | None = None  # every pwrite raises this
        self.short = 0  # > 0: each pwrite writes at most this many bytes
        self.fsync_errors = 0  # the next N fsyncs raise EIO
        self.dead = False  # after power_cut(): every call fails
        self.unsynced: dict[int, list[tuple[int, bytes]]] = {}  # fd -> (offset, old bytes)
        self.writes = self.fsyncs = 0

    def _check(self) -> None:
        if self.dead:
            raise OSError(errno.EIO, "power is off")

    def create(self, path: str) -> int:
        with self.lock:
            self._check()
            return super().create(path)

    def allocate(self, fd: int, size: int) -> None:
        with self.lock:
            self._check()
            if self.full:
                raise enospc()
            super().allocate(fd, size)

    def pwrite(self, fd: int, data: bytes | memoryview, offset: int) -> int:
        with self.lock:
            self._check()
            if self.write_error is not None:
                raise self.write_error
            if self.short:
                data = data[: self.short]
            old = os.pread(fd, len(data), offset)
            old += bytes(len(data) - len(old))
            self.unsynced.setdefault(fd, []).append((offset, old))
            self.writes += 1
            return super().pwrite(fd, data, offset)

    def fsync(self, fd: int) -> None:
        with self.lock:
            self._check()
            if self.fsync_errors:
                self.fsync_errors -= 1
                raise OSError(errno.EIO, "injected fsync error")
            super().fsync(fd)
            self.unsynced.pop(fd, None)
            self.fsyncs += 1

    def close(self, fd: int) -> None:
        with self.lock:
            self.unsynced.pop(fd, None)  # only dropped (unlinked) segments close early
            super().close(fd)

    def power_cut(self) -> None:
        """Undo every write not covered by an fsync, newest first; then fail everything."""
        with self.lock:
            for fd, writes in self.unsynced.items():
                for offset, old in reversed(writes):
                    os.pwrite(fd, old, offset)
            self.unsynced.clear()
            self.dead = True
