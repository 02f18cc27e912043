"""Memory of a real server process: after a kill -9 and a restart it holds the same jobs
in about the memory it used before the crash (bench.restart measures 1M jobs)."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.support.servers import SubprocessServer

JOBS = 100_000


def rss(server: SubprocessServer) -> int:
    assert server.proc is not None
    with open(f"/proc/{server.proc.pid}/status") as fh:
        line = next(x for x in fh if x.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def put(server: SubprocessServer, count: int, body: bytes) -> None:
    command = b"put 1024 0 120 %d\r\n%s\r\n" % (len(body), body)
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        for _ in range(count // 1000):
            sock.sendall(command * 1000)
            data = b""
            while data.count(b"\n") < 1000:
                data += sock.recv(65536)
            assert data.count(b"INSERTED") == 1000


def stats(server: SubprocessServer) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(b"stats\r\n")
        data = b""
        while b"binlog-max-size" not in data:
            data += sock.recv(65536)
        return data


def test_rss_after_a_restart_is_within_10_percent_of_before(tmp_path: Path) -> None:
    args = ["-b", str(tmp_path), "--workq-port", "0"]
    first = SubprocessServer(args).start()
    try:
        put(first, JOBS, b"x" * 100)
        stats(first)
        before = rss(first)
    finally:
        first.kill()
    second = SubprocessServer(args).start(timeout=60)
    try:
        assert b"current-jobs-ready: %d\n" % JOBS in stats(second)
        after = rss(second)
    finally:
        second.kill()
    assert after <= 1.1 * before, (after, before)
