from __future__ import annotations

import struct
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beanpod.core.engine import Engine
from beanpod.core.job import Job, MoveCheck
from beanpod.durability import records
from beanpod.durability.records import (
    PUT,
    DeleteRecord,
    NextIdRecord,
    PauseRecord,
    PutRecord,
    RecordError,
    StateRecord,
    UpdateRecord,
    decode,
    encode_delete,
    encode_next_id,
    encode_pause,
    encode_put,
    encode_put_head,
    encode_state,
    encode_update,
)

T0 = 1_800_000_000_000


class Extra:
    KIND: ClassVar[int] = 901

    def __init__(self, data: bytes) -> None:
        self.data = data

    def encode(self) -> bytes:
        return self.data


def test_put_and_update_round_trip_with_extension() -> None:
    engine = Engine(MoveCheck())
    job = engine.put(None, engine.tube("t\u00e9".encode().decode("ascii", "replace")[:1]),
                     -5, 2000, 3000, b"\x00body\r\n", T0, ext=Extra(b"ext!"))  # fmt: skip
    put = decode(encode_put(job))
    assert isinstance(put, PutRecord)
    assert (put.id, put.tube, put.pri, put.delay, put.ttr, put.created, put.deadline,
            put.state, put.ext_kind, put.ext, put.body) == (
        job.id, "t", -5, 2000, 3000, T0, T0 + 2000, 1, 901, b"ext!", b"\x00body\r\n")  # fmt: skip
    job.kicks = 3
    upd = decode(encode_update(job))
    assert isinstance(upd, UpdateRecord)
    assert upd.counters == (0, 0, 0, 0, 3) and upd.ext == b"ext!"


def test_small_records() -> None:
    engine = Engine(MoveCheck())
    tube = engine.tube("p")
    tube.pause_ms, tube.pause_until = 5, 6
    assert decode(encode_pause(tube)) == PauseRecord("p", 5, 6)
    assert decode(encode_delete(7)) == DeleteRecord(7)
    assert decode(encode_next_id(9)) == NextIdRecord(9)
    assert decode(encode_state("qless.config/h\u00e9", b"60")) == StateRecord(
        "qless.config/h\u00e9", b"60"
    )
    assert decode(encode_state("k", b"")) == StateRecord("k", b"")


@pytest.mark.parametrize(
    "payload",
    [b"", b"\x63", b"\x01short", encode_delete(1)[:-1], encode_state("key", b"v")[:-1]],
)
def test_garbage_is_a_record_error(payload: bytes) -> None:
    with pytest.raises(RecordError):
        decode(payload)


# A put's head as one pack of all its fields: the layout before the encoder split it
# (docs/wal.md); WAL files written by earlier builds hold exactly these bytes.
FULL_PUT = struct.Struct("<BQqqqqqB5IHHI")


def full_head(job: Job) -> bytes:
    name = job.tube.name_bytes
    return FULL_PUT.pack(
        PUT, job.id, job.pri, job.delay, job.ttr, job.created, job.deadline, job.state,
        0, 0, 0, 0, 0, 0, len(name), 0,
    ) + name  # fmt: skip


names = st.text("abcdefghijklmnopqrstuvwxyz0123456789-+/;.$_()", min_size=1, max_size=200)


@settings(max_examples=200, deadline=None)
@given(
    name=names,
    pri=st.integers(0, 2**32 - 1),
    delay=st.integers(0, 2**32 - 1),
    ttr=st.integers(1, 2**32 - 1),
    now=st.integers(0, 2**50),
    body=st.binary(max_size=300),
    kicks=st.integers(0, 3),
)
def test_a_put_head_is_the_full_pack_of_its_fields(
    name: str, pri: int, delay: int, ttr: int, now: int, body: bytes, kicks: int
) -> None:
    engine = Engine(MoveCheck())
    job = engine.put(None, engine.tube(name), pri, delay * 1000, ttr * 1000, body, now)
    job.kicks = kicks  # counters take the encoder's other path
    head = encode_put_head(job)
    if not kicks:
        assert head == full_head(job)
    put = decode(head + body)
    assert isinstance(put, PutRecord)
    assert (put.id, put.tube, put.pri, put.delay, put.ttr, put.created, put.deadline,
            put.state, put.counters, put.ext_kind, put.ext, put.body) == (
        job.id, name, pri, delay * 1000, ttr * 1000, now, job.deadline, job.state,
        (0, 0, 0, 0, kicks), 0, b"", body)  # fmt: skip


def test_the_tails_kept_per_tube_are_bounded_and_start_over() -> None:
    engine = Engine(MoveCheck())
    for i in range(records.MAX_TAILS * 2 + 5):
        job = engine.put(None, engine.tube(f"t{i}"), 1, 0, 1000, b"x", T0)
        assert encode_put_head(job) == full_head(job)
        assert len(records._tails) <= records.MAX_TAILS
