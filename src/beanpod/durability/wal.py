"""The engine's Journal, backed by the write-ahead log (`beanpod serve -b DIR`).

Turns engine mutations into records (records.py), places them with the WalWriter,
keeps the compaction ledger (which segment pins which live job, paused tube or named
state), and migrates live records forward so old segments can be dropped. Recovery at
start-up reads the directory back and restores the engine (restore.py).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections.abc import Generator, Hashable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import cast

from beanpod.core.engine import Engine
from beanpod.core.job import Job, JobState
from beanpod.core.tube import MAX_TUBE_NAME, Tube
from beanpod.durability import snapshot as snapshot_payload
from beanpod.durability.checkpoint import Checkpoint, Checkpoints
from beanpod.durability.commit import GroupCommit
from beanpod.durability.progress import ReplayProgress
from beanpod.durability.records import (
    DELETE_SIZE,
    PUT_OVERHEAD,
    RecordError,
    encode_delete,
    encode_next_id,
    encode_pause,
    encode_put_head,
    encode_state,
    encode_update,
)
from beanpod.durability.restore import BadRecord, Restored, Restorer
from beanpod.storage import compaction
from beanpod.storage import snapshot as snapshot_file
from beanpod.storage.framing import (
    FRAME_SIZE,
    crc32,
    frame,
    frame_pair,
    pack_frame_header,
)
from beanpod.storage.recovery import CorruptLog, LogReader
from beanpod.storage.segments import DirLock, FileIO, list_segments
from beanpod.storage.wal import WalWriter

log = logging.getLogger("beanpod.wal")

DELETE_FRAME = FRAME_SIZE + DELETE_SIZE
# Room asked for beyond a mutation's body: record header, tube name, its future delete.
ROOM_MARGIN = FRAME_SIZE + PUT_OVERHEAD + MAX_TUBE_NAME + DELETE_FRAME + 64
REPLAY_STEP = 4096  # records between progress updates (and event-loop turns)


@dataclass(frozen=True)
class WalSettings:
    directory: Path
    fsync_ms: int | None = 50  # 0: before every reply; None: never (-F)
    segment_size: int = 10485760
    snapshot_min_jobs: int = 10_000  # a clean shutdown with this many jobs writes a snapshot
    # a checkpoint starts once the log written since the last snapshot exceeds this and
    # a share of the live bytes (checkpoint.py; 0: never by itself)
    checkpoint_floor: int = 0  # off unless asked (`beanpod serve` asks: ServerConfig)


class Durability:
    def __init__(self, engine: Engine, settings: WalSettings, io: FileIO | None = None) -> None:
        self.engine = engine
        self.settings = settings
        self.io = io
        self.ledger = compaction.Ledger()
        self.pause_file: dict[str, int] = {}  # paused tube -> segment of its pause record
        # named states set (STATE records): key -> (segment of its latest record, value)
        self.state_file: dict[str, tuple[int, bytes]] = {}
        self.appended = 0  # records appended so far (sessions compare it around a batch)
        self.records_migrated = 0
        self._written_mark = 0
        self.lock: DirLock | None = None
        self.progress = ReplayProgress()
        self.restored = Restored()
        self._replayed = 0  # bytes of segments replayed on top of the snapshot at start-up
        self.checkpoints: Checkpoints
        self.writer: WalWriter
        self.commit: GroupCommit

    # ---- start-up ----------------------------------------------------------------------

    def open(self, now: int) -> Restored:
        """Lock the directory, restore the engine from it, and start a new segment.
        Must run inside the event loop; raises WalLocked or CorruptLog."""
        for _ in self.opening(now):
            pass
        return self.restored

    async def open_async(self, now: int) -> Restored:
        """`open`, letting the event loop run between slices of the replay (so an HTTP
        /readyz can answer "replaying" meanwhile)."""
        for _ in self.opening(now):
            await asyncio.sleep(0)
        return self.restored

    def opening(self, now: int) -> Iterator[None]:
        """`open` in steps: yields every REPLAY_STEP records."""
        directory = self.settings.directory
        directory.mkdir(parents=True, exist_ok=True)
        self.lock = DirLock(directory)
        collecting = gc.isenabled()
        gc.disable()  # replay makes millions of objects and no cycles: don't walk them
        try:
            restorer = Restorer(self.engine, FRAME_SIZE)
            covered = yield from load_snapshot(directory, restorer, self.progress)
            reader = LogReader(directory, max(covered, default=0))
            self._replayed = reader.bytes_total
            yield from replay_segments(reader, restorer, self.progress)
            self.restored = restored = restorer.finish(now)
            self.progress.finish(restored.jobs)
            old, first_index = self._tidy(reader, covered)
        except BaseException:
            self.lock.release()
            raise
        finally:
            gc.freeze()  # the restored jobs are long-lived: no collection walks them
            if collecting:
                gc.enable()
        self._start_writing(directory, old, first_index)
        log.info("WAL %s: restored %d jobs, next id %d", directory, restored.jobs,
                 restored.next_id)  # fmt: skip

    def _start_writing(self, directory: Path, old: list[tuple[int, Path, int]],
                       first_index: int) -> None:  # fmt: skip
        """The writer for new records, and the ledger of what pins each kept segment."""
        restored = self.restored
        fsync_ms = self.settings.fsync_ms
        self.writer = writer = WalWriter(
            directory, self.settings.segment_size, first_index, old, self.io,
            keep_unsynced=fsync_ms is not None,
        )  # fmt: skip
        writer.on_new_segment = self._watermark
        self.ledger.adopt(cast("dict[int, dict[Hashable, int]]", restored.pins))  # jobs hash
        for segment, jobs, sizes in restored.runs:
            self.ledger.add_run(segment, cast("list[Hashable]", jobs), sizes)
        for job in restored.unpinned:
            self.ledger.remove(job, job.file)
        restored.pins, restored.runs, restored.unpinned = {}, [], []  # the ledger holds them
        for name, file in restored.paused.items():
            self.ledger.add(name, file, FRAME_SIZE + 64)
            self.pause_file[name] = file
        for key, (file, value) in restored.states.items():
            self.ledger.add(_state_item(key), file, len(frame(encode_state(key, value))))
            self.state_file[key] = (file, value)
        writer.reserved = len(self.engine.jobs) * DELETE_FRAME
        if not writer.room(0):
            log.error("WAL: no disk space for a new segment; puts answer OUT_OF_MEMORY")
        self.commit = GroupCommit(writer, fsync_ms, self._compact)
        settings = self.settings
        self.checkpoints = Checkpoints(
            writer, settings.directory, settings.checkpoint_floor, settings.snapshot_min_jobs,
            lambda: self.ledger.live_bytes, lambda: len(self.engine.jobs), self._replayed,
        )  # fmt: skip
        if settings.checkpoint_floor:
            self.commit.after_write = self.checkpoints.after_write
            self.checkpoints.watch_idle()
        self.engine.journal = self

    def _tidy(self, reader: LogReader,
              covered: dict[int, int]) -> tuple[list[tuple[int, Path, int]], int]:  # fmt: skip
        """Drop segments without records, cut torn tails and unused preallocated space
        (segments a snapshot covers end where it says)."""
        old = []
        last = max((r.index for r in reader.reports), default=max(covered, default=0))
        for index, path in list_segments(reader.directory):
            if index in covered:
                if path.stat().st_size > covered[index]:
                    os.truncate(path, covered[index])
                old.append((index, path, covered[index]))
        for report in reader.reports:
            if report.records == 0:
                os.unlink(report.path)
                continue
            if report.size > report.end:
                os.truncate(report.path, report.end)
            old.append((report.index, report.path, report.end))
        return old, last + 1

    def _watermark(self) -> bytes:
        return frame(encode_next_id(self.engine.next_id))

    # ---- the Journal ---------------------------------------------------------------------

    def room(self, nbytes: int) -> bool:
        """Can a mutation carrying `nbytes` of body be recorded (and later deleted)?"""
        writer = self.writer
        cur = writer.current
        need = nbytes + ROOM_MARGIN
        # WalWriter.room's common case, inline (asked before every mutation)
        if (
            cur is not None
            and writer.failed is None
            and cur.capacity - cur.end + writer.spare_room >= 2 * need + writer.reserved
        ):
            return True
        return writer.room(need)

    def record_put(self, job: Job) -> None:
        head, body = encode_put_head(job), job.body  # framed inline: the hot path
        header = pack_frame_header(len(head) + len(body), crc32(body, crc32(head)))
        record = b"".join((header, head, body))
        writer = self.writer
        job.file = seg = writer.append(record)
        self.ledger.add(job, seg, len(record))
        writer.reserved += DELETE_FRAME
        self.appended += 1
        if not self.commit.scheduled:
            self.commit.schedule()

    def record_update(self, job: Job) -> None:
        self.writer.append(frame(encode_update(job)))
        self.appended += 1
        if not self.commit.scheduled:
            self.commit.schedule()

    def record_delete(self, job: Job) -> None:
        writer = self.writer
        payload = encode_delete(job.id)  # framed inline: the hot path
        writer.append(pack_frame_header(DELETE_SIZE, crc32(payload)) + payload)
        writer.reserved -= DELETE_FRAME
        self.ledger.remove(job, job.file)
        self.appended += 1
        if not self.commit.scheduled:
            self.commit.schedule()

    def record_pause(self, tube: Tube) -> None:
        record = frame(encode_pause(tube))
        seg = self.writer.append(record)
        old = self.pause_file.pop(tube.name, None)
        if old is not None:
            self.ledger.remove(tube.name, old)
        if tube.pause_ms:
            self.ledger.add(tube.name, seg, len(record))
            self.pause_file[tube.name] = seg
        self.appended += 1
        self.commit.schedule()

    def record_state(self, key: str, value: bytes) -> None:
        record = frame(encode_state(key, value))
        seg = self.writer.append(record)
        old = self.state_file.pop(key, None)
        if old is not None:
            self.ledger.remove(_state_item(key), old[0])
        if value:  # the latest value pins its segment; a removal pins nothing
            self.ledger.add(_state_item(key), seg, len(record))
            self.state_file[key] = (seg, value)
        self.appended += 1
        if not self.commit.scheduled:
            self.commit.schedule()

    def states(self, prefix: str) -> dict[str, bytes]:
        return {k: v for k, (_, v) in self.state_file.items() if k.startswith(prefix)}

    # ---- compaction (runs before each flush) -------------------------------------------

    def _compact(self) -> None:
        writer, ledger = self.writer, self.ledger
        written = writer.bytes_appended - self._written_mark
        self._written_mark = writer.bytes_appended
        self._drop_unpinned()
        oldest = writer.oldest()
        if oldest is None or oldest is writer.current or oldest in writer.spares:
            return
        if not compaction.should_compact(writer.disk_bytes(), ledger.live_bytes,
                                         writer.segment_size):  # fmt: skip
            return
        left = compaction.budget(written)
        while left > 0:
            items = ledger.items(oldest.index, 256)
            if not items:
                break
            for item in items:
                moved = self._migrate(item, oldest.index)
                if moved == 0:
                    return  # no room: try again after the next flush
                left -= moved
        self._drop_unpinned()

    def _drop_unpinned(self) -> None:
        if self.checkpoints.running is not None:
            return  # the checkpoint's builder reads the segments it covers: keep them
        writer, ledger = self.writer, self.ledger
        while (seg := writer.oldest()) is not None and seg is not writer.current:
            if seg in writer.spares or ledger.live(seg.index):
                return
            writer.drop_oldest()

    def _migrate(self, item: Hashable, segment: int) -> int:
        """Rewrite one live item's full record forward; its size, or 0 if no room."""
        if isinstance(item, Job):
            if item.file != segment:
                return 1  # already moved, with the buried jobs of its tube
            if item.state is JobState.BURIED:
                return self._migrate_jobs(_buried_from(item.tube, segment) or [item])
            return self._migrate_jobs([item])
        if isinstance(item, tuple):  # a named state
            key = item[1]
            record = frame(encode_state(key, self.state_file[key][1]))
        else:
            tube = self.engine.tubes.get(str(item))
            if tube is None or not tube.pause_ms:
                self.ledger.remove(item, segment)
                del self.pause_file[str(item)]
                return 1
            record = frame(encode_pause(tube))
        if not self.writer.room(len(record)):
            return 0
        seg = self.writer.append(record)
        self.ledger.remove(item, segment)
        self.ledger.add(item, seg, len(record))
        if isinstance(item, tuple):
            self.state_file[item[1]] = (seg, self.state_file[item[1]][1])
        else:
            self.pause_file[str(item)] = seg
        self.records_migrated += 1
        return len(record)

    def _migrate_jobs(self, jobs: list[Job]) -> int:
        """Rewrite these jobs' full records forward in this order, all or none (0: no room)."""
        records = [frame_pair(encode_put_head(job), job.body) for job in jobs]
        size = sum(map(len, records))
        if not self.writer.room(size):
            return 0
        append, ledger = self.writer.append, self.ledger
        for job, record in zip(jobs, records, strict=True):
            seg = append(record)
            ledger.remove(job, job.file)
            ledger.add(job, seg, len(record))
            job.file = seg
        self.records_migrated += len(jobs)
        return size

    # ---- checkpoints -----------------------------------------------------------------

    @property
    def checkpoint(self) -> tuple[Checkpoint, asyncio.Task[int]] | None:
        """The checkpoint being built and its task, if any (`Checkpoints` decides when)."""
        return self.checkpoints.running

    def start_checkpoint(self) -> asyncio.Task[int]:
        """Seal the log here and build a checkpoint in another process (one at a time)."""
        return self.checkpoints.start()

    # ---- reporting and shutdown --------------------------------------------------------

    def binlog_stats(self) -> tuple[int, int, int, int, int]:
        """(oldest index, current index, records migrated, records written, max size),
        as beanstalkd 1.12 shows them: from start-up on, the current index is the segment
        the next record goes to (a restart opens a new one, so it is above the old ones),
        and the oldest is the current one while no older segment is kept."""
        writer = self.writer
        current = writer.upcoming_index()
        oldest = writer.oldest()
        return (
            current if oldest is None else min(oldest.index, current),
            current,
            self.records_migrated,
            writer.records_written,
            writer.segment_size,
        )

    async def aclose(self) -> None:
        await self.checkpoints.close()
        await self.commit.aclose()
        self._write_snapshot()
        self.writer.close()

    def _write_snapshot(self) -> None:
        """At a clean shutdown, with every record written: the state as a snapshot, so
        the next start reads it instead of replaying these segments (docs/wal.md)."""
        writer, engine = self.writer, self.engine
        if writer.failed is not None or len(engine.jobs) < self.settings.snapshot_min_jobs:
            return
        covered = writer.covered()
        if not covered:
            return
        directory = self.settings.directory
        try:
            payload = snapshot_payload.encode(engine, self.pause_file, self.state_file)
            size = snapshot_file.write(directory, covered, payload)
        except OSError as exc:  # snapshot_file.write removed its .tmp
            log.warning("WAL snapshot not written (%s); the next start replays the log", exc)
            return
        log.info("WAL snapshot written: %d jobs, %.1f MB", len(engine.jobs), size / 1e6)
        if self.engine.journal is self:
            self.engine.journal = None
        if self.lock is not None:
            self.lock.release()


