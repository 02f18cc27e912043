"""Group commit: one write per loop turn for every connection's records, fsyncs in a
worker thread, and replies held until what they acknowledge is on disk.

A session whose batch produced records hands its replies to `hold()` instead of writing
them. The flush (scheduled with call_soon when the first record of a turn is appended)
writes all records at once; then held replies go out, or, with `-f 0`, wait for the
next fsync to finish in the worker thread. Anything a session sends later queues behind
its held replies, so each connection still sees its replies in order. Batches without
records are never delayed. A caller with no connection to answer (an HTTP action) awaits
`settled()` instead: a future released with the replies held at that point.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import cast

from beanpod.durability.log import Holder
from beanpod.storage.syncer import SyncThread
from beanpod.storage.wal import SyncJob, WalWriter

log = logging.getLogger("beanpod.wal")

RETRY_SECONDS = 0.1  # how soon a failed write or fsync is tried again


# session, reply bytes, close after writing; or a `settled()` future, b"", False
Held = tuple[Holder | asyncio.Future[None], bytes, bool]


class GroupCommit:
    def __init__(
        self, writer: WalWriter, fsync_ms: int | None, before_flush: Callable[[], None]
    ) -> None:
        """fsync_ms: 0 = fsync before replying, N = at most every N ms, None = never."""
        self.writer = writer
        self.always = fsync_ms == 0
        self.interval = None if not fsync_ms else fsync_ms / 1000
        self.before_flush = before_flush
        # Called after a flush that wrote once `writer.bytes_appended` is above
        # `quiet_until`; it returns the next such mark (a checkpoint's owner: until the log
        # grew past its floor it has nothing to do, and a call costs more than the flush).
        self.after_write: Callable[[], int] | None = None
        self.quiet_until = -1
        self.loop = loop = asyncio.get_running_loop()
        # bound once: scheduling a flush (once a loop turn) makes no bound methods
        self.call_soon = loop.call_soon
        self.flush_now: Callable[[], None] = self.flush
        self.syncer = SyncThread()
        self.scheduled = False
        self.waiting_write: list[Held] = []
        self.waiting_sync: deque[tuple[int, list[Held]]] = deque()
        self.write_epoch = 0
        self.syncing = False  # a SyncJob runs on the fsync thread
        self.idle_waiters: list[asyncio.Future[None]] = []  # aclose waits for the thread
        self.sync_again = False
        self.last_sync = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.retry: asyncio.TimerHandle | None = None

    def schedule(self) -> None:
        """Flush at the end of this loop turn (called on a turn's first record)."""
        if not self.scheduled:
            self.scheduled = True
            self.call_soon(self.flush_now)

    def hold(self, session: Holder, data: bytes, close: bool = False) -> None:
        session.held += 1
        self.waiting_write.append((session, data, close))
        if not self.scheduled:
            self.schedule()

    def settled(self) -> asyncio.Future[None]:
        """A future done once what was appended so far is as durable as a held reply
        (for callers that answer no connection: an HTTP action waits on it)."""
        future: asyncio.Future[None] = self.loop.create_future()
        self.waiting_write.append((future, b"", False))
        if not self.scheduled:
            self.schedule()
        return future

    # ---- writing -----------------------------------------------------------------------

    def flush(self) -> None:  # noqa: C901 - one call per flush, kept flat (the hot path)
        self.scheduled = False
        writer = self.writer
        # Compaction can only have work when segments older than the current one exist.
        if (writer.failed is None or writer.pending) and (
            writer.current is None or len(writer.segments) > 1 + len(writer.spares)
        ):
            self.before_flush()
        wrote = bool(writer.pending)
        if not writer.flush():
            self._retry_later()
            return
        if wrote and self.after_write is not None and writer.bytes_appended > self.quiet_until:
            self.quiet_until = self.after_write()
        held, self.waiting_write = self.waiting_write, []
        if not self.always:
            release(held)
            if writer.drops:
                self._start_sync()
            elif wrote and self.timer is None and self.interval is not None:
                self._interval_sync()  # (a pending timer already covers this write)
        elif wrote or writer.sync_needed():
            self.write_epoch += 1
            if held:
                self.waiting_sync.append((self.write_epoch, held))
            self._start_sync()
        elif held:  # replies queued behind earlier held ones: release with those
            if self.waiting_sync:
                self.waiting_sync[-1][1].extend(held)
            else:
                release(held)

    def _retry_later(self) -> None:
        if self.retry is None:
            self.retry = self.loop.call_later(RETRY_SECONDS, self._retry)

    def _retry(self) -> None:
        self.retry = None
        self.flush()
        if self.writer.failed is None and self.writer.sync_needed():
            self._start_sync()

    # ---- syncing -----------------------------------------------------------------------

    def _interval_sync(self) -> None:
        elapsed = self.loop.time() - self.last_sync
        assert self.interval is not None
        if elapsed >= self.interval:
            self._start_sync()
        elif self.timer is None:
            self.timer = self.loop.call_later(self.interval - elapsed, self._timer_fired)

    def _timer_fired(self) -> None:
        self.timer = None
        if self.writer.sync_needed():
            self._start_sync()

    def _start_sync(self) -> None:
        if self.syncing:
            self.sync_again = True
            return
        job = self.writer.take_sync()
        self.last_sync = self.loop.time()
        self.syncing = True
        self.syncer.submit(job, partial(self._from_thread, job, self.write_epoch))

    def _from_thread(self, job: SyncJob, epoch: int, exc: BaseException | None) -> None:
        """On the fsync thread: hand the outcome to the loop."""
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is left to tell
            self.loop.call_soon_threadsafe(self._sync_done, job, epoch, exc)

    def _sync_done(self, job: SyncJob, epoch: int, exc: BaseException | None) -> None:
        self.syncing = False
        waiters, self.idle_waiters = self.idle_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        if exc is not None:
            if not isinstance(exc, OSError):
                exc = OSError(str(exc))
            self.writer.sync_failed(job, exc)
            self._retry_later()
            return
        waiting = self.waiting_sync
        while waiting and waiting[0][0] <= epoch:
            release(waiting.popleft()[1])
        if self.sync_again or waiting or self.writer.drops:
            self.sync_again = False
            self._start_sync()

    # ---- shutdown ----------------------------------------------------------------------

    async def _sync_idle(self) -> None:
        """Wait until no SyncJob runs (its outcome handled on the loop)."""
        while self.syncing:
            waiter = self.loop.create_future()
            self.idle_waiters.append(waiter)
            await waiter

    async def aclose(self) -> None:
        """Write and fsync everything, then stop the fsync thread."""
        for handle in (self.timer, self.retry):
            if handle is not None:
                handle.cancel()
        self.flush()
        await self._sync_idle()
        if self.writer.pending:
            log.error(
                "WAL: %d unwritten chunks dropped at shutdown (never acknowledged)",
                len(self.writer.pending),
            )
        else:
            outcome: asyncio.Future[BaseException | None] = self.loop.create_future()

            def done(exc: BaseException | None) -> None:
                self.loop.call_soon_threadsafe(outcome.set_result, exc)

            self.syncing = True
            self.syncer.submit(self.writer.take_sync(), done)
            exc = await outcome
            self.syncing = False
            if exc is not None:
                log.error("WAL: final fsync failed: %s", exc)
            else:  # everything is on disk: the held replies may go out
                release(self.waiting_write + [h for _, b in self.waiting_sync for h in b])
        self.syncer.stop()


def release(batch: list[Held]) -> None:
    for holder, data, close in batch:
        # A session's entry has a reply or a close: the type test only for the others.
        if not data and not close and isinstance(holder, asyncio.Future):  # settled()
            if not holder.done():  # (its waiter may have been cancelled)
                holder.set_result(None)
            continue
        cast("Holder", holder).released(data, close)
