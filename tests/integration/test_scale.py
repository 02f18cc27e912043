"""Scale check: a server process holds 1,000,000 queued 100-byte jobs without errors,
then hands them all out. Prints the memory per job (recorded in docs/performance.md)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.support.servers import SubprocessServer

JOBS = 1_000_000
BATCH = 2000
BODY = b"b" * 100


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def pipeline(sock: socket.socket, request: bytes, count: int, reply_prefix: bytes) -> bytes:
    """Send `count` pipelined requests and read exactly their `count` replies."""
    sock.sendall(request * count)
    buf = b""
    while buf.count(b"\r\n") < count:
        chunk = sock.recv(1 << 20)
        assert chunk, "server closed the connection"
        buf += chunk
    assert buf.count(reply_prefix) == count, buf[:200]
    return buf


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_million_queued_jobs() -> None:
    server = SubprocessServer().start()
    assert server.proc is not None
    try:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
        before = rss_bytes(server.proc.pid)
        put = b"put 100 0 120 100\r\n" + BODY + b"\r\n"
        for _ in range(JOBS // BATCH):
            pipeline(sock, put, BATCH, b"INSERTED ")
        per_job = (rss_bytes(server.proc.pid) - before) / JOBS
        print(f"\nRSS per queued 100-byte job: {per_job:.0f} bytes")
        sock.sendall(b"stats\r\n")
        stats = sock.recv(1 << 16)
        assert b"current-jobs-ready: 1000000\n" in stats
        assert per_job < 1000  # a sanity bound on memory, not a timing threshold
        # Hand the first 20,000 out again: reserve+delete pipelined, in id order.
        consume = b"reserve-with-timeout 0\r\ndelete %d\r\n"
        for start in range(1, 20_001, BATCH):
            sock.sendall(b"".join(consume % i for i in range(start, start + BATCH)))
            got = b""
            while got.count(b"DELETED\r\n") < BATCH:
                chunk = sock.recv(1 << 20)
                assert chunk, "server closed the connection"
                got += chunk
            assert got.count(b"RESERVED ") == BATCH and b"NOT_FOUND" not in got
        sock.close()
    finally:
        server.stop()
