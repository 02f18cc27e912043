"""Reading a log directory back: every record in order, with torn tails told apart from
corruption.

A bad record is a *torn tail* when it sits in the last segment that holds records and no
valid record follows it: a crash cut the final write short, and nothing after it was ever
acknowledged as durable. It is truncated with a warning. Any other damage (a bad record
with valid records after it, a bad header before the last segment) stops start-up with a
`CorruptLog` naming the file and offset; `beanpod wal verify --salvage DIR` then keeps
every readable record and moves the damaged file aside (docs/wal.md).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from beanpod.storage import snapshot
from beanpod.storage.framing import (
    FRAME_SIZE,
    HEADER_SIZE,
    WRONG_MAGIC,
    FormatError,
    VersionError,
    crc32,
    decode_header,
    encode_header,
    frame,
    next_nonzero,
    next_valid_frame,
    read_frame,
    unpack_frame_header,
)
from beanpod.storage.segments import list_segments

log = logging.getLogger("beanpod.wal")

SALVAGE_HINT = "run `beanpod wal verify --salvage DIR` to keep every readable record"


class CorruptLog(Exception):
    def __init__(self, path: Path, offset: int, reason: str) -> None:
        super().__init__(f"corrupt WAL segment {path} at offset {offset}: {reason}; {SALVAGE_HINT}")
        self.path = path
        self.offset = offset
        self.reason = reason


@dataclass
class Damage:
    offset: int
    reason: str
    resume: int | None  # where the next valid record starts; None: nothing valid follows


@dataclass
class SegmentReport:
    index: int
    path: Path
    size: int
    version: int = 0
    records: int = 0
    end: int = HEADER_SIZE  # offset after the last valid record
    header_error: str | None = None
    version_error: bool = False
    damage: list[Damage] = field(default_factory=list)
    torn: bool = False  # the damage is a torn tail (safe to truncate at `end`)
    unused: bool = False  # all zeros: a preallocated segment that never got a record


def read_segment(index: int, path: Path) -> tuple[SegmentReport, list[tuple[int, bytes]]]:
    """Every valid record of one file, skipping damaged regions, with what was wrong."""
    report, records = scan_segment(index, path)
    return report, list(records)


def scan_segment(index: int, path: Path) -> tuple[SegmentReport, Iterator[tuple[int, bytes]]]:
    """The file's report and an iterator of its valid records, (offset, payload); the
    report's record count, end and damage are complete once the iterator is exhausted.
    Replay feeds each record on as it is read, so only one payload is alive at a time."""
    data = path.read_bytes()
    report = SegmentReport(index, path, len(data))
    if next_nonzero(data, 0) is None:
        report.unused = True  # preallocated, header not written yet: no records
        return report, iter(())
    try:
        header = decode_header(data)
    except FormatError as exc:
        report.header_error = exc.reason
        report.version_error = isinstance(exc, VersionError)
        report.damage.append(Damage(0, exc.reason, next_valid_frame(data, HEADER_SIZE - 1)))
        return report, iter(())
    report.version = header.version
    if header.index != index:
        report.header_error = f"header says segment {header.index}, file name says {index}"
        return report, iter(())
    return report, _scan(data, report)


def _scan(data: bytes, report: SegmentReport) -> Iterator[tuple[int, bytes]]:
    # The common case first, inline: well-formed records up to the end marker.
    unpack, end = unpack_frame_header, len(data)
    offset, count = HEADER_SIZE, 0
    while offset + FRAME_SIZE <= end:
        length, crc = unpack(data, offset)
        start = offset + FRAME_SIZE
        stop = start + length
        if not length or stop > end:
            break
        payload = data[start:stop]
        if crc32(payload) != crc:
            break
        yield offset, payload
        count += 1
        offset = stop
    if count:
        report.end = offset
    # From the end marker, or the first bad record, which `read_frame` describes.
    while True:
        try:
            got = read_frame(data, offset)
        except FormatError as exc:
            resume = next_valid_frame(data, offset)
            report.damage.append(Damage(offset, exc.reason, resume))
            if resume is None:
                break
            offset = resume
            continue
        if got is None:
            break
        payload, after = got
        yield offset, payload
        count += 1
        report.end = offset = after
    report.records = count


def _holds_records(path: Path) -> bool:
    with path.open("rb") as f:
        head = f.read(HEADER_SIZE + FRAME_SIZE)
    try:
        decode_header(head)
    except FormatError:
        return any(head)
    return len(head) == HEADER_SIZE + FRAME_SIZE and any(head[HEADER_SIZE:])


class LogReader:
    """Reads a directory's segments oldest first; `reports` describes each one read."""

    def __init__(self, directory: Path, after: int = 0, upto: int | None = None) -> None:
        """`after`: read only segments with a higher index (a snapshot covers the rest);
        `upto`: and none with a higher one than this (a checkpoint's build)."""
        self.directory = directory
        self.segments = [
            (i, p) for i, p in list_segments(directory) if i > after and (upto is None or i <= upto)
        ]
        self.reports: list[SegmentReport] = []
        self.bytes_total = sum(p.stat().st_size for _, p in self.segments)
        self.bytes_read = 0
        # Only damage at or after the last segment holding records can be a torn tail.
        holding = [i for i, p in self.segments if _holds_records(p)]
        self.last_with_records = holding[-1] if holding else -1

    def segment_records(
        self, strict: bool = True
    ) -> Iterator[tuple[int, Iterator[tuple[int, bytes]]]]:
        """`records`, one segment at a time: (segment index, its (offset, payload)
        iterator), which the caller exhausts before asking for the next segment."""
        for index, path in self.segments:
            report, records = scan_segment(index, path)
            self.reports.append(report)
            self.bytes_read += report.size
            yield index, records
            self._classify(report)
            if strict:
                self._check(report)

    def records(self, strict: bool = True) -> Iterator[tuple[int, int, bytes]]:
        """(segment index, offset, payload) of every valid record, in log order.

        strict: raise CorruptLog at damage that is not a torn tail (start-up), once the
        segment's readable records are out (a caller that gets CorruptLog throws away
        what it built). Otherwise skip damaged regions and keep going (verify, dump,
        salvage)."""
        for index, records in self.segment_records(strict):
            for offset, payload in records:
                yield index, offset, payload

    def _classify(self, report: SegmentReport) -> None:
        is_tail = report.index >= self.last_with_records
        if report.unused and not is_tail:  # records after it: its header was lost
            report.unused = False
            report.header_error = WRONG_MAGIC
            report.damage.append(Damage(0, WRONG_MAGIC, None))
        if report.damage and not report.version_error:
            report.torn = is_tail and len(report.damage) == 1 and report.damage[0].resume is None

    def _check(self, report: SegmentReport) -> None:
        if report.torn:
            first = report.damage[0]
            log.warning("WAL segment %s: torn tail at offset %d truncated (%s)", report.path,
                        first.offset, first.reason)  # fmt: skip
            return
        if report.damage:
            first = report.damage[0]
            raise CorruptLog(report.path, first.offset, first.reason)

    @property
    def damaged(self) -> list[SegmentReport]:
        return [r for r in self.reports if r.damage and not r.torn]


