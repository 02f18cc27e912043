"""With `-f 0` replies wait for the fsync: a client that half-closes right after its
command still gets the reply before the close, as from beanstalkd (it used to lose it:
the transport closed at EOF while the reply was held)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.differential.test_workq_reference import exchange  # send, half-close, read all
from tests.support.servers import SubprocessServer


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    server = SubprocessServer(["-b", str(tmp_path / "wal"), "-f", "0", "--http", "off",
                               "--workq-port", "off"]).start()  # fmt: skip
    try:
        yield server.port
    finally:
        server.stop()


def test_a_put_then_eof_is_answered_before_the_close(port: int) -> None:
    for n in range(1, 6):
        assert exchange(port, b"put 0 0 60 1\r\na\r\n") == b"INSERTED %d\r\n" % n


def test_commands_after_a_put_then_eof_are_answered_in_order(port: int) -> None:
    got = exchange(port, b"put 0 0 60 1\r\na\r\nreserve-with-timeout 0\r\nquit\r\n")
    assert got == b"INSERTED 1\r\nRESERVED 1 1\r\na\r\n"
