"""The log writer: places records in segments, writes them in one go per flush, and hands
fsyncs and unlinks to a worker thread as self-contained jobs.

Synchronous and loop-agnostic: the server decides when to flush and where to run a
`SyncJob`. Records are placed (segment, offset) the moment they are appended, so callers
know which segment holds each record before it reaches the disk.

Space: `room(n)` answers whether `n` more bytes can be recorded on top of `reserved`
(space promised to future records, such as every live job's delete), preallocating spare
segments as needed. A write or fsync that fails anyway leaves its bytes pending and marks
the writer `failed`; `flush()` retries them, so nothing placed is ever dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from beanpod.storage.framing import HEADER_SIZE, encode_header
from beanpod.storage.segments import FileIO, OsFileIO, segment_name

log = logging.getLogger("beanpod.wal")

SPARE_SLACK = 64  # room kept in a fresh segment for its leading watermark record


@dataclass(eq=False)  # here, compiled: its fields are read and written per record
class Segment:
    """One open segment. `end` is where the next record goes; `capacity` is allocated."""

    index: int
    path: Path
    fd: int
    capacity: int
    end: int
    records: int = 0
    allocated: int = 0  # bytes preallocated on disk so far
    dirty: bool = field(default=False)  # written since its last fsync began


class Chunk:
    """Bytes placed at `offset` of `segment`, written by one pwrite. A plain class, made
    once per flush: compiled, a dataclass's generated __init__ runs as Python."""

    def __init__(self, segment: Segment, offset: int, data: bytes | bytearray) -> None:
        self.segment = segment
        self.offset = offset
        # A chunk of one record holds it as it came (no copy: at depth 1, every flush
        # writes one record); the second record turns it into a bytearray to grow.
        self.data = data


@dataclass
class SyncJob:
    """Work for the fsync thread: sync these files (and the directory), then unlink."""

    io: FileIO
    directory: str
    segments: list[Segment]
    sync_dir: bool
    drops: list[Segment]
    rewrite: list[Chunk] = field(default_factory=list)  # written chunks it makes durable

    def run(self) -> None:
        for seg in self.segments:
            if seg.fd >= 0:
                self.io.fsync(seg.fd)
        if self.sync_dir:
            self.io.sync_dir(self.directory)
        for seg in self.drops:
            self.io.unlink(str(seg.path))
            if seg.fd >= 0:
                self.io.close(seg.fd)
                seg.fd = -1
        if self.drops:  # a power cut must not bring a dropped segment back
            self.io.sync_dir(self.directory)