def salvage(directory: Path) -> list[str]:
    """Keep every readable record: copy each damaged segment to NAME.corrupt, then rewrite
    it with only its valid records (a file with a bad header is moved aside whole).

    Dropping records can bring back a job whose delete record was lost, or lose a later
    state change; the actions taken are returned so the operator can review them."""

    reader = LogReader(directory)
    snapshot.remove(directory)  # it may not match the rewritten segments: replay them all
    kept: dict[int, list[bytes]] = {}
    for index, _, payload in reader.records(strict=False):
        kept.setdefault(index, []).append(payload)
    actions = []
    for report in reader.damaged:
        aside = report.path.with_name(report.path.name + ".corrupt")
        if report.header_error is not None:
            shutil.move(report.path, aside)
            actions.append(f"moved {report.path} to {aside} ({report.header_error})")
            continue
        shutil.copyfile(report.path, aside)
        body = b"".join(frame(p) for p in kept.get(report.index, []))
        tmp = report.path.with_name(report.path.name + ".tmp")
        tmp.write_bytes(encode_header(report.index, report.version) + body)
        tmp.replace(report.path)
        lost = sum((d.resume or report.size) - d.offset for d in report.damage)
        actions.append(
            f"rewrote {report.path} keeping {len(kept.get(report.index, []))} records, "
            f"dropping {lost} damaged bytes (original saved as {aside})"
        )
    return actions
