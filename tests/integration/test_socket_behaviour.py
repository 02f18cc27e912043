"""Behaviour over real sockets that only a running server shows: timers, blocking,
pipelining, half-close, connection loss, framing."""

from __future__ import annotations

import resource
import socket
import time
from collections.abc import Callable
from typing import Any

from tests.support.servers import InProcessServer
from tests.support.wire_client import RawClient

Connect = Callable[[], RawClient]


def test_ttr_expiry_is_noticed_while_the_worker_stays_silent(connect: Connect) -> None:
    producer, worker = connect(), connect()
    assert producer.cmd(b"put 0 0 1 2\r\nhi\r\n") == b"INSERTED 1\r\n"
    assert worker.cmd(b"reserve\r\n") == b"RESERVED 1 2\r\nhi\r\n"
    time.sleep(1.3)  # the worker sends nothing; beanstalkd 1.12 often misses this expiry
    stats = producer.cmd(b"stats-job 1\r\n")
    assert b"state: ready\n" in stats and b"timeouts: 1\n" in stats
    assert producer.cmd(b"reserve-with-timeout 0\r\n") == b"RESERVED 1 2\r\nhi\r\n"


def test_blocked_reserve_is_woken_by_a_put(connect: Connect) -> None:
    worker, producer = connect(), connect()
    worker.send(b"reserve\r\n")
    assert worker.nothing_within(0.2)
    assert producer.cmd(b"put 0 0 10 1\r\nx\r\n") == b"INSERTED 1\r\n"
    assert worker.reply() == b"RESERVED 1 1\r\nx\r\n"


def test_pipelined_reserves_get_deadline_soon_then_the_delete_runs(connect: Connect) -> None:
    producer, worker = connect(), connect()
    producer.cmd(b"put 0 0 2 1\r\na\r\n")
    worker.send(b"reserve\r\nreserve\r\ndelete 1\r\n")
    assert worker.reply() == b"RESERVED 1 1\r\na\r\n"
    started = time.monotonic()
    assert worker.reply() == b"DEADLINE_SOON\r\n"
    assert worker.reply() == b"DELETED\r\n"
    assert 0.7 < time.monotonic() - started < 1.8


def test_reserve_with_timeout_times_out(connect: Connect) -> None:
    worker = connect()
    started = time.monotonic()
    assert worker.cmd(b"reserve-with-timeout 1\r\n") == b"TIMED_OUT\r\n"
    assert 0.9 < time.monotonic() - started < 2


def test_half_closed_waiting_client_gets_timed_out(connect: Connect) -> None:
    worker = connect()
    worker.send(b"reserve\r\n")
    assert worker.nothing_within(0.1)
    worker.sock.shutdown(socket.SHUT_WR)
    assert worker.reply() == b"TIMED_OUT\r\n"
    assert worker.closed_by_server()


def test_closing_a_connection_returns_its_reserved_jobs(connect: Connect) -> None:
    producer, worker = connect(), connect()
    producer.cmd(b"put 0 0 100 1\r\na\r\n")
    worker.cmd(b"reserve\r\n")
    worker.close()
    time.sleep(0.1)
    assert producer.cmd(b"reserve-with-timeout 0\r\n") == b"RESERVED 1 1\r\na\r\n"


def test_quit_closes_after_earlier_replies(connect: Connect) -> None:
    client = connect()
    client.send(b"use t\r\nquit\r\nuse never\r\n")
    assert client.reply() == b"USING t\r\n"
    assert client.closed_by_server()


def test_a_pipelined_batch_is_answered_in_one_write(server: InProcessServer) -> None:
    sock = server.connect()
    batch = b"".join(b"put 0 0 10 3\r\nabc\r\n" for _ in range(200))
    sock.sendall(batch)
    expected = b"".join(b"INSERTED %d\r\n" % i for i in range(1, 201))
    got = b""
    while len(got) < len(expected):
        got += sock.recv(1 << 16)
    assert got == expected
    sock.close()


