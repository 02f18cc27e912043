"""Memory of a real server process: after a kill -9 and a restart it holds the same jobs
in about the memory it used before the crash (bench.restart measures 1M jobs), and memory
is given back once jobs are deleted (bench.memory measures 26,880 jobs of 64 KB)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

from tests.support.servers import SubprocessServer

JOBS = 100_000
MIB = 1 << 20


def rss(server: SubprocessServer) -> int:
    assert server.proc is not None
    with open(f"/proc/{server.proc.pid}/status") as fh:
        line = next(x for x in fh if x.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def rss_samples(server: SubprocessServer, count: int = 5) -> list[int]:
    """RSS over about a second: the extensions load and memory is trimmed in the
    background after start-up, so one sample of a loaded machine can catch either side."""
    samples = []
    for _ in range(count):
        samples.append(rss(server))
        time.sleep(0.25)
    return samples


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
    args = ["-b", str(tmp_path), "--workq-port", "off"]
    first = SubprocessServer(args).start()
    try:
        put(first, JOBS, b"x" * 100)
        stats(first)
        before = max(rss_samples(first))
    finally:
        first.kill()
    second = SubprocessServer(args).start(timeout=60)
    try:
        assert b"current-jobs-ready: %d\n" % JOBS in stats(second)
        after = min(rss_samples(second))
    finally:
        second.kill()
    assert after <= 1.1 * before, (after, before)


def wait_for_rss(server: SubprocessServer, at_most: float, timeout: float = 20) -> int:
    """RSS once it is at most `at_most` (the trim runs on a 1 s timer), or the last seen."""
    deadline = time.monotonic() + timeout
    while True:
        now = rss(server)
        if now <= at_most or time.monotonic() > deadline:
            return now
        time.sleep(0.2)


def test_memory_is_given_back_after_large_jobs_are_deleted() -> None:
    server = SubprocessServer(["--workq-port", "off"]).start()
    try:
        stats(server)
        fresh = rss(server)
        jobs = 2000
        put(server, jobs, b"y" * 65_535)
        assert rss(server) > fresh + 100 * MIB  # the bodies are really held
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            sock.sendall(b"".join(b"delete %d\r\n" % i for i in range(1, jobs + 1)))
            data = b""
            while data.count(b"\n") < jobs:
                data += sock.recv(65536)
            assert data.count(b"DELETED") == jobs
        goal = 1.5 * fresh + 64 * MIB
        after = wait_for_rss(server, goal)
    finally:
        server.kill()
    assert after <= goal, (fresh, after)
