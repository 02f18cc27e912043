"""Which reservations the event log leaves open, read back from its newest line.

A crash (kill -9, power loss) ends every reservation without an event; the restarted
server asks this module which of the jobs it restored were last seen reserved (or
touched) and closes each with a `timeout` (server/cut_reservations.py). Lines are read
newest first, in write order (file sequence, then line), so only the tail of a long log
is read: the scan stops once every job asked about has been seen, or at lines older
than a window the caller derives from the jobs' TTRs (an older reservation was closed
by its TTR expiry, which is logged).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Final

from beanpod.events.schema import RESERVE, TOUCH, read_line
from beanpod.events.writer import log_files

OPENS: Final = frozenset({RESERVE, TOUCH})  # a job's latest event is one: it is held
BLOCK: Final = 1 << 20  # bytes read at a time, from a file's end
# A line as the server writes it (writer._TS_PREFIX, then the event's fields in this
# order), matched a block at a time without decoding its JSON; any other line (another
# writer's, or one a crash cut) is in the last group and decoded whole.
_LINE: Final = re.compile(
    rb'^(?:\{"v":\d+,"ts":(\d+),"event":"(\w+)","job":(\d+|null),"queue":.*\}|(.*))$', re.M
)
Event = tuple[int, str, int | None]  # ts, name, job


def open_reservations(directory: Path, jobs: Collection[int], window_ms: int) -> list[int]:
    """The jobs of `jobs` whose latest event in the log under `directory` is a reserve
    or touch, newest first; lines more than `window_ms` older than the newest are not
    read."""
    seen: set[int] = set()
    held: list[int] = []
    oldest: int | None = None
    for ts, name, job in _events_newest_first(directory):
        if oldest is None:
            oldest = ts - window_ms
        elif ts < oldest:
            break
        if job is None or job in seen or job not in jobs:
            continue
        seen.add(job)
        if name in OPENS:
            held.append(job)
        if len(seen) == len(jobs):
            break
    return held


def _events_newest_first(directory: Path) -> Iterator[Event]:
    """(ts, event, job) of each valid line, newest first (a torn or invalid line is
    skipped, as readers skip it)."""
    for path in reversed(log_files(directory)):
        for ts, name, job, other in _matches_backwards(path):
            if ts:
                yield int(ts), name.decode(), None if job == b"null" else int(job)
            elif other and (event := read_line(other)) is not None:
                yield event["ts"], event["event"], event["job"]


def _matches_backwards(path: Path) -> Iterator[tuple[bytes, bytes, bytes, bytes]]:
    """`_LINE`'s groups for each line of `path`, last line first, BLOCK bytes read at a
    time (a line cut by a block's start is completed by the block before it)."""
    with open(path, "rb") as f:
        end = f.seek(0, os.SEEK_END)
        rest = b""  # the start of a line whose beginning is in an earlier block
        while end > 0:
            start = max(0, end - BLOCK)
            f.seek(start)
            block = f.read(end - start) + rest
            end = start
            rest, _, block = block.partition(b"\n") if start else (b"", b"", block)
            yield from reversed(_LINE.findall(block))
