"""Replay's in-place decoding agrees with the record codec: every kind of record comes
back the same, and a record that does not decode stops start-up naming its offset."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from beanpod.core.engine import Engine
from beanpod.core.job import READY, Job, MoveCheck, move
from beanpod.durability.records import encode_delete, encode_next_id, encode_put
from beanpod.durability.wal import Durability, WalSettings
from beanpod.storage.framing import HEADER_SIZE, encode_header, frame
from beanpod.storage.recovery import CorruptLog


def segment(directory: Path, index: int, payloads: list[bytes]) -> list[int]:
    """Write one segment; return each record's offset."""
    offsets, data = [], bytearray(encode_header(index))
    for payload in payloads:
        offsets.append(len(data))
        data += frame(payload)
    directory.mkdir(exist_ok=True)
    (directory / f"{index:010d}.wal").write_bytes(bytes(data))
    return offsets


def job(engine: Engine, job_id: int, tube: str, pri: int, body: bytes) -> Job:
    made = Job(job_id, engine.tube(tube), pri, 0, 5000, body, 1_700_000_000_000)
    move(made, READY, engine.check)  # as a put makes it
    return made


async def restart(directory: Path) -> Engine:
    engine = Engine(MoveCheck())
    wal = Durability(engine, WalSettings(directory))
    wal.open(1_700_000_000_000)
    await wal.aclose()
    return engine


def test_puts_deletes_and_migrated_copies_fold_as_the_codec_says(tmp_path: Path) -> None:
    scratch = Engine(MoveCheck())
    a, b, c = (
        job(scratch, 1, "t", 5, b"a"),
        job(scratch, 2, "u", 6, b"b"),
        job(scratch, 3, "t", 7, b"c"),
    )
    moved = job(scratch, 1, "t", 9, b"a2")  # a later full copy wins (the engine indexes jobs by id)
    segment(tmp_path, 1, [encode_next_id(1), encode_put(a), encode_put(b), encode_put(c),
                          encode_delete(2), encode_put(moved)])  # fmt: skip
    engine = asyncio.run(restart(tmp_path))
    assert [(j.id, j.tube.name, j.pri, j.body) for j in engine.jobs.values()] == [
        (1, "t", 9, b"a2"), (3, "t", 7, b"c")]  # fmt: skip
    assert "u" not in engine.tubes and engine.next_id == 4


@pytest.mark.parametrize("bad", [b"\x63", b"\x01short", b"\x03" + bytes(3)])
def test_an_undecodable_record_names_its_file_and_offset(tmp_path: Path, bad: bytes) -> None:
    scratch = Engine(MoveCheck())
    offsets = segment(tmp_path, 1, [encode_put(job(scratch, 1, "t", 1, b"x")), bad,
                                    encode_put(job(scratch, 2, "t", 1, b"y"))])  # fmt: skip
    with pytest.raises(CorruptLog) as caught:
        asyncio.run(restart(tmp_path))
    assert caught.value.offset == offsets[1] > HEADER_SIZE
    assert caught.value.path.name == "0000000001.wal"
