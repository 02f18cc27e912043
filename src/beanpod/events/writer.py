"""Date-partitioned JSON-lines event writer (the server side of the analytics contract).

``append``/``emit`` only encode and buffer; ``flush`` (once per event-loop turn) writes the
buffered lines with one ``write`` per file touched. Files live under
``DIR/date=YYYY-MM-DD/events-<13-digit ts of first event>-<6-digit seq>.jsonl``: the date is
the UTC day of each event's ``ts``; the sequence continues across restarts, and a file's
name timestamp never goes below an earlier file's, so name order is write order.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Final, NamedTuple

from beanpod.events.schema import EVENT_NAMES, SCHEMA_VERSION

MS_PER_DAY: Final = 86_400_000
DEFAULT_MAX_FILE_BYTES: Final = 64 * 1024 * 1024
DEFAULT_MAX_FILE_AGE_MS: Final = 3_600_000
FILE_RE: Final = re.compile(r"^events-(\d{13,})-(\d{6,})\.jsonl$")
DAY_DIR_RE: Final = re.compile(r"^date=\d{4}-\d{2}-\d{2}$")
_QUEUE_CACHE_MAX: Final = 4096
_TAIL_CACHE_MAX: Final = 4096
#: Every line starts with this, then the event's `ts` digits (flush reads them back).
_TS_PREFIX: Final = f'{{"v":{SCHEMA_VERSION},"ts":'
_NO_HEAD: Final = (-1, "")
_ConnEntry = tuple[str, str | None, str]  # queue, worker or state, line tail

_encode = json.JSONEncoder(separators=(",", ":")).encode
_EVENT_JSON: Final = {name: _encode(name) for name in EVENT_NAMES}


def day_folder(ts_ms: int) -> str:
    """``date=YYYY-MM-DD`` for the UTC day of a millisecond timestamp."""
    day = datetime.fromtimestamp((ts_ms // MS_PER_DAY) * 86_400, tz=UTC)
    return f"date={day:%Y-%m-%d}"


def file_name(first_ts: int, seq: int) -> str:
    """The name of a log file whose first event has ``first_ts``."""
    return f"events-{first_ts:013d}-{seq:06d}.jsonl"


class LogFile(NamedTuple):
    """One file of the log: its sequence number, its name's timestamp, its path."""

    seq: int
    name_ts: int
    path: Path


def log_entries(directory: Path) -> list[LogFile]:
    """The log's files under `directory` (``date=*/events-*.jsonl``) in write order (their
    sequence numbers); the one walk of the log's files, for the writer and its readers."""
    if not directory.is_dir():
        return []
    return sorted(
        LogFile(int(match.group(2)), int(match.group(1)), path)
        for day in directory.iterdir()
        if DAY_DIR_RE.match(day.name) and day.is_dir()
        for path in day.iterdir()
        if (match := FILE_RE.match(path.name))
    )


def log_files(directory: Path) -> list[Path]:
    """The paths of :func:`log_entries`, in write order."""
    return [entry.path for entry in log_entries(directory)]


def _json_value(value: object) -> str:
    if value is None:
        return "null"
    if type(value) is int:
        return str(value)
    return _encode(value)


def _line_ts(lines: list[str], index: int, stamped: dict[int, int]) -> int:
    """The `ts` of a buffered line: read back from its head (see `_TS_PREFIX`)."""
    ts = stamped.get(index)
    if ts is None:
        line = lines[index]
        ts = int(line[len(_TS_PREFIX) : line.index(",", len(_TS_PREFIX))])
    return ts


@dataclass(eq=False)
class _LogFile:
    """One open log file: its path, day, first event time and bytes so far."""

    path: Path
    day: int
    first_ts: int
    size: int = 0
    handle: BinaryIO | None = field(default=None, repr=False)

    def write(self, data: bytes) -> None:
        if self.handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.handle = open(self.path, "ab", buffering=0)  # noqa: SIM115 - kept open
        self.handle.write(data)

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None