def _buried_from(tube: Tube, segment: int) -> list[Job]:
    """`tube`'s buried jobs from the first one pinned in `segment` on, in bury order.
    Recovery orders buried jobs by their latest record, so moving one job's record
    forward means moving every job buried after it too (in order)."""
    jobs = iter(tube.buried.values())
    for job in jobs:
        if job.file == segment:
            return [job, *jobs]
    return []


def load_snapshot(
    directory: Path, restorer: Restorer, progress: ReplayProgress
) -> Generator[None, None, dict[int, int]]:
    """Fold DIR/snapshot into `restorer` if it matches the log, a chunk a step; return the
    segments it covers (index -> end). A damaged or outdated one is removed and the whole
    log is replayed (it holds everything the snapshot does); one whose checksums pass but
    whose content does not decode raises CorruptLog, as a bad record does."""
    progress.loading(0)  # /readyz: loading the snapshot is replay too
    path = snapshot_file.path_of(directory)
    snap, why = snapshot_file.read_usable(directory)
    if why is not None:
        log.warning("WAL snapshot %s not used (%s); replaying the whole log", path, why)
        snapshot_file.remove(directory)
    if snap is None or why is not None:
        return {}
    jobs = 0
    try:
        for jobs in snapshot_payload.load(restorer, snap.data, snap.start):
            progress.loading(jobs)
            yield
    except RecordError as exc:
        raise CorruptLog(path, snap.start, f"{exc} (remove it: the log is replayed whole)") from exc
    finally:
        snap.close()
    log.info("WAL snapshot %s: %d jobs, segments up to %d", path, jobs, snap.last)
    return snap.covered


