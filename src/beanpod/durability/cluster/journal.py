"""The leader's journal: each loop turn's records (the WAL's bytes) become one batch,
appended to etcd as `log/<seq>` by a transaction fenced on this node's leader key; the
replies that acknowledge them are held until etcd has committed it, as `-f 0` replies
wait for fsync. One transaction is in flight at a time: records of later turns gather
into the next batch (group commit), which waits briefly for the clients the last batch
answered (`gathering`). A batch that is fenced out, or whose outcome is
unknown, is never acknowledged: `lost` is called and the node steps down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from beanpod.core.engine import Engine
from beanpod.core.job import Job
from beanpod.core.tube import MAX_TUBE_NAME, Tube
from beanpod.durability.cluster.appends import Appends
from beanpod.durability.cluster.etcd import EtcdError, EtcdUnknown
from beanpod.durability.cluster.fence import Fence
from beanpod.durability.cluster.gathering import Gathering
from beanpod.durability.commit import Held, release
from beanpod.durability.log import Holder, LogMetrics
from beanpod.durability.progress import ReplayProgress
from beanpod.durability.records import (
    PUT_OVERHEAD,
    encode_delete,
    encode_pause,
    encode_put_head,
    encode_state,
    encode_update,
)
from beanpod.storage.framing import FRAME_SIZE, frame, frame_pair

log = logging.getLogger("beanpod.cluster")

APPEND_TRIES = 3  # one try per member of a 3-member etcd
RETRY_PAUSE = 0.05  # s before a retry: etcd's leadership may be moving (a transfer, an election)
MAX_BATCH = 1 << 20  # bytes of records per transaction (etcd refuses requests > 1.5 MiB)
# A put's record beyond its body: header, fixed fields, tube name (room())
PUT_MARGIN = FRAME_SIZE + PUT_OVERHEAD + MAX_TUBE_NAME + 64


def log_key(prefix: bytes, seq: int) -> bytes:
    return prefix + b"log/%016d" % seq


class EtcdJournal:
    """The engine's Journal and the sessions' Commits on a cluster's leader."""

    def __init__(self, engine: Engine, appends: Appends, prefix: bytes, fence: Fence,
                 next_seq: int, states: dict[str, bytes],
                 lost: Callable[[str], None]) -> None:  # fmt: skip
        self.engine = engine
        self.appends = appends
        self.prefix = prefix
        self.fence = fence
        self.next_seq = next_seq
        self.state_values = states  # named states: key -> latest value
        self.lost = lost
        self.appended = 0  # records appended so far
        self.records: list[bytes] = []  # not yet sent
        self.size = 0
        self.waiting: list[Held] = []  # released once `records` are committed
        self.gathering = Gathering()
        self.sending: asyncio.Task[None] | None = None
        self.records_written = 0
        self.bytes_written = 0
        self.failed: str | None = None
        self.progress = ReplayProgress()  # the node's fold of the log (/readyz)
        self.taken = 0  # records taken into batches so far
        self.cut = 0  # a batch ends after this many records (`boundary`)
        self.boundaries: list[tuple[int, asyncio.Future[int]]] = []  # (records, its seq)
        self.committed: Callable[[int], None] = lambda seq: None  # after each commit

    # ---- the composition root's DurableLog ---------------------------------------------

    def binlog_stats(self) -> tuple[int, int, int, int, int]:
        """As beanstalkd shows its binlog: the batches in etcd stand for segments."""
        return 0, self.next_seq, 0, self.records_written, MAX_BATCH

    def metrics(self) -> LogMetrics:
        return LogMetrics(self.next_seq, 0, self.bytes_written, self.records_written, (), [0], 0.0)

    # ---- the engine's Journal ------------------------------------------------------------

    def room(self, nbytes: int) -> bool:
        return self.failed is None and nbytes + PUT_MARGIN <= MAX_BATCH

    def _append(self, record: bytes) -> None:
        self.records.append(record)
        self.size += len(record)
        self.appended += 1
        self._schedule()

    def record_put(self, job: Job) -> None:
        self._append(frame_pair(encode_put_head(job), job.body))

    def record_update(self, job: Job) -> None:
        self._append(frame(encode_update(job)))

    def record_delete(self, job: Job) -> None:
        self._append(frame(encode_delete(job.id)))

    def record_pause(self, tube: Tube) -> None:
        self._append(frame(encode_pause(tube)))

    def record_state(self, key: str, value: bytes) -> None:
        if value:
            self.state_values[key] = value
        else:
            self.state_values.pop(key, None)
        self._append(frame(encode_state(key, value)))

    def states(self, prefix: str) -> dict[str, bytes]:
        return {k: v for k, v in self.state_values.items() if k.startswith(prefix)}

    # ---- the connections' Commits ------------------------------------------------------

    def holds_every_reply(self) -> bool:
        """Yes: a reply may show a job whose put is still in flight (a reserve or peek of
        it, a stats count), and no client may see what a failover could erase."""
        return True

    def hold(self, session: Holder, data: bytes, close: bool = False) -> None:
        """Send `data` once every record appended so far, and this turn, is committed (a
        woken reserve's reply comes before the put that woke it is recorded): at the end
        of the turn when nothing is in flight then."""
        session.held += 1
        self.waiting.append((session, data, close))
        self.gathering.held(len(self.waiting))
        self._schedule()

    def settled(self) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append((future, b"", False))
        self._schedule()
        return future

    def boundary(self) -> asyncio.Future[int]:
        """The seq of the batch that ends with the last record appended so far, once it
        has committed: records appended later go to later batches, so the engine as it
        is now is the log up to that seq (a leader's checkpoint)."""
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        if self.records_written == self.appended:
            future.set_result(self.next_seq - 1)
        else:
            self.cut = max(self.cut, self.appended)
            self.boundaries.append((self.appended, future))
        return future

    # ---- sending -----------------------------------------------------------------------

    def _schedule(self) -> None:
        if self.sending is None and self.failed is None:
            self.sending = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        """Append batches until nothing waits (the first starts at the end of this turn)."""
        try:
            await asyncio.sleep(0)
            while (self.records or self.waiting) and self.failed is None:
                records, held = self._take()
                if records and not await self._append_batch(records):
                    return
                release(held)
                waiting = len(self.waiting)
                await self.gathering.wait(waiting + len(held), waiting)
        finally:
            self.sending = None

    def _take(self) -> tuple[list[bytes], list[Held]]:
        """Up to MAX_BATCH bytes of records; the held replies go with the last batch."""
        taken, size = 0, 0
        limit = self.cut - self.taken if self.cut > self.taken else len(self.records)
        for record in self.records[:limit]:
            if taken and size + len(record) > MAX_BATCH:
                break
            size += len(record)
            taken += 1
        records, self.records = self.records[:taken], self.records[taken:]
        self.size -= size
        self.taken += taken
        held: list[Held] = []
        if not self.records:
            held, self.waiting = self.waiting, []
        return records, held

    async def _append_batch(self, records: list[bytes]) -> bool:
        """Append one batch; on an unknown outcome (a member died mid-call, a timeout) the
        same transaction is tried again on the next member: its `version == 0` compare
        lets it apply once, so a failed retry tells whether the first try committed."""
        seq, batch = self.next_seq, b"".join(records)
        key = log_key(self.prefix, seq)
        why = ""
        for attempt in range(APPEND_TRIES):
            if attempt:
                await asyncio.sleep(RETRY_PAUSE * attempt)
            try:
                appended = await self.appends.append(self.fence, key, batch)
            except EtcdUnknown as exc:
                why = f"append of log/{seq} unknown: {exc}"
                continue
            except EtcdError as exc:
                return self._fail(f"append of log/{seq} failed: {exc}")
            if not (appended.committed or (attempt and self.fence.wrote(appended))):
                return self._fail(f"append of log/{seq} fenced out: another leader")
            self.next_seq += 1
            self.records_written += len(records)
            self.bytes_written += len(batch)
            self._reached(seq)
            return True
        return self._fail(why)

    def _reached(self, seq: int) -> None:
        """log/`seq` committed: the boundaries it ends are known; the node may checkpoint."""
        while self.boundaries and self.boundaries[0][0] <= self.records_written:
            _, future = self.boundaries.pop(0)
            if not future.done():
                future.set_result(seq)
        self.committed(seq)

    def _fail(self, why: str) -> bool:
        """Acknowledge nothing more: the node steps down (its connections close)."""
        self.failed = why
        for _, future in self.boundaries:  # no batch ends there any more
            if not future.done():
                future.set_exception(EtcdError(why))
        self.boundaries.clear()
        log.error("cluster: %s", why)
        self.lost(why)
        return False

    async def aclose(self) -> None:
        """Wait for what was appended to be committed (or lost)."""
        while self.sending is not None and not self.sending.done():
            await asyncio.shield(self.sending)
