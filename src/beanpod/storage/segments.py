"""Segment files on disk: naming, the directory lock, and the replaceable file seam.

All file access goes through a `FileIO`, so tests can inject short writes, ENOSPC,
fsync errors or a simulated power cut without touching the kernel.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
from pathlib import Path
from typing import Protocol

SUFFIX = ".wal"
_NAME = re.compile(r"^(\d{10})\.wal$")
LOCK_NAME = "lock"
_ZEROS = bytes(1 << 20)


def segment_name(index: int) -> str:
    return f"{index:010d}{SUFFIX}"


def list_segments(directory: Path) -> list[tuple[int, Path]]:
    """(index, path) of every segment in `directory`, oldest first."""
    found = []
    for entry in directory.iterdir():
        m = _NAME.match(entry.name)
        if m:
            found.append((int(m.group(1)), entry))
    return sorted(found)


class FileIO(Protocol):
    """The system calls the log makes; replace it to inject faults."""

    def create(self, path: str) -> int: ...
    def allocate(self, fd: int, size: int) -> None: ...
    def pwrite(self, fd: int, data: bytes | bytearray | memoryview, offset: int, /) -> int: ...
    def fsync(self, fd: int, /) -> None: ...
    def truncate(self, fd: int, size: int) -> None: ...
    def close(self, fd: int) -> None: ...
    def unlink(self, path: str) -> None: ...
    def sync_dir(self, path: str) -> None: ...


class OsFileIO:
    """The real thing."""

    def create(self, path: str) -> int:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)

    def allocate(self, fd: int, size: int) -> None:
        """Reserve `size` bytes of disk so later writes cannot hit ENOSPC."""
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise
            pos = os.fstat(fd).st_size  # no fallocate here: write zeros instead
            while pos < size:
                pos += os.pwrite(fd, _ZEROS[: min(len(_ZEROS), size - pos)], pos)

    pwrite = staticmethod(os.pwrite)  # no wrapper frame: called once per flush

    fsync = staticmethod(os.fdatasync)

    def truncate(self, fd: int, size: int) -> None:
        os.ftruncate(fd, size)

    def close(self, fd: int) -> None:
        os.close(fd)

    def unlink(self, path: str) -> None:
        os.unlink(path)

    def sync_dir(self, path: str) -> None:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class WalLocked(Exception):
    """Another process holds the directory's lock."""


class DirLock:
    """An fcntl write lock on DIR/lock, held for the life of the server."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / LOCK_NAME
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(self.fd)
            raise WalLocked(
                f"{directory} is in use by another beanpod (lock file {self.path} is held)"
            ) from exc
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing drops the fcntl lock
            self.fd = -1