def replay_segments(
    reader: LogReader, restorer: Restorer, progress: ReplayProgress
) -> Generator[None, None, None]:
    """Fold the reader's segments into `restorer`, REPLAY_STEP records a step (a record
    that does not decode raises CorruptLog naming its segment and offset)."""
    progress.begin(len(reader.segments), reader.bytes_total)
    paths = dict(reader.segments)
    count = left = 0  # records folded; records until the next step
    for index, records in reader.segment_records(strict=True):
        while True:  # REPLAY_STEP records at a time across segments, then a step
            if not left:
                left = REPLAY_STEP
            try:
                done = restorer.fold(index, islice(records, left))
            except BadRecord as exc:
                raise CorruptLog(paths[index], exc.offset, exc.reason) from exc
            count += done
            left -= done
            progress.update(len(reader.reports), reader.bytes_read, count,
                            len(restorer.jobs))  # fmt: skip
            if left:
                break  # the segment's records are exhausted
            yield


def _state_item(key: str) -> tuple[str, str]:
    """A named state's ledger item (distinct from a paused tube's name)."""
    return ("state", key)


async def open_wal(engine: Engine, settings: WalSettings, now: int, io: FileIO | None,
                   progress: ReplayProgress) -> Durability:  # fmt: skip
    """The log for `beanpod serve -b DIR`, with the engine restored from it (the event
    loop keeps running between slices of the replay; `progress` tells how far it got)."""
    wal = Durability(engine, settings, io)
    wal.progress = progress
    await wal.open_async(now)
    return wal


async def close_wal(wal: Durability, sessions: Iterable[asyncio.Protocol]) -> None:
    """Stop reading commands, then write, fsync and close the log (clean shutdown)."""
    for session in sessions:
        transport = getattr(session, "transport", None)
        if transport is not None and not transport.is_closing():
            transport.pause_reading()
    await wal.aclose()
