"""Timers never fire before their whole duration has passed for the client. The engine
counts whole milliseconds from a floored clock, so a deadline set from `now` could fall
up to 1 ms before the client's own second had passed; greenstalk's own suite checks that
a 1-second reserve timeout, delay and DEADLINE_SOON each take at least 1 s, as they do
with beanstalkd (which keeps nanoseconds)."""

from __future__ import annotations

import selectors
import socket
import time

import pytest

from tests.support.servers import InProcessServer

CONNECTIONS = 16  # sent at spread sub-millisecond phases: nearly every one would catch it


def _read_until(sock: socket.socket, count: int) -> bytes:
    data = b""
    while data.count(b"\r\n") < count:
        data += sock.recv(4096)
    return data


def _seconds_until(
    server: InProcessServer, setup: bytes, timed: bytes, until: bytes
) -> list[float]:
    """On each connection: `setup` (its replies read first), then `timed`; the seconds
    from sending `timed` until a reply holding `until` arrived, per connection."""
    socks = []
    for n in range(CONNECTIONS):
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(setup.replace(b"{n}", b"%d" % n))
        _read_until(sock, setup.count(b"\r\n") - setup.count(b"put "))
        socks.append(sock)
    selector = selectors.DefaultSelector()
    sent: dict[socket.socket, float] = {}
    for sock in socks:
        time.sleep(0.00037)
        sent[sock] = time.perf_counter()
        sock.sendall(timed)
        selector.register(sock, selectors.EVENT_READ)
    replies = dict.fromkeys(socks, b"")
    seconds = []
    while sent:
        for key, _ in selector.select(timeout=5):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            replies[sock] += sock.recv(4096)
            if until in replies[sock]:
                seconds.append(time.perf_counter() - sent.pop(sock))
                selector.unregister(sock)
                sock.close()
    return seconds


@pytest.mark.parametrize(
    ("setup", "timed", "until"),
    [
        (b"", b"reserve-with-timeout 1\r\n", b"TIMED_OUT\r\n"),
        (b"use d{n}\r\nwatch d{n}\r\n", b"put 0 1 10 1\r\nx\r\nreserve\r\n", b"RESERVED"),
        (
            b"use s{n}\r\nwatch s{n}\r\nput 0 0 2 1\r\nx\r\n",
            b"reserve\r\nreserve\r\n",
            b"DEADLINE_SOON\r\n",
        ),
    ],
    ids=["reserve-timeout", "delay", "deadline-soon"],
)
def test_a_one_second_timer_takes_at_least_one_second(
    server: InProcessServer, setup: bytes, timed: bytes, until: bytes
) -> None:
    seconds = _seconds_until(server, setup, timed, until)
    assert len(seconds) == CONNECTIONS
    assert min(seconds) >= 1.0, f"fired after {min(seconds):.6f} s"
