"""The local WAL frames its hot records inline (durability/journal.py): the bytes on disk
must be the records storage.framing builds, which every earlier build wrote and reads."""

from __future__ import annotations

import asyncio
from pathlib import Path

from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.durability.journal import SMALL_BODY
from beanpod.durability.records import encode_delete, encode_put_head
from beanpod.durability.wal import Durability, WalSettings
from beanpod.storage.framing import frame, frame_pair


async def log_puts_and_a_delete(wal_dir: Path, bodies: list[bytes]) -> tuple[bytes, list[bytes]]:
    """The segment's bytes after these puts and a delete of the first job, and the
    records storage.framing makes of them."""
    engine = Engine(MoveCheck())
    wal = Durability(engine, WalSettings(wal_dir, fsync_ms=0))
    wal.open(1000)
    tube = engine.tube("framing")
    jobs = [engine.put(None, tube, 7, 0, 60_000, body, 1000) for body in bodies]
    expected = [frame_pair(encode_put_head(job), job.body) for job in jobs]
    assert engine.delete(None, jobs[0].id, 1000)
    expected.append(frame(encode_delete(jobs[0].id)))
    await wal.aclose()
    data = b"".join(path.read_bytes() for path in sorted(wal_dir.glob("*.wal")))
    return data, expected


def test_put_and_delete_records_are_the_framed_records(tmp_path: Path) -> None:
    bodies = [b"", b"x", b"\r\n" * (SMALL_BODY // 2), b"y" * (SMALL_BODY + 1), b"z" * 70_000]
    data, expected = asyncio.run(log_puts_and_a_delete(tmp_path / "wal", bodies))
    at = 0
    for record in expected:  # each one, in order
        found = data.find(record, at)
        assert found >= at, record[:40]
        at = found + len(record)
