"""Compaction: before each flush, live records of the oldest segment are rewritten
forward (within a budget of what was written since), so segments that pin nothing
live can be dropped (storage/compaction.py decides when and how much)."""

from __future__ import annotations

from collections.abc import Callable, Hashable

from beanpod.core.job import Job, JobState
from beanpod.core.tube import Tube
from beanpod.durability.journal import WalJournal
from beanpod.durability.records import encode_pause, encode_put_head, encode_state
from beanpod.storage import compaction
from beanpod.storage.framing import frame, frame_pair


class Compactor:
    def __init__(self, journal: WalJournal, keep_segments: Callable[[], bool]) -> None:
        """keep_segments: True while nothing may be dropped (a checkpoint reads them)."""
        self.journal = journal
        self.keep_segments = keep_segments
        self.records_migrated = 0
        self._written_mark = 0

    def compact(self) -> None:
        writer, ledger = self.journal.writer, self.journal.ledger
        written = writer.bytes_appended - self._written_mark
        self._written_mark = writer.bytes_appended
        self._drop_unpinned()
        oldest = writer.oldest()
        if oldest is None or oldest is writer.current or oldest in writer.spares:
            return
        if not compaction.should_compact(
            writer.disk_bytes(), ledger.live_bytes, writer.segment_size
        ):
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
        if self.keep_segments():
            return
        writer, ledger = self.journal.writer, self.journal.ledger
        while (seg := writer.oldest()) is not None and seg is not writer.current:
            if seg in writer.spares or ledger.live(seg.index):
                return
            writer.drop_oldest()

    def _migrate(self, item: Hashable, segment: int) -> int:
        """Rewrite one live item's full record forward; its size, or 0 if no room."""
        journal = self.journal
        if isinstance(item, Job):
            if item.file != segment:
                return 1  # already moved, with the buried jobs of its tube
            if item.state is JobState.BURIED:
                return self._migrate_jobs(_buried_from(item.tube, segment) or [item])
            return self._migrate_jobs([item])
        if isinstance(item, tuple):  # a named state
            key = item[1]
            record = frame(encode_state(key, journal.state_file[key][1]))
        else:
            tube = journal.engine.tubes.get(str(item))
            if tube is None or not tube.pause_ms:
                journal.ledger.remove(item, segment)
                del journal.pause_file[str(item)]
                return 1
            record = frame(encode_pause(tube))
        if not journal.writer.room(len(record)):
            return 0
        seg = journal.writer.append(record)
        journal.ledger.remove(item, segment)
        journal.ledger.add(item, seg, len(record))
        if isinstance(item, tuple):
            journal.state_file[item[1]] = (seg, journal.state_file[item[1]][1])
        else:
            journal.pause_file[str(item)] = seg
        self.records_migrated += 1
        return len(record)

    def _migrate_jobs(self, jobs: list[Job]) -> int:
        """Rewrite these jobs' full records forward in this order, all or none (0: no room)."""
        records = [frame_pair(encode_put_head(job), job.body) for job in jobs]
        size = sum(map(len, records))
        writer = self.journal.writer
        if not writer.room(size):
            return 0
        append, ledger = writer.append, self.journal.ledger
        for job, record in zip(jobs, records, strict=True):
            seg = append(record)
            ledger.remove(job, job.file)
            ledger.add(job, seg, len(record))
            job.file = seg
        self.records_migrated += len(jobs)
        return size


def _buried_from(tube: Tube, segment: int) -> list[Job]:
    """`tube`'s buried jobs from the first one pinned in `segment` on, in bury order.
    Recovery orders buried jobs by their latest record, so moving one job's record
    forward means moving every job buried after it too (in order)."""
    jobs = iter(tube.buried.values())
    for job in jobs:
        if job.file == segment:
            return [job, *jobs]
    return []
