"""A checkpoint while serving: a snapshot written without stopping the server, so a
restart after a crash loads it and replays only the segments written after it.

Fuzzy, on the event loop (docs/wal.md "Checkpoint"): the log is sealed at point P (the
next record starts a new segment); the jobs that existed at P are encoded CHUNK at a
time between loop turns, each as it is when its chunk is encoded; a worker thread fsyncs
the covered segments, then writes, fsyncs and renames the file. Every record is a whole
image or an absolute change, so the segments after P replayed over it converge on what a
replay of the whole log restores. Jobs whose latest full record is after P are left out
(their put is replayed) so the compaction ledger's runs never name a replayed segment.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from pathlib import Path

from beanpod.core import snapshot as snapshot_payload
from beanpod.core.engine import Engine
from beanpod.storage import snapshot as snapshot_file
from beanpod.storage.segments import segment_name
from beanpod.storage.wal import WalWriter

log = logging.getLogger("beanpod.wal")

CHUNK = 10_000  # jobs encoded per loop turn (~10 ms)


class Cancelled(Exception):
    """The checkpoint was given up (a clean shutdown, or the writer failed)."""


class Checkpoint:
    """One checkpoint, started at P by `begin`, run by `run` (an asyncio task)."""

    def __init__(
        self,
        engine: Engine,
        writer: WalWriter,
        directory: Path,
        pause_file: dict[str, int],
        state_file: dict[str, tuple[int, bytes]],
    ) -> None:
        """Seal the log here (P) and take what existed at P; nothing is encoded yet."""
        self.engine = engine
        self.writer = writer
        self.directory = directory
        self.cancelled = False  # read by the writing thread before it renames
        self.covered = writer.seal()
        self.last = max(self.covered, default=0)
        self.order = snapshot_payload.in_order(engine)
        pauses = snapshot_payload.paused(engine, pause_file)
        self.encoder = snapshot_payload.Encoder(engine, pauses, state_file)
        self.started = time.monotonic()

    def cancel(self) -> None:
        self.cancelled = True

    async def run(self, chunk: int = CHUNK) -> int:
        """Encode, then write from a thread; return the file's size (0: given up)."""
        try:
            await self._encode(chunk)
            self._check()
            size = await asyncio.to_thread(self._write, self.encoder)
        except Cancelled as why:
            log.info("WAL checkpoint given up (%s)", why)
            return 0
        except OSError as exc:  # snapshot_file.write removed its .tmp
            log.warning("WAL checkpoint not written (%s); the old snapshot stays", exc)
            return 0
        log.info("WAL checkpoint written: %d jobs, %.1f MB, segments up to %d, in %.2f s",
                 len(self.encoder.ids), size / 1e6, self.last,
                 time.monotonic() - self.started)  # fmt: skip
        return size

    async def _encode(self, chunk: int) -> None:
        order, last, live, add = self.order, self.last, self.engine.jobs, self.encoder.add
        for at in range(0, len(order), chunk):
            await asyncio.sleep(0)  # the loop serves between chunks
            self._check()
            # deleted since P: skipped (a replayed delete of it is harmless); rewritten
            # after P: skipped (its replayed put restores it whole)
            add([j for j in order[at : at + chunk] if j.file <= last and live.get(j.id) is j])
        self.order = []

    def _check(self) -> None:
        if self.cancelled:
            raise Cancelled("shutting down")
        writer = self.writer
        if writer.failed is not None:
            raise Cancelled(f"WAL writer failed: {writer.failed}")
        covered = self.covered
        if any(chunk.segment.index in covered for chunk in writer.pending):
            raise Cancelled("covered records not written yet")

    def _write(self, encoder: snapshot_payload.Encoder) -> int:
        """(worker thread) Sync what it covers, then write the snapshot in its place."""
        payload = encoder.payload()
        for index in sorted(self.covered):
            _fsync(self.directory / segment_name(index))
        if self.cancelled:
            raise Cancelled("shutting down")
        size = snapshot_file.write(self.directory, self.covered, payload,
                                   lambda: not self.cancelled)  # fmt: skip
        if not size:
            raise Cancelled("shutting down")
        return size


def _fsync(path: Path) -> None:
    """Make a covered segment durable; one compaction dropped meanwhile needs nothing
    (its live records were rewritten after P)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
