"""The write-ahead log in local segment files (`beanpod serve -b DIR`), put together.

`Durability` is the engine's journal (journal.py) once `open` has restored the engine
from the directory (startup.py); it runs group commit (commit.py), compaction before each
flush (compactor.py) and checkpoints (checkpoint.py), and writes a snapshot at a clean
shutdown. It implements log.DurableLog: a log kept elsewhere is another module.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from pathlib import Path

from beanpod.core.engine import Engine
from beanpod.durability import snapshot as snapshot_payload
from beanpod.durability import startup
from beanpod.durability.checkpoint import Checkpoint, Checkpoints
from beanpod.durability.commit import GroupCommit
from beanpod.durability.compactor import Compactor
from beanpod.durability.journal import DELETE_FRAME, WalJournal
from beanpod.durability.log import DurableLog, LogMetrics
from beanpod.durability.progress import ReplayProgress
from beanpod.durability.restore import Restored
from beanpod.storage import snapshot as snapshot_file
from beanpod.storage.segments import DirLock, FileIO
from beanpod.storage.wal import WalWriter

log = logging.getLogger("beanpod.wal")


@dataclass(frozen=True)
class WalSettings:
    directory: Path
    fsync_ms: int | None = 50  # 0: before every reply; None: never (-F)
    segment_size: int = 10485760
    snapshot_min_jobs: int = 10_000  # a clean shutdown with this many jobs writes a snapshot
    # a checkpoint starts once the log written since the last snapshot exceeds this and
    # a share of the live bytes (checkpoint.py; 0: never by itself)
    checkpoint_floor: int = 0  # off unless asked (`beanpod serve` asks: ServerConfig)


class Durability(WalJournal):
    def __init__(self, engine: Engine, settings: WalSettings, io: FileIO | None = None) -> None:
        super().__init__(engine)
        self.settings = settings
        self.io = io
        self.lock: DirLock | None = None
        self.progress = ReplayProgress()
        self.restored = Restored()
        self.compactor = Compactor(self, lambda: self.checkpoints.running is not None)
        self.checkpoints: Checkpoints

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

    def opening(self, now: int) -> Generator[None, None, None]:
        """`open` in steps: yields every REPLAY_STEP records."""
        directory = self.settings.directory
        directory.mkdir(parents=True, exist_ok=True)
        self.lock = DirLock(directory)
        opened = yield from startup.restore(directory, self.engine, self.progress, self.lock, now)
        self.restored = restored = opened.restored
        self._start_writing(opened)
        log.info("WAL %s: restored %d jobs, next id %d", directory, restored.jobs, restored.next_id)

    def _start_writing(self, opened: startup.Opened) -> None:
        """The writer for new records, the ledger of what pins each kept segment, group
        commit and checkpoints; then the engine journals here."""
        settings = self.settings
        fsync_ms = settings.fsync_ms
        self.writer = writer = WalWriter(
            settings.directory, settings.segment_size, opened.first_index, opened.kept,
            self.io, keep_unsynced=fsync_ms is not None,
        )  # fmt: skip
        writer.on_new_segment = self.watermark
        self.adopt(opened.restored)
        writer.reserved = len(self.engine.jobs) * DELETE_FRAME
        if not writer.room(0):
            log.error("WAL: no disk space for a new segment; puts answer OUT_OF_MEMORY")
        self.commit = GroupCommit(writer, fsync_ms, self.compactor.compact)
        self.checkpoints = Checkpoints(
            writer, settings.directory, settings.checkpoint_floor, settings.snapshot_min_jobs,
            lambda: self.ledger.live_bytes, lambda: len(self.engine.jobs), opened.replayed,
        )  # fmt: skip
        if settings.checkpoint_floor:
            self.commit.after_write = self.checkpoints.after_write
            self.checkpoints.watch_idle()
        self.engine.keep_journal(self)

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
            self.compactor.records_migrated,
            writer.records_written,
            writer.segment_size,
        )

    def metrics(self) -> LogMetrics:
        writer, times = self.writer, self.commit.syncer.times
        return LogMetrics(
            len(writer.segments), writer.disk_bytes(), writer.bytes_appended,
            writer.records_written, times.BOUNDS, list(times.buckets), times.sum,
        )  # fmt: skip

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
            self.engine.keep_journal(None)
        if self.lock is not None:
            self.lock.release()


async def open_wal(
    engine: Engine, settings: WalSettings, now: int, io: FileIO | None, progress: ReplayProgress
) -> Durability:
    """The log for `beanpod serve -b DIR`, with the engine restored from it (the event
    loop keeps running between slices of the replay; `progress` tells how far it got)."""
    wal = Durability(engine, settings, io)
    wal.progress = progress
    await wal.open_async(now)
    return wal


async def close_wal(wal: DurableLog, sessions: Iterable[asyncio.Protocol]) -> None:
    """Stop reading commands, then write, fsync and close the log (clean shutdown)."""
    for session in sessions:
        transport = getattr(session, "transport", None)
        if transport is not None and not transport.is_closing():
            transport.pause_reading()
    await wal.aclose()
