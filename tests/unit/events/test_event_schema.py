"""The reader rule of the contract, as implemented by beanpod.events.schema."""

from __future__ import annotations

import pytest

from beanpod.events import schema

GOOD = '{"v":1,"ts":5,"event":"put","job":1,"queue":"q","conn":null}'


@pytest.mark.parametrize(
    "line",
    [
        "",
        "not json",
        "[1,2]",
        '"put"',
        '{"v":1,"ts":"5","event":"put","job":1,"queue":"q","conn":1}',  # ts as string
        '{"v":1,"ts":5.0,"event":"put","job":1,"queue":"q","conn":1}',  # ts as float
        '{"v":1,"ts":true,"event":"put","job":1,"queue":"q","conn":1}',  # ts as bool
        '{"v":1,"event":"put","job":1,"queue":"q","conn":1}',  # no ts
        '{"v":1,"ts":5,"event":"put","job":"1","queue":"q","conn":1}',  # job as string
        '{"v":1,"ts":5,"event":"put","job":1,"queue":5,"conn":1}',  # queue as number
        '{"v":1,"ts":5,"event":"put","job":1,"conn":1}',  # no queue
        '{"v":1,"ts":5,"event":"put","job":1,"queue":"q","conn":1.5}',  # conn as float
        '{"v":1,"ts":5,"event":"frobnicate","job":1,"queue":"q","conn":1}',  # unknown event
        '{"v":0,"ts":5,"event":"put","job":1,"queue":"q","conn":1}',  # version below 1
        '{"v":1,"ts":99999999999999999999,"event":"put","job":1,"queue":"q","conn":1}',
        '{"v":1,"ts":5,"event":"put","job":1,"queue":"q","conn":1,"pri":NaN}',
        '{"v":1,"ts":5,"event":"put","job":1,"queue":"q","conn":1,"pri":"high"}',
        '{"v":1,"ts":5,"event":"put","job":1,"queue":"q","conn":1',  # torn
    ],
)
def test_lines_readers_skip(line: str) -> None:
    assert schema.read_line(line) is None


def test_valid_line_is_normalised_to_every_field() -> None:
    event = schema.read_line(GOOD)
    assert event is not None
    assert list(event) == list(schema.FIELD_ORDER)
    assert (event["ts"], event["event"], event["job"], event["conn"], event["pri"]) == (
        5, "put", 1, None, None,
    )  # fmt: skip


@pytest.mark.parametrize(
    "line",
    [
        '{"ts":5,"event":"touch","queue":"q"}',  # v, job and conn absent: null
        '{"v":2,"ts":5,"event":"touch","job":1,"queue":"q","conn":1,"new_field":[1]}',
        '{"v":1,"ts":5,"event":"touch","job":1,"queue":"q","conn":1}\r',
    ],
)
def test_lines_readers_accept(line: str) -> None:
    assert schema.read_line(line) is not None


def test_every_event_has_its_extra_fields_typed() -> None:
    assert set(schema.EXTRA_FIELDS) == set(schema.EVENT_NAMES)
    for fields in schema.EXTRA_FIELDS.values():
        assert all(schema.field_type(f) in (schema.INT, schema.STR) for f in fields)
