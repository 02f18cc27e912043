from __future__ import annotations

from typing import ClassVar

import pytest

from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.durability.records import (
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