class _CountingTransport:
    """Stands in for a session's transport and records its writes."""

    def __init__(self, transport: Any) -> None:
        self.inner = transport
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.inner.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_woken_reserve_leaves_in_one_write_with_the_replies_behind_it(
    server: InProcessServer, connect: Connect
) -> None:
    producer, worker = connect(), connect()
    worker.send(b"reserve\r\nlist-tube-used\r\n")
    assert worker.nothing_within(0.1)
    app = server.app
    assert app is not None
    (session,) = server.call(lambda: [s for s in app.sessions if s.parked])
    spy = _CountingTransport(session.transport)
    server.call(setattr, session, "transport", spy)  # on the loop thread
    assert producer.cmd(b"put 0 0 10 1\r\nx\r\n") == b"INSERTED 1\r\n"
    assert worker.reply() == b"RESERVED 1 1\r\nx\r\n"
    assert worker.reply() == b"USING default\r\n"
    assert spy.writes == [b"RESERVED 1 1\r\nx\r\nUSING default\r\n"]


def test_body_split_across_many_reads(connect: Connect) -> None:
    client = connect()
    body = bytes(range(256)) * 40 + b"\r\n\x00"
    data = b"put 5 0 10 %d\r\n%s\r\n" % (len(body), body)
    for i in range(0, len(data), 7):
        client.send(data[i : i + 7])
        time.sleep(0.0005)
    assert client.reply() == b"INSERTED 1\r\n"
    assert client.cmd(b"peek 1\r\n") == b"FOUND 1 %d\r\n%s\r\n" % (len(body), body)


def test_job_too_big_keeps_the_connection_in_sync(connect: Connect) -> None:
    client = connect()
    huge = b"put 0 0 1 70000\r\n" + b"\r\n" * 35000 + b"\r\n"
    client.send(huge + b"put 0 0 1 1\r\nz\r\n")
    assert client.reply() == b"JOB_TOO_BIG\r\n"
    assert client.reply() == b"INSERTED 1\r\n"


def test_over_long_line_does_not_swallow_the_next_command(connect: Connect) -> None:
    client = connect()
    assert client.cmd(b"x" * 223 + b"\r\nlist-tube-used\r\n", 2) == (
        b"BAD_FORMAT\r\nUSING default\r\n"
    )


def test_pause_blocks_then_releases_a_waiting_reserve(connect: Connect) -> None:
    producer, worker = connect(), connect()
    producer.cmd(b"put 0 0 10 1\r\np\r\n")
    assert producer.cmd(b"pause-tube default 1\r\n") == b"PAUSED\r\n"
    worker.send(b"reserve\r\n")
    assert worker.nothing_within(0.5)
    assert worker.reply() == b"RESERVED 1 1\r\np\r\n"


def test_delayed_job_becomes_ready_on_time(connect: Connect) -> None:
    client = connect()
    client.cmd(b"put 0 1 10 1\r\nd\r\n")
    assert client.cmd(b"reserve-with-timeout 0\r\n") == b"TIMED_OUT\r\n"
    assert client.cmd(b"reserve-with-timeout 2\r\n") == b"RESERVED 1 1\r\nd\r\n"


def test_many_concurrent_connections(server: InProcessServer) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096 <= hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (4096, hard))
    socks = [server.connect() for _ in range(1000)]
    for i, sock in enumerate(socks):
        sock.sendall(b"put 0 0 10 %d\r\n%s\r\n" % (len(str(i)), str(i).encode()))
    for sock in socks:
        assert sock.recv(100).startswith(b"INSERTED ")
    probe = RawClient(server.connect())
    stats = probe.cmd(b"stats\r\n")
    assert b"current-connections: 1001\n" in stats and b"total-jobs: 1000\n" in stats
    for sock in socks:
        sock.close()
    probe.close()
