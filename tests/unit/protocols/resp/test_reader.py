"""The RESP request reader: whole, byte by byte, with trailing bytes, and malformed."""

from __future__ import annotations

import pytest

from beanpod.protocols.resp.reader import Rejected, RequestReader


def cmd(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


def drain(reader: RequestReader) -> list[object]:
    found: list[object] = []
    while (item := reader.next_command()) is not None:
        found.append(item)
        if isinstance(item, Rejected):
            break
    return found


WIRE = cmd(b"EVALSHA", b"abc", b"0", b"put", b"1.5", b"") + cmd(b"PING") + cmd(b"x" * 300)
EXPECTED = [[b"EVALSHA", b"abc", b"0", b"put", b"1.5", b""], [b"PING"], [b"x" * 300]]


def test_whole() -> None:
    reader = RequestReader()
    reader.feed(WIRE)
    assert drain(reader) == EXPECTED
    assert not reader.buffered


def test_byte_by_byte() -> None:
    reader = RequestReader()
    found: list[object] = []
    for i in range(len(WIRE)):
        reader.feed(WIRE[i : i + 1])
        found += drain(reader)
    assert found == EXPECTED


def test_trailing_bytes_wait_for_the_rest() -> None:
    reader = RequestReader()
    reader.feed(WIRE + b"*2\r\n$4\r\nECHO\r\n$2\r\nh")
    assert drain(reader) == EXPECTED
    assert reader.buffered
    reader.feed(b"i\r\n")
    assert drain(reader) == [[b"ECHO", b"hi"]]


def test_empty_and_null_arrays_are_skipped() -> None:
    reader = RequestReader()
    reader.feed(b"*0\r\n*-1\r\n" + cmd(b"PING"))
    assert drain(reader) == [[b"PING"]]


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        (b"*a\r\n", "ERR Protocol error: invalid multibulk length"),
        (b"*1\r\n:5\r\n", "ERR Protocol error: expected '$', got ':'"),
        (b"*1\r\n*1\r\n$1\r\na\r\n", "ERR Protocol error: expected '$', got '*'"),
        (b"*1\r\n$99999999999\r\n", "ERR Protocol error: invalid bulk length"),
        (b"*99999999999\r\n", "ERR Protocol error: invalid multibulk length"),
        (b"*4000000000\r\n", "ERR Protocol error: invalid multibulk length"),
        (b":5\r\n", "ERR Protocol error: expected '*', got ':'"),
        (b"PING\r\n", "ERR Protocol error: invalid multibulk length"),
    ],
)
def test_malformed_is_rejected(wire: bytes, message: str) -> None:
    reader = RequestReader()
    reader.feed(wire)
    assert drain(reader) == [Rejected(message)]
    reader.feed(cmd(b"PING"))  # nothing after a rejection is read: the connection closes
    assert reader.next_command() == Rejected(message)


def test_an_oversized_header_cut_in_two_is_seen() -> None:
    reader = RequestReader()
    reader.feed(cmd(b"PING") + b"*1\r\n$9999")
    assert drain(reader) == [[b"PING"]]
    reader.feed(b"99999999\r\n")
    assert drain(reader) == [Rejected("ERR Protocol error: invalid bulk length")]


def test_limits_are_settings() -> None:
    reader = RequestReader(max_bulk=4, max_elements=2)
    reader.feed(cmd(b"ab", b"abcd"))
    assert drain(reader) == [[b"ab", b"abcd"]]
    reader.feed(cmd(b"a", b"b", b"c"))
    assert drain(reader) == [Rejected("ERR Protocol error: invalid multibulk length")]


def test_a_nested_array_is_refused_before_it_is_whole() -> None:
    reader = RequestReader()
    reader.feed(cmd(b"PING") + b"*2\r\n$1\r\na\r\n*2\r\n$1\r\nb\r\n*2")
    assert drain(reader) == [[b"PING"], Rejected("ERR Protocol error: expected '$', got '*'")]


def test_a_request_past_the_byte_limit_is_refused() -> None:
    reader = RequestReader(max_bulk=10, max_request=25)
    reader.feed(cmd(b"x" * 10))  # 21 bytes: fine
    assert drain(reader) == [[b"x" * 10]]
    reader.feed(b"*3\r\n$10\r\n" + b"x" * 10 + b"\r\n$10\r\n" + b"x" * 10)
    assert drain(reader) == [Rejected("ERR Protocol error: invalid bulk length")]


def test_a_header_cut_across_reads_is_counted_once() -> None:
    reader = RequestReader()
    wire = cmd(b"a", b"b") * 50
    for i in range(0, len(wire), 7):
        reader.feed(wire[i : i + 7])
        assert all(not isinstance(r, Rejected) for r in drain(reader))


def test_started_marks_the_request_being_received() -> None:
    reader = RequestReader()
    assert reader.started() is None
    reader.feed(cmd(b"PING") + b"*1\r\n$4\r\nPI")
    assert drain(reader) == [[b"PING"]]
    token = reader.started()
    assert token is not None
    reader.feed(b"N")
    assert reader.started() == token  # the same until it is whole
    reader.feed(b"G\r\n")
    assert drain(reader) == [[b"PING"]]
    assert reader.started() is None
    reader.feed(b"*1\r\n")
    assert reader.started() not in (None, token)  # the next one
