"""The engine's Journal over the local write-ahead log, and the connections' Commits.

Each engine mutation becomes a record (records.py) that the WalWriter places in the
current segment; the compaction ledger learns which segment pins which live job, paused
tube or named state (compactor.py moves them forward). Records are written and fsynced
by group commit (commit.py), which holds the replies that acknowledge them.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Hashable
from typing import Final, cast

from beanpod.core.engine import Engine
from beanpod.core.job import Job
from beanpod.core.tube import MAX_TUBE_NAME, Tube
from beanpod.durability.commit import GroupCommit
from beanpod.durability.log import Holder
from beanpod.durability.records import (
    DELETE,
    DELETE_SIZE,
    PUT_OVERHEAD,
    encode_next_id,
    encode_pause,
    encode_put_head,
    encode_state,
    encode_update,
    pack_delete,
)
from beanpod.durability.restore import Restored
from beanpod.storage import compaction
from beanpod.storage.framing import FRAME_SIZE, frame, pack_frame_header
from beanpod.storage.wal import WalWriter

DELETE_FRAME: Final = FRAME_SIZE + DELETE_SIZE
# Room asked for beyond a mutation's body: record header, tube name, its future delete.
ROOM_MARGIN: Final = FRAME_SIZE + PUT_OVERHEAD + MAX_TUBE_NAME + DELETE_FRAME + 64
# Final: compiled, C statics (an imported name is a module dict lookup per record)
crc32: Final = zlib.crc32
# A body up to this size is copied into the payload first: one crc32 call over head and
# body costs more than that copy; a larger one is checksummed in place.
SMALL_BODY: Final = 4096
pack_header: Final = pack_frame_header


class WalJournal:
    """Records mutations once `writer` and `commit` are set (after the restore)."""

    writer: WalWriter
    commit: GroupCommit

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.ledger = compaction.Ledger()
        self.pause_file: dict[str, int] = {}  # paused tube -> segment of its pause record
        # named states set (STATE records): key -> (segment of its latest record, value)
        self.state_file: dict[str, tuple[int, bytes]] = {}
        self.appended = 0  # records appended so far (sessions compare it around a batch)

    def adopt(self, restored: Restored) -> None:
        """Take over what pins each kept segment from the restore."""
        ledger = self.ledger
        ledger.adopt(cast("dict[int, dict[Hashable, int]]", restored.pins))  # jobs hash
        for segment, jobs, sizes in restored.runs:
            ledger.add_run(segment, cast("list[Hashable]", jobs), sizes)
        for job in restored.unpinned:
            ledger.remove(job, job.file)
        restored.pins, restored.runs, restored.unpinned = {}, [], []  # the ledger holds them
        for name, file in restored.paused.items():
            ledger.add(name, file, FRAME_SIZE + 64)
            self.pause_file[name] = file
        for key, (file, value) in restored.states.items():
            ledger.add(state_item(key), file, len(frame(encode_state(key, value))))
            self.state_file[key] = (file, value)

    def watermark(self) -> bytes:
        """The record that leads every segment: the next job id."""
        return frame(encode_next_id(self.engine.next_id))

    # ---- the engine's Journal ------------------------------------------------------------

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
        if len(body) <= SMALL_BODY:
            payload = head + body
            record = pack_header(len(payload), crc32(payload)) + payload
        else:
            header = pack_header(len(head) + len(body), crc32(body, crc32(head)))
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
        payload = pack_delete(DELETE, job.id)  # framed inline: the hot path
        writer.append(pack_header(DELETE_SIZE, crc32(payload)) + payload)
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
            self.ledger.remove(state_item(key), old[0])
        if value:  # the latest value pins its segment; a removal pins nothing
            self.ledger.add(state_item(key), seg, len(record))
            self.state_file[key] = (seg, value)
        self.appended += 1
        if not self.commit.scheduled:
            self.commit.schedule()

    def states(self, prefix: str) -> dict[str, bytes]:
        return {k: v for k, (_, v) in self.state_file.items() if k.startswith(prefix)}

    # ---- the connections' Commits ------------------------------------------------------

    def hold(self, session: Holder, data: bytes, close: bool = False) -> None:
        self.commit.hold(session, data, close)

    def settled(self) -> asyncio.Future[None]:
        return self.commit.settled()

    def holds_every_reply(self) -> bool:
        return False


def state_item(key: str) -> tuple[str, str]:
    """A named state's ledger item (distinct from a paused tube's name)."""
    return ("state", key)
