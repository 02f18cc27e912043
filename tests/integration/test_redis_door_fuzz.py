"""Malformed RESP on the Redis-protocol door: the connection is answered with an error
and closed (or just closed), and the server, its other connections and its jobs go on."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.servers import InProcessServer


def cmd(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


@pytest.fixture
def door() -> Iterator[InProcessServer]:
    server = InProcessServer(redis_port=0).start()
    yield server
    server.stop()


def redis_port(server: InProcessServer) -> int:
    assert server.app is not None
    return int(server.app.redis_addresses[0].rsplit(":", 1)[1])


def exchange(port: int, data: bytes, half_close: bool = True) -> bytes:
    """Send `data`, then read until the server closes or goes quiet."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=2)
    with contextlib.suppress(OSError):
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
    out = b""
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            out += chunk
    sock.close()
    return out


class Keeper:
    """A connection that holds a job before the noise and checks it after."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.jid = b"keeper-job"
        assert self.ask(cmd(b"EVALSHA", b"506e105128361dc90bc0ca1a33baac8ab4f2895a", b"0",
                            b"put", b"1", b"", b"keep", self.jid, b"K", b"{}", b"0"))  # fmt: skip

    def ask(self, data: bytes) -> bytes:
        self.sock.sendall(data)
        return self.sock.recv(65536)

    def check(self) -> None:
        assert self.ask(cmd(b"PING")) == b"+PONG\r\n"
        length = cmd(b"EVALSHA", b"506e105128361dc90bc0ca1a33baac8ab4f2895a", b"0",
                     b"length", b"1", b"keep")  # fmt: skip
        assert self.ask(length) == b":1\r\n"
        self.sock.close()


MALFORMED = [
    (b"*1\r\n$4\r\nPI", b""),  # truncated: the half-close ends it, unanswered
    (b"*1\r\n$99999999999\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*1\r\n$1073741824\r\nxx", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*4000000000\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*1\r\n*1\r\n$1\r\na\r\n", b"-ERR Protocol error: expected '$', got '*'\r\n"),
    (b"*1\r\n" * 200 + b"$1\r\na\r\n", b"-ERR Protocol error: expected '$', got '*'\r\n"),
    (b"*2\r\n$-5\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*2\r\n$1\r\na\r\n" * 3 + b"*1\r\n", b"-ERR Protocol error: expected '$', got '*'\r\n"),
    (b"\x00\xff garbage\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (cmd(b"PING") + b"*x\r\n" + cmd(b"PING"),
     b"+PONG\r\n-ERR Protocol error: invalid multibulk length\r\n"),
]  # fmt: skip


@pytest.mark.parametrize(("wire", "reply"), MALFORMED)
def test_malformed_requests(door: InProcessServer, wire: bytes, reply: bytes) -> None:
    port = redis_port(door)
    keeper = Keeper(port)
    assert exchange(port, wire, half_close=not reply) == reply
    keeper.check()


WORDS = [b"*", b"$", b"%", b"~", b">", b":", b"-", b"+", b"\r\n", b"1", b"3", b"-1", b"0",
         b"99999999999", b"EVALSHA", b"SUBSCRIBE", b"BRPOP", b"MULTI", b"EXEC", b"HELLO",
         b"PING", b"\x00", b"x" * 100]  # fmt: skip
GARBAGE = st.lists(st.one_of(st.sampled_from(WORDS), st.binary(max_size=30)), max_size=40)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(GARBAGE)
def test_garbage_never_hurts_other_clients(door: InProcessServer, pieces: list[bytes]) -> None:
    port = redis_port(door)
    keeper = Keeper(port)
    exchange(port, b"".join(pieces).replace(b"keep", b"kept"))
    keeper.check()
