"""The snapshot file (DIR/snapshot): the restored state as of the end of some segments,
written at a clean shutdown so the next start-up need not replay those segments.

    file    = header table payload
    header  = "BPODSNP\\n" version:u16 flags:u16 segments:u32 region_len:u64
              crc32(table + payload):u32 crc32(the header's first 28 bytes):u32     32 bytes
    table   = (index:u32 end:u64) * segments      the segments covered, each up to `end`
    payload = opaque bytes (durability/snapshot.py lays them out)

Little-endian. The log stays complete without it: a snapshot only lets start-up skip the
segments it covers, so a missing, damaged or outdated one costs a full replay, never a
job. It is written to `snapshot.tmp`, fsynced and renamed (then the directory is synced),
so a crash while writing leaves the old snapshot or none. This layer knows bytes and
segments, not jobs (see docs/wal.md for the upgrade rule).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from beanpod.storage.framing import FRAME_SIZE
from beanpod.storage.segments import OsFileIO, list_segments

NAME = "snapshot"
TMP_NAME = "snapshot.tmp"
MAGIC = b"BPODSNP\n"
VERSION = 2  # readers accept exactly the versions they know: another is not used (2: runs)
_HEAD = struct.Struct("<8sHHIQI")
HEADER_SIZE = _HEAD.size + 4
_ENTRY = struct.Struct("<IQ")


class SnapshotError(Exception):
    """A snapshot file that cannot be used as it is (the log is replayed instead)."""


@dataclass(frozen=True)
class Snapshot:
    covered: dict[int, int]  # segment index -> the offset its covered records end at
    # the whole file, mapped (no 100 MB copy to read and to fault in): the payload
    # starts at `start`; `close` unmaps it once loaded
    data: bytes | mmap.mmap
    start: int

    def close(self) -> None:
        if isinstance(self.data, mmap.mmap):
            self.data.close()

    @property
    def last(self) -> int:
        """The newest segment covered: start-up replays only segments after it."""
        return max(self.covered)


def path_of(directory: Path) -> Path:
    return directory / NAME


def write(
    directory: Path,
    covered: dict[int, int],
    chunks: Iterable[bytes],
    keep_going: Callable[[], bool] = lambda: True,
) -> int:
    """Write a snapshot covering `covered` (index -> end) durably; return its size.
    `keep_going` is asked once the file is synced: False leaves the old one in place
    (and removes the new one, returning 0). On an OSError the new one is removed too,
    and the error raised: the old snapshot stays."""
    table = b"".join(_ENTRY.pack(i, end) for i, end in sorted(covered.items()))
    parts = [table, *chunks]
    crc, size = 0, 0
    for part in parts:
        crc, size = zlib.crc32(part, crc), size + len(part)
    head = _HEAD.pack(MAGIC, VERSION, 0, len(covered), size, crc)
    tmp = directory / TMP_NAME
    try:
        with open(tmp, "wb") as out:
            out.write(head + zlib.crc32(head).to_bytes(4, "little"))
            out.writelines(parts)
            out.flush()
            os.fsync(out.fileno())
        if not keep_going():
            os.unlink(tmp)
            return 0
        os.replace(tmp, path_of(directory))
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    OsFileIO().sync_dir(str(directory))
    return HEADER_SIZE + size


def read(directory: Path) -> Snapshot | None:
    """The directory's snapshot, None if it has none; SnapshotError if it is damaged."""
    try:
        with open(path_of(directory), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except FileNotFoundError:
        return None
    return decode(data)


def decode(data: bytes | mmap.mmap) -> Snapshot:
    if len(data) < HEADER_SIZE:
        raise SnapshotError(f"file shorter than its {HEADER_SIZE}-byte header")
    magic, version, flags, count, size, crc = _HEAD.unpack_from(data)
    if magic != MAGIC:
        raise SnapshotError("not a beanpod snapshot (wrong magic)")
    if int.from_bytes(data[_HEAD.size : HEADER_SIZE], "little") != zlib.crc32(data[: _HEAD.size]):
        raise SnapshotError("header checksum mismatch")
    if version != VERSION or flags:
        raise SnapshotError(
            f"format version {version} flags {flags:#x} (this beanpod reads {VERSION})"
        )
    if len(data) != HEADER_SIZE + size:
        raise SnapshotError(f"{len(data) - HEADER_SIZE} bytes after the header, header says {size}")
    with memoryview(data) as view:  # a view: no copy of the region
        if zlib.crc32(view[HEADER_SIZE:]) != crc:
            raise SnapshotError("checksum mismatch")
    table_end = HEADER_SIZE + count * _ENTRY.size
    covered = dict(_ENTRY.iter_unpack(data[HEADER_SIZE:table_end]))
    if not covered:
        raise SnapshotError("covers no segment")
    return Snapshot(covered, data, table_end)


def unusable(snapshot: Snapshot, segments: list[tuple[int, Path]]) -> str | None:
    """Why the log's segments no longer match `snapshot` (None: they do). Segments are
    only ever dropped oldest first, so while one covered segment is still there no later
    one (which may hold a delete of a covered job) has gone; a covered segment must still
    end where the snapshot says, with no record after it."""
    covered, last = snapshot.covered, snapshot.last
    kept = [(i, p) for i, p in segments if i <= last]
    if not kept:
        return "the segments it covers were all dropped since"
    for index, path in kept:
        end = covered.get(index)
        if end is None:
            return f"segment {index} is not one it covers"
        with open(path, "rb") as f:
            f.seek(end)
            after = f.read(FRAME_SIZE)
        if os.path.getsize(path) < end or any(after):
            return f"segment {index} no longer ends at offset {end}"
    return None


def read_usable(directory: Path) -> tuple[Snapshot | None, str | None]:
    """DIR/snapshot as start-up would take it: (None, None) when there is none, (the
    snapshot, None) when it matches the log, (None, why) when it cannot be used."""
    try:
        snap = read(directory)
        why = None if snap is None else unusable(snap, list_segments(directory))
    except (SnapshotError, OSError) as exc:
        return None, str(exc)
    if why is not None and snap is not None:
        snap.close()
        return None, why
    return snap, why


def remove(directory: Path) -> None:
    for name in (NAME, TMP_NAME):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(directory / name)
