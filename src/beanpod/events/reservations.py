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
from beanpod.events.writer import DAY_DIR_RE, FILE_RE

OPENS: Final = frozenset({RESERVE, TOUCH})  # a job's latest event is one: it is held
BLOCK: Final = 1 << 20  # bytes read at a time, from a file's end
# The head every line the server writes starts with (writer._TS_PREFIX and the event's
# order of fields): matched without decoding the JSON; any other line is decoded whole.
_HEAD: Final = re.compile(rb'\{"v":\d+,"ts":(\d+),"event":"(\w+)","job":(\d+|null),"queue":')


def open_reservations(directory: Path, jobs: Collection[int], window_ms: int) -> list[int]:
    """The jobs of `jobs` whose latest event in the log under `directory` is a reserve
    or touch, newest first; lines more than `window_ms` older than the newest are not
    read."""
    seen: set[int] = set()
    held: list[int] = []
    oldest: int | None = None
    for line in _lines_newest_first(directory):
        event = _parse(line)
        if event is None:
            continue
        ts, name, job = event
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


def _parse(line: bytes) -> tuple[int, str, int | None] | None:
    """(ts, event, job) of a complete event line; None for a torn or invalid one."""
    match = _HEAD.match(line)
    if match is not None and line.endswith(b"}"):
        job = match.group(3)
        return int(match.group(1)), match.group(2).decode(), None if job == b"null" else int(job)
    event = read_line(line)
    if event is None:
        return None
    return event["ts"], event["event"], event["job"]


def log_files(directory: Path) -> list[Path]:
    """The log's files in write order (their sequence numbers)."""
    found: list[tuple[int, Path]] = []
    if not directory.is_dir():
        return []
    for day in directory.iterdir():
        if DAY_DIR_RE.match(day.name) and day.is_dir():
            for path in day.iterdir():
                match = FILE_RE.match(path.name)
                if match:
                    found.append((int(match.group(2)), path))
    return [path for _, path in sorted(found)]


def _lines_newest_first(directory: Path) -> Iterator[bytes]:
    for path in reversed(log_files(directory)):
        yield from _lines_backwards(path)


def _lines_backwards(path: Path) -> Iterator[bytes]:
    """The lines of `path` from its last to its first, reading BLOCK bytes at a time."""
    with open(path, "rb") as f:
        end = f.seek(0, os.SEEK_END)
        rest = b""  # the start of a line whose beginning is in an earlier block
        while end > 0:
            start = max(0, end - BLOCK)
            f.seek(start)
            lines = (f.read(end - start) + rest).split(b"\n")
            end = start
            rest = lines[0]
            yield from reversed(lines[1:])
        yield rest
