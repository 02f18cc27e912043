"""Folding a log directory into a Restorer, as start-up and the checkpoint's builder
both do: the snapshot first (when it still matches the log), then the segments after it,
a step at a time so the caller can report progress and let the event loop run."""

from __future__ import annotations

import logging
from collections.abc import Generator
from itertools import islice
from pathlib import Path

from beanpod.durability import snapshot as snapshot_payload
from beanpod.durability.progress import ReplayProgress
from beanpod.durability.records import RecordError
from beanpod.durability.restore import BadRecord, Restorer
from beanpod.storage import snapshot as snapshot_file
from beanpod.storage.recovery import CorruptLog, LogReader

log = logging.getLogger("beanpod.wal")

REPLAY_STEP = 4096  # records between progress updates (and event-loop turns)


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
            progress.update(len(reader.reports), reader.bytes_read, count, len(restorer.jobs))
            if left:
                break  # the segment's records are exhausted
            yield