class EventWriter:
    """Buffers events in memory and writes them to rotating, date-partitioned files."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_file_age_ms: int = DEFAULT_MAX_FILE_AGE_MS,
    ) -> None:
        self.directory = Path(directory)
        self.max_file_bytes = max_file_bytes
        self.max_file_age_ms = max_file_age_ms
        # The buffered lines and the span of their timestamps: flush needs each line's
        # `ts` only when the batch spans two days or rotates a file, and then reads it
        # back from the line (`_TS_PREFIX`), so no timestamp is kept per event.
        self._lines: list[str] = []
        self._low = self._high = -1
        self._stamped: dict[int, int] = {}  # line index -> ts, for `append`'s lines
        self._files: dict[int, _LogFile] = {}
        self._queue_json: dict[str, str] = {}
        # Line tails of the hot events by (queue, conn, the event's own fields): put keys
        # have 6 items, reserve and delete keys 4 with their field's name, so they never
        # collide.
        self._tails: dict[tuple[object, ...], str] = {}
        # A connection's latest reserve and delete tails, found by its id alone and
        # checked by identity (its queue and worker or state are the same objects from
        # event to event): no key tuple to build and hash per event.
        self._reserve_tails: dict[int | None, _ConnEntry] = {}
        self._delete_tails: dict[int | None, _ConnEntry] = {}
        #: Peer address of each open connection (reserve events carry it, so a report can
        #: name a beanstalkd worker that gives no name of its own).
        self.peers: dict[int, str] = {}
        # The line heads of the hot events for the latest timestamp: events of one loop
        # turn share their `ts`, so its digits are formatted once per turn, not per event.
        # Reset by flush, so each batch's first head records its `ts` in the span.
        self._put_head = self._reserve_head = self._delete_head = _NO_HEAD
        self._seq, self._last_name_ts = self._scan_existing()
        self.dropped = 0  # events that could not be written (disk full, directory gone)

    def _scan_existing(self) -> tuple[int, int]:
        """Next sequence number and the highest name timestamp already on disk."""
        entries = log_entries(self.directory)
        if not entries:
            return 0, 0
        return entries[-1].seq + 1, max(entry.name_ts for entry in entries)

    # -- buffering (no I/O) -------------------------------------------------------------

    def append(self, event: dict[str, Any]) -> None:
        """Buffer one event (a dict with at least an integer ``ts``)."""
        ts = event["ts"]
        self._span(ts)
        self._stamped[len(self._lines)] = ts  # its ts may not lead the line
        self._lines.append(_encode(event) + "\n")

    def emit(
        self, ts: int, event: str, job: int | None, queue: str, conn: int | None, **extra: Any
    ) -> None:
        """Buffer one event given as fields; the line is built without ``json.dumps``."""
        event_json = _EVENT_JSON.get(event) or _encode(event)
        parts = [
            f'{_TS_PREFIX}{ts},"event":{event_json},'
            f'"job":{_json_value(job)},"queue":{self._queue(queue)},"conn":{_json_value(conn)}'
        ]
        for key, value in extra.items():
            parts.append(f",{_encode(key)}:{_json_value(value)}")
        parts.append("}\n")
        self._span(ts)
        self._lines.append("".join(parts))

    def _span(self, ts: int) -> None:
        """Widen the buffered lines' time span to `ts`."""
        if self._low < 0:
            self._low = self._high = ts
        elif ts < self._low:
            self._low = ts
        elif ts > self._high:
            self._high = ts

    def _head(self, ts: int, event: str) -> tuple[int, str]:
        """A hot event's line head for `ts` (a new timestamp since its last head)."""
        self._span(ts)
        return (ts, f'{_TS_PREFIX}{ts},"event":"{event}","job":')

    # Hot events, hand-built (about 3x cheaper than ``append`` with ``json.dumps``); the
    # None checks are inline because a helper call per field costs as much as the format.
    # `emit_reserve` and `emit_delete` have the same shape on purpose: one shared body
    # would add a Python call (~900 instructions, a quarter of the event) to every event.

    def emit_put(
        self,
        ts: int,
        job: int,
        queue: str,
        conn: int | None,
        pri: int,
        delay_ms: int,
        ttr_ms: int,
        nbytes: int,
        uuid: str | None = None,
    ) -> None:
        """Buffer a ``put`` event."""
        # A producer repeats its queue, conn, pri, delay, ttr and often size: the line's
        # tail is formatted once per combination (a put's line costs ~35% less).
        key = (queue, conn, pri, delay_ms, ttr_ms, nbytes)
        tail = self._tails.get(key) if uuid is None else None
        if tail is None:  # a uuid is per job: such a tail is not kept
            tail = self._new_tail(
                key if uuid is None else None,
                queue,
                conn,
                f'"pri":{pri},"delay_ms":{delay_ms},"ttr_ms":{ttr_ms},"bytes":{nbytes},'
                f'"uuid":{"null" if uuid is None else _encode(uuid)}',
            )
        head = self._put_head
        if head[0] is not ts and head[0] != ts:  # a turn's events share one `now` object
            head = self._put_head = self._head(ts, "put")
        self._lines.append(f"{head[1]}{job}{tail}")

    def emit_reserve(
        self, ts: int, job: int, queue: str, conn: int | None, worker: str | None = None
    ) -> None:
        """Buffer a ``reserve`` event."""
        entry = self._reserve_tails.get(conn)
        if entry is None or entry[0] is not queue or entry[1] is not worker:
            entry = self._conn_entry(self._reserve_tails, queue, conn, "worker", worker)
        head = self._reserve_head
        if head[0] is not ts and head[0] != ts:  # a turn's events share one `now` object
            head = self._reserve_head = self._head(ts, "reserve")
        self._lines.append(f"{head[1]}{job}{entry[2]}")

    def emit_delete(self, ts: int, job: int, queue: str, conn: int | None, state: str) -> None:
        """Buffer a ``delete`` event (``state``: the state it was deleted from)."""
        entry = self._delete_tails.get(conn)
        if entry is None or entry[0] is not queue or entry[1] is not state:
            entry = self._conn_entry(self._delete_tails, queue, conn, "state", state)
        head = self._delete_head
        if head[0] is not ts and head[0] != ts:  # a turn's events share one `now` object
            head = self._delete_head = self._head(ts, "delete")
        self._lines.append(f"{head[1]}{job}{entry[2]}")

    def _conn_entry(
        self,
        cache: dict[int | None, _ConnEntry],
        queue: str,
        conn: int | None,
        field: str,
        own: str | None,
    ) -> _ConnEntry:
        """A connection's (queue, own, tail) for a reserve (`field` "worker", with the
        connection's `peer`) or a delete ("state"), kept in `cache` (by connection) and in
        the tail cache."""
        key = (queue, conn, field, own)
        tail = self._tails.get(key)
        if tail is None:
            fields = f'"{field}":{_json_value(own)}'
            peer = None if conn is None or field != "worker" else self.peers.get(conn)
            if peer is not None:  # absent when unknown (the generator, old servers)
                fields += f',"peer":{_encode(peer)}'
            tail = self._new_tail(key, queue, conn, fields)
        if len(cache) >= _TAIL_CACHE_MAX:
            cache.clear()
        entry = cache[conn] = (queue, own, tail)
        return entry

    def connection_opened(self, conn: int, peer: str) -> None:
        """Remember a connection's peer address for its reserve events."""
        self.peers[conn] = peer

    def connection_closed(self, conn: int) -> None:
        self.peers.pop(conn, None)

    def _new_tail(
        self, key: tuple[object, ...] | None, queue: str, conn: int | None, fields: str
    ) -> str:
        """A hot event's line tail, from the comma after the job id: queue, conn, then its
        own `fields`; kept under `key` (unless None) in a cache cleared when full."""
        tail = f',"queue":{self._queue(queue)},"conn":{_json_value(conn)},{fields}}}\n'
        if key is not None:
            if len(self._tails) >= _TAIL_CACHE_MAX:
                self._tails.clear()
            self._tails[key] = tail
        return tail

    def _queue(self, queue: str) -> str:
        queue_json = self._queue_json.get(queue)
        if queue_json is None:
            queue_json = _encode(queue)
            if len(self._queue_json) < _QUEUE_CACHE_MAX:
                self._queue_json[queue] = queue_json
        return queue_json

    @property
    def pending(self) -> int:
        """Number of buffered events not yet written."""
        return len(self._lines)

    # -- writing ------------------------------------------------------------------------

    def flush(self) -> None:
        """Write every buffered line: one write per file touched. Lines that cannot be
        written (an OSError, raised after counting) are dropped and counted in `dropped`:
        the queue goes on, the log has a gap."""
        if not self._lines:
            return
        lines, low, high, stamped = self._lines, self._low, self._high, self._stamped
        self._lines, self._low, self._high, self._stamped = [], -1, -1, {}
        self._put_head = self._reserve_head = self._delete_head = _NO_HEAD
        unwritten = len(lines)
        try:
            if self._write_all_to_current(low, high, lines, stamped):
                return
            chunks: dict[_LogFile, list[str]] = {}
            for index, line in enumerate(lines):
                log_file = self._file_for(_line_ts(lines, index, stamped), len(line))
                chunks.setdefault(log_file, []).append(line)
            for log_file, chunk in chunks.items():
                log_file.write("".join(chunk).encode())
                unwritten -= len(chunk)
                if self._files.get(log_file.day) is not log_file:
                    log_file.close()
        except OSError:
            self.dropped += unwritten
            raise

    def _write_all_to_current(
        self, low: int, high: int, lines: list[str], stamped: dict[int, int]
    ) -> bool:
        """The usual flush: every line goes to the open file of one day, none rotates it.

        Same outcome as the per-line path: the day's file is opened by the first line
        as there, no line would cross the size limit (the file was not empty or the
        whole batch fits) and none is past the file's age limit.
        """
        day = low // MS_PER_DAY
        if high // MS_PER_DAY != day:
            return False
        current = self._files.get(day)
        if current is None:
            current = self._open_new(day, _line_ts(lines, 0, stamped))
        if high - current.first_ts >= self.max_file_age_ms:
            return False
        text = "".join(lines)
        if current.size > 0 and current.size + len(text) > self.max_file_bytes:
            return False
        if current.size == 0 and len(text) > self.max_file_bytes and len(lines) > 1:
            return False  # the per-line path would rotate after the first line
        current.size += len(text)
        current.write(text.encode())
        return True

    def _file_for(self, ts: int, size: int) -> _LogFile:
        day = ts // MS_PER_DAY
        current = self._files.get(day)
        if current is None or self._must_rotate(current, ts, size):
            current = self._open_new(day, ts)
        current.size += size
        return current

    def _must_rotate(self, log_file: _LogFile, ts: int, size: int) -> bool:
        if log_file.size > 0 and log_file.size + size > self.max_file_bytes:
            return True
        return ts - log_file.first_ts >= self.max_file_age_ms

    def _open_new(self, day: int, ts: int) -> _LogFile:
        name_ts = max(ts, self._last_name_ts)
        path = self.directory / day_folder(ts) / file_name(name_ts, self._seq)
        self._seq += 1
        self._last_name_ts = name_ts
        old = self._files.pop(day, None)
        if old is not None and old.handle is not None:
            old.close()
        log_file = self._files[day] = _LogFile(path=path, day=day, first_ts=ts)
        for stale in sorted(self._files)[:-2]:  # keep at most two days open
            self._files.pop(stale).close()
        return log_file

    def close(self) -> None:
        """Flush and close every file."""
        self.flush()
        for log_file in self._files.values():
            log_file.close()
        self._files.clear()

    def __enter__(self) -> EventWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
