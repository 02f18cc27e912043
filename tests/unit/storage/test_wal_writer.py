"""The writer on its own, with the fault-injecting FileIO (no event loop, no sleeps)."""

from __future__ import annotations

import errno
from pathlib import Path

from beanpod.storage.framing import frame
from beanpod.storage.recovery import LogReader
from beanpod.storage.segments import list_segments
from beanpod.storage.wal import WalWriter
from tests.support.faultio import FaultIO


def writer(tmp_path: Path, io: FaultIO, size: int = 4096) -> WalWriter:
    w = WalWriter(tmp_path, size, 1, [], io)
    w.on_new_segment = lambda: frame(b"\x05mark")
    return w


def payloads(tmp_path: Path) -> list[bytes]:
    return [p for _, _, p in LogReader(tmp_path).records()]


def test_records_rotate_into_new_segments_in_order(tmp_path: Path) -> None:
    w = writer(tmp_path, FaultIO())
    placed = [w.append(frame(b"\x01" + bytes([i]) * 300)) for i in range(30)]
    assert w.flush()
    assert placed == sorted(placed) and placed[-1] > 1
    got = [p for p in payloads(tmp_path) if p != b"\x05mark"]
    assert got == [b"\x01" + bytes([i]) * 300 for i in range(30)]
    assert all(p.stat().st_size == 4096 for _, p in list_segments(tmp_path))  # preallocated


def test_a_record_bigger_than_a_segment_gets_its_own(tmp_path: Path) -> None:
    w = writer(tmp_path, FaultIO())
    w.append(frame(b"\x01" + b"x" * 10_000))
    assert w.flush()
    assert payloads(tmp_path)[1] == b"\x01" + b"x" * 10_000


def test_room_preallocates_and_refuses_when_the_disk_is_full(tmp_path: Path) -> None:
    io = FaultIO()
    w = writer(tmp_path, io)
    assert w.room(1000) and len(w.spares) == 1
    io.full = True
    w.reserved = 3000
    assert not w.room(1000)
    io.full = False
    assert w.room(1000)


def test_failed_write_keeps_everything_pending_until_it_works(tmp_path: Path) -> None:
    io = FaultIO()
    w = writer(tmp_path, io)
    w.append(frame(b"\x01one"))
    io.write_error = OSError(errno.ENOSPC, "full")
    assert not w.flush() and w.failed is not None
    assert not w.room(10)  # mutations are refused meanwhile
    w.append(frame(b"\x03two"))  # records placed while failing still queue up
    io.write_error = None
    assert w.flush() and w.failed is None
    assert payloads(tmp_path) == [b"\x05mark", b"\x01one", b"\x03two"]


def test_short_writes_are_continued(tmp_path: Path) -> None:
    io = FaultIO()
    io.short = 3
    w = writer(tmp_path, io)
    w.append(frame(b"\x01" + b"y" * 100))
    assert w.flush()
    assert payloads(tmp_path)[1] == b"\x01" + b"y" * 100


def test_fsync_failure_rewrites_the_unsynced_bytes(tmp_path: Path) -> None:
    io = FaultIO()
    w = writer(tmp_path, io)
    w.append(frame(b"\x01one"))
    assert w.flush()
    job = w.take_sync()
    io.fsync_errors = 1
    try:
        job.run()
    except OSError as exc:
        w.sync_failed(job, exc)
    assert w.failed is not None and w.pending  # the bytes will be written again
    assert w.flush()
    w.take_sync().run()
    io.power_cut()
    assert payloads(tmp_path) == [b"\x05mark", b"\x01one"]


def test_power_cut_loses_only_unsynced_bytes(tmp_path: Path) -> None:
    io = FaultIO()
    w = writer(tmp_path, io)
    w.append(frame(b"\x01kept"))
    assert w.flush()
    w.take_sync().run()
    w.append(frame(b"\x01lost"))
    assert w.flush()
    io.power_cut()
    assert payloads(tmp_path) == [b"\x05mark", b"\x01kept"]


def test_dropped_segments_are_unlinked_after_the_fsync(tmp_path: Path) -> None:
    w = writer(tmp_path, FaultIO())
    for i in range(30):
        w.append(frame(b"\x01" + bytes([i]) * 300))
    assert w.flush()
    oldest = w.oldest()
    assert oldest is not None
    w.drop_oldest()
    assert oldest.path.exists()
    w.take_sync().run()
    assert not oldest.path.exists()


def test_a_segment_dropped_before_a_flush_made_it_is_not_unlinked(tmp_path: Path) -> None:
    """Placed, sealed and dropped between two flushes: no file was ever made, so the
    fsync thread has nothing to unlink (an unlink would fail and mark the writer failed)."""
    io = FaultIO()
    w = writer(tmp_path, io)
    w.append(frame(b"\x01first"))
    w.seal()
    w.append(frame(b"\x01second"))
    never_made = w.oldest()
    assert never_made is not None and not never_made.path.exists()
    w.drop_oldest()
    w.take_sync().run()  # raised FileNotFoundError when the drop was queued
    assert w.flush() and [p.name for _, p in list_segments(tmp_path)] == ["0000000002.wal"]