class WalWriter:
    def __init__(
        self,
        directory: Path,
        segment_size: int,
        first_index: int,
        old: list[tuple[int, Path, int]],
        io: FileIO | None = None,
        keep_unsynced: bool = True,
    ) -> None:
        """`old`: (index, path, size) of segments kept from before, oldest first."""
        self.directory = directory
        self.segment_size = segment_size
        self.io: FileIO = io or OsFileIO()
        self.pwrite: Callable[[int, bytes | bytearray | memoryview, int], int] = self.io.pwrite
        self.keep_unsynced = keep_unsynced  # hold written bytes until fsynced (for rewrite)
        self.segments: dict[int, Segment] = {
            i: Segment(i, p, -1, size, size, allocated=size) for i, p, size in old
        }
        self.next_index = first_index
        self.current: Segment | None = None
        self.spares: list[Segment] = []
        self.spare_room = 0  # what the spares can hold (their sizes never change as spares)
        self.pending: list[Chunk] = []
        # The pending chunk that later records of its segment grow (contiguous with the
        # segment's end); None after a flush or a failure (a failed chunk never grows).
        self.open: Chunk | None = None
        self.unsynced: list[Chunk] = []
        self.dirty: list[Segment] = []  # segments written since their last fsync began
        self.drops: list[Segment] = []
        self.dir_dirty = False
        self.reserved = 0  # bytes promised to future records
        self.failed: OSError | None = None
        self.records_written = 0
        self.bytes_appended = 0
        self.on_new_segment: Callable[[], bytes] | None = None

    # ---- placing records ---------------------------------------------------------------

    def append(self, record: bytes) -> int:
        """Place one framed record; return the index of the segment that will hold it.
        Records placed between flushes grow one buffer per segment (`open`)."""
        seg = self.current
        size = len(record)
        if seg is None or seg.end + size > seg.capacity:
            seg = self._rotate(size)
        chunk = self.open
        if chunk is not None and chunk.segment is seg:
            data = chunk.data
            if type(data) is bytes:
                chunk.data = data = bytearray(data)
            data += record  # in place: a bytearray
        else:
            self.open = chunk = Chunk(seg, seg.end, record)
            self.pending.append(chunk)
        seg.end += size
        seg.records += 1
        self.records_written += 1
        self.bytes_appended += size
        return seg.index

    def _put(self, seg: Segment, record: bytes) -> None:
        """Place a segment's leading watermark in a new pending chunk (the open one);
        not counted in `records_written` (beanstalkd's count is of job records)."""
        self.open = chunk = Chunk(seg, seg.end, record)
        self.pending.append(chunk)
        seg.end += len(record)
        seg.records += 1
        self.bytes_appended += len(record)

    def _rotate(self, size: int) -> Segment:
        need = HEADER_SIZE + SPARE_SLACK + size
        if self.spares:
            seg = self.spares.pop(0)
            self.spare_room -= _spare_room(seg)
        else:
            seg = self._new_segment(need, allocate=False)
        if seg.capacity < need:
            seg.capacity = need  # allocated (again) by the next flush
        self.current = seg
        if self.on_new_segment is not None:
            self._put(seg, self.on_new_segment())
        return seg

    def _new_segment(self, capacity: int, allocate: bool) -> Segment:
        """A segment with its header pending; the file is made now or by the next flush."""
        index = self.next_index
        capacity = max(capacity, self.segment_size)
        seg = Segment(index, self.directory / segment_name(index), -1, capacity, HEADER_SIZE)
        if allocate:
            self._materialize(seg)  # may raise OSError; then nothing changed
        self.next_index = index + 1
        self.segments[index] = seg
        self.open = chunk = Chunk(seg, 0, encode_header(index))
        self.pending.append(chunk)
        return seg

    def _materialize(self, seg: Segment) -> None:
        """Create the file and preallocate it up to `capacity` (raises OSError)."""
        if seg.fd < 0:
            fd = self.io.create(str(seg.path))
            try:
                self.io.allocate(fd, seg.capacity)
            except OSError:
                self.io.close(fd)
                self.io.unlink(str(seg.path))
                raise
            seg.fd = fd
            self.dir_dirty = True
        elif seg.allocated < seg.capacity:
            self.io.allocate(seg.fd, seg.capacity)
        seg.allocated = seg.capacity

    def seal(self) -> dict[int, int]:
        """End the current segment here: the next record starts a new one. Return what
        a checkpoint covers (`covered()`)."""
        self.current = None
        self.open = None
        return self.covered()

    def covered(self) -> dict[int, int]:
        """The segments holding records, each with its end (what a snapshot covers)."""
        spares = self.spares
        return {i: seg.end for i, seg in self.segments.items()
                if seg not in spares and seg.end > HEADER_SIZE}  # fmt: skip

    # ---- space -------------------------------------------------------------------------

    def available(self) -> int:
        cur = self.current
        free = 0 if cur is None else cur.capacity - cur.end
        return free + self.spare_room

    def room(self, nbytes: int) -> bool:
        """Can `nbytes` more be recorded, keeping `reserved` intact? Preallocates spares."""
        if self.failed is not None:
            return False
        need = 2 * nbytes + self.reserved  # a record may strand up to its size at a boundary
        cur = self.current
        if cur is not None and cur.capacity - cur.end >= need:
            return True  # the common case, without looking at the spares
        while self.available() < need:
            try:
                seg = self._new_segment(HEADER_SIZE + SPARE_SLACK + nbytes, allocate=True)
            except OSError as exc:
                log.warning("WAL: cannot allocate a segment: %s", exc)
                return False
            self.spares.append(seg)
            self.spare_room += _spare_room(seg)
        return True

    def disk_bytes(self) -> int:
        return sum(s.capacity for s in self.segments.values())

    # ---- writing -----------------------------------------------------------------------

    def flush(self) -> bool:
        """Write every pending chunk. False (and `failed` set) if the disk refused some;
        what was not written stays pending for the next call (pwrite at fixed offsets
        makes the retry idempotent)."""
        io = self.io
        pending = self.pending
        segments = self.segments
        done = 0
        try:
            for chunk in pending:
                seg = chunk.segment
                if seg.index not in segments:
                    done += 1  # dropped meanwhile: nothing in it is needed any more
                    continue
                if seg.allocated < seg.capacity:
                    self._materialize(seg)
                data = chunk.data
                written = self.pwrite(seg.fd, data, chunk.offset)  # the usual case: all of it
                if written != len(data):
                    self._write(io, chunk, written)
                if not seg.dirty:
                    seg.dirty = True
                    self.dirty.append(seg)
                done += 1
        except OSError as exc:
            if self.failed is None:
                log.error("WAL write failed (%s); mutating commands answer OUT_OF_MEMORY", exc)
            self.failed = exc
            if self.keep_unsynced:
                self.unsynced.extend(pending[:done])
            del pending[:done]
            self.open = None  # a failed write's traceback may still export a chunk's buffer
            return False
        if self.keep_unsynced:
            self.unsynced.extend(pending)
        pending.clear()
        self.open = None
        if self.failed is not None:
            log.warning("WAL writes work again")
            self.failed = None
        return True

    @staticmethod
    def _write(io: FileIO, chunk: Chunk, written: int) -> None:
        """Finish a short write (`written` bytes of the chunk are on the file)."""
        if written <= 0:
            raise OSError(28, "write made no progress")
        fd, offset = chunk.segment.fd, chunk.offset
        # `with` releases the view even when a failed write's traceback outlives us,
        # so the chunk can still grow afterwards.
        with memoryview(chunk.data) as view:
            while written < len(view):
                n = io.pwrite(fd, view[written:], offset + written)
                if n <= 0:
                    raise OSError(28, "write made no progress")
                written += n

    # ---- syncing and dropping ----------------------------------------------------------

    def sync_needed(self) -> bool:
        return bool(self.drops) or self.dir_dirty or bool(self.dirty)

    def take_sync(self) -> SyncJob:
        """Everything written so far, as a job for the fsync thread."""
        dirty, self.dirty = self.dirty, []  # (dropped ones too: synced before unlinking)
        for seg in dirty:
            seg.dirty = False
        job = SyncJob(
            self.io, str(self.directory), dirty, self.dir_dirty, self.drops, self.unsynced
        )
        self.dir_dirty = False
        self.drops = []
        self.unsynced = []
        return job

    def sync_failed(self, job: SyncJob, exc: OSError) -> None:
        """After a failed fsync the kernel may have dropped the dirty pages: write the
        job's bytes again from memory before the next fsync, and refuse mutations."""
        if self.failed is None:
            log.error("WAL fsync failed (%s); mutating commands answer OUT_OF_MEMORY", exc)
        self.failed = exc
        self.pending[:0] = [c for c in job.rewrite if c.segment.index in self.segments]
        self.open = None
        self.dir_dirty = self.dir_dirty or job.sync_dir
        self.drops[:0] = [s for s in job.drops if s.path.exists()]

    def upcoming_index(self) -> int:
        """The segment the next record goes to (the current one, else the next to open)."""
        seg = self.current or (self.spares[0] if self.spares else None)
        return self.next_index if seg is None else seg.index

    def oldest(self) -> Segment | None:
        return next(iter(self.segments.values()), None)

    def drop_oldest(self) -> None:
        """Forget the oldest segment; the next SyncJob unlinks it after its fsyncs."""
        seg = self.oldest()
        assert seg is not None and seg is not self.current and seg not in self.spares
        del self.segments[seg.index]
        if seg.allocated:  # else placed and dropped between flushes: no file was made
            self.drops.append(seg)

    def close(self) -> None:
        for seg in self.segments.values():
            if seg.fd >= 0:
                self.io.close(seg.fd)
                seg.fd = -1


def _spare_room(seg: Segment) -> int:
    return seg.capacity - seg.end - SPARE_SLACK
