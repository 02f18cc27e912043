"""events.reservations: which jobs the event log leaves reserved, read from its tail."""

from __future__ import annotations

from pathlib import Path

import pytest

from beanpod.events import reservations
from beanpod.events.reservations import open_reservations
from beanpod.events.writer import MS_PER_DAY, EventWriter, log_files

T0 = 1_800_000_000_000
WIDE = 10 * MS_PER_DAY


def write(directory: Path, events: list[tuple[int, str, int]], **limits: int) -> None:
    """(ts, event, job) triples through the server's writer, one flush each."""
    with EventWriter(directory, **limits) as writer:
        for ts, event, job in events:
            writer.emit(ts, event, job, "q", 1)
            writer.flush()


def test_the_latest_event_of_each_job_decides(tmp_path: Path) -> None:
    write(tmp_path, [
        (T0, "put", 1), (T0, "put", 2), (T0, "put", 3), (T0, "put", 4), (T0, "put", 5),
        (T0 + 1, "reserve", 1), (T0 + 2, "reserve", 2), (T0 + 3, "release", 2),
        (T0 + 4, "reserve", 3), (T0 + 5, "touch", 3), (T0 + 6, "reserve", 4),
        (T0 + 7, "delete", 4), (T0 + 8, "reserve", 5), (T0 + 9, "timeout", 5),
    ])  # fmt: skip
    assert open_reservations(tmp_path, {1, 2, 3, 4, 5}, WIDE) == [3, 1]
    assert open_reservations(tmp_path, {2, 3}, WIDE) == [3]  # only the jobs asked about


def test_write_order_spans_files_and_days(tmp_path: Path) -> None:
    """Rotation by size and a new day: the sequence numbers give the order, even when a
    later file sorts first by folder name (the clock stepped back across midnight)."""
    write(tmp_path, [(T0, "put", 1), (T0 + 1, "reserve", 1)], max_file_bytes=1)
    write(tmp_path, [(T0 - MS_PER_DAY, "release", 1), (T0 - MS_PER_DAY, "reserve", 2)])
    assert len(log_files(tmp_path)) == 3
    assert open_reservations(tmp_path, {1, 2}, WIDE) == [2]


def test_a_torn_or_foreign_line_is_judged_as_readers_do(tmp_path: Path) -> None:
    write(tmp_path, [(T0, "put", 1), (T0 + 1, "reserve", 1), (T0 + 1, "put", 2)])
    path = log_files(tmp_path)[0]
    with path.open("ab") as f:  # another writer's field order, then a torn line
        f.write(b'{"job":2,"event":"reserve","queue":"q","ts":%d,"conn":null}\n' % (T0 + 2))
        f.write(b'{"v":1,"ts":%d,"event":"release","job":1,"queue":"q","co' % (T0 + 3))
    assert open_reservations(tmp_path, {1, 2}, WIDE) == [2, 1]


def test_lines_older_than_the_window_are_not_read(tmp_path: Path) -> None:
    write(tmp_path, [(T0, "reserve", 1), (T0 + 5000, "reserve", 2), (T0 + 9000, "put", 3)])
    assert open_reservations(tmp_path, {1, 2, 3}, 4000) == [2]
    assert open_reservations(tmp_path, {1, 2, 3}, 9000) == [2, 1]


def test_blocks_split_lines_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = [(T0 + n, "put" if n % 3 else "reserve", n) for n in range(200)]
    write(tmp_path, events)
    expected = [n for n in reversed(range(200)) if n % 3 == 0]
    for block in (7, 64, 100, 1 << 20):
        monkeypatch.setattr(reservations, "BLOCK", block)
        assert open_reservations(tmp_path, set(range(200)), WIDE) == expected


def test_no_log_means_no_reservations(tmp_path: Path) -> None:
    assert open_reservations(tmp_path / "missing", {1}, WIDE) == []
    assert open_reservations(tmp_path, {1}, WIDE) == []
