"""Start-up: the engine restored from a log directory, and the directory tidied for the
writer that follows (segments without records dropped, torn tails cut)."""

from __future__ import annotations

import gc
import os
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

from beanpod.core.engine import Engine
from beanpod.durability.progress import ReplayProgress
from beanpod.durability.replay import load_snapshot, replay_segments
from beanpod.durability.restore import Restored, Restorer
from beanpod.storage.framing import FRAME_SIZE
from beanpod.storage.recovery import LogReader
from beanpod.storage.segments import DirLock, list_segments

Kept = list[tuple[int, Path, int]]  # (index, path, end) of each segment kept for writing


@dataclass
class Opened:
    restored: Restored
    kept: Kept  # segments the writer keeps
    first_index: int  # of the segment new records go to
    replayed: int  # bytes of segments replayed on top of the snapshot


def restore(
    directory: Path, engine: Engine, progress: ReplayProgress, lock: DirLock, now: int
) -> Generator[None, None, Opened]:
    """Restore `engine` from the locked `directory`, a step at a time (every REPLAY_STEP
    records); a failure releases `lock` (raises CorruptLog or RestoreError)."""
    collecting = gc.isenabled()
    gc.disable()  # replay makes millions of objects and no cycles: don't walk them
    try:
        restorer = Restorer(engine, FRAME_SIZE)
        covered = yield from load_snapshot(directory, restorer, progress)
        reader = LogReader(directory, max(covered, default=0))
        yield from replay_segments(reader, restorer, progress)
        restored = restorer.finish(now)
        progress.finish(restored.jobs)
        kept, first_index = tidy(reader, covered)
    except BaseException:
        lock.release()
        raise
    finally:
        gc.freeze()  # the restored jobs are long-lived: no collection walks them
        if collecting:
            gc.enable()
    return Opened(restored, kept, first_index, reader.bytes_total)


def tidy(reader: LogReader, covered: dict[int, int]) -> tuple[Kept, int]:
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
