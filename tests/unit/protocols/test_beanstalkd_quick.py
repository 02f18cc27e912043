"""The depth-1 fast path (quick.one_command) against the parser's exact rules: what it
accepts parses to the same command; what it declines is left to the parser."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from beanpod.protocols.beanstalkd import commands as c
from beanpod.protocols.beanstalkd import quick
from beanpod.protocols.beanstalkd import wire as w

MAX = w.DEFAULT_MAX_JOB_SIZE


def exact(data: bytes) -> list[tuple[Any, ...]]:
    """Every command the parser makes of `data` fed at once (the batch and exact paths)."""
    parser = c.Parser(MAX)
    parser.feed(data)
    out = []
    while (cmd := parser.next_command()) is not None:
        out.append(cmd)
    return out


ACCEPTED = [
    (b"put 1024 0 60 5\r\nhello\r\n", (w.PUT, 1024, 0, 60, b"hello")),
    (b"put 0 0 0 0\r\n\r\n", (w.PUT, 0, 0, 0, b"")),
    (b"put 007 1 2 4\r\na\r\nb\r\n", (w.PUT, 7, 1, 2, b"a\r\nb")),
    (b"put 999999999 9 9 3\r\n\x00\r\x00\r\n", (w.PUT, 999999999, 9, 9, b"\x00\r\x00")),
    (b"delete 42\r\n", (w.DELETE, 42)),
    (b"delete 999999999999999999\r\n", (w.DELETE, 999999999999999999)),
    (b"reserve-with-timeout 0\r\n", (w.RESERVE_WITH_TIMEOUT, 0)),
    (b"reserve\r\n", (w.RESERVE,)),
]

DECLINED = [
    b"put 1 0 1 5\r\nhello",  # body's CRLF not here yet
    b"put 1 0 1 5\r\nhello\r\nreserve\r\n",  # two commands
    b"put 1 0 1 5\r\nhelloXY",  # no CRLF after the body
    b"put 1 0 1 6\r\nhello\r\n",  # body short
    b"put 1 0 1 4\r\nhello\r\n",  # body long
    b"put  1 0 1 5\r\nhello\r\n",  # two spaces: the exact path's to judge
    b"put 1 0 1 5 \r\nhello\r\n",  # trailing space
    b"put +1 0 1 5\r\nhello\r\n",
    b"put 1 0 1\r\n",
    b"put 4294967296 0 1 1\r\nx\r\n",  # 10 digits: the exact path checks the range
    b"put 1 0 1 65536\r\n" + b"z" * 65536 + b"\r\n",  # over max-job-size
    b"put 1 0 1 1\rx\r\n",
    b"put \r\n",
    b"delete \r\n",
    b"delete 1 \r\n",
    b"delete 1x\r\n",
    b"delete 1\r\ndelete 2\r\n",
    b"delete 1234567890123456789\r\n",  # 19 digits
    b"delete 1\n",
    b"delete 1",
    b"reserve-with-timeout 1234567890\r\n",
    b"reserve-with-timeout -1\r\n",
    b"reserve \r\n",
    b"reserve\r\nreserve\r\n",
    b"reservex\r\n",
    b"stats\r\n",
    b"",
]


@pytest.mark.parametrize(("data", "command"), ACCEPTED)
def test_accepted_reads_parse_as_the_parser_parses_them(
    data: bytes, command: tuple[Any, ...]
) -> None:
    assert quick.one_command(data, MAX) == command
    assert exact(data) == [command]


@pytest.mark.parametrize("data", DECLINED)
def test_anything_else_is_left_to_the_parser(data: bytes) -> None:
    assert quick.one_command(data, MAX) is None


NUMBER = st.one_of(
    st.integers(0, 10**10).map(lambda n: str(n).encode()),
    st.sampled_from([b"", b"-1", b"+1", b"01", b"1x", b" 1", b"1 ", b"\x00", b"\r\n"]),
)
HEAD = st.sampled_from([b"put ", b"delete ", b"reserve-with-timeout ", b"reserve", b"pu"])


@given(HEAD, st.lists(NUMBER, max_size=5), st.binary(max_size=12), st.binary(max_size=4))
def test_whatever_it_accepts_the_parser_agrees(
    head: bytes, numbers: list[bytes], body: bytes, tail: bytes
) -> None:
    data = head + b" ".join(numbers) + b"\r\n" + body + tail
    command = quick.one_command(data, MAX)
    if command is not None:
        assert exact(data) == [command]


@given(st.integers(0, 10**9 - 1), st.integers(0, 10**9 - 1), st.integers(0, 10**9 - 1), st.binary())
def test_every_plain_put_is_taken(pri: int, delay: int, ttr: int, body: bytes) -> None:
    data = b"put %d %d %d %d\r\n%s\r\n" % (pri, delay, ttr, len(body), body)
    assert quick.one_command(data, 1 << 20) == (w.PUT, pri, delay, ttr, body)
