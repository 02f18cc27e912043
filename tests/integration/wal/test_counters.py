"""Counters across a binlog restart, side by side with beanstalkd 1.12 (`beanstalkd -b`):
process counters (cmd-*, total-jobs, a tube's total-jobs) start again at 0, the binlog
index fields move to a new segment at once, and records-written counts job records from
the restart on. docs/wal.md, "Counters after a restart", lists each field."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

BEANSTALKD = shutil.which("beanstalkd")
FIELDS = (
    "cmd-put", "cmd-delete", "cmd-bury", "cmd-kick", "total-jobs", "current-jobs-ready",
    "current-jobs-buried", "binlog-oldest-index", "binlog-current-index",
    "binlog-records-written", "binlog-records-migrated",
)  # fmt: skip
TUBE_FIELDS = ("total-jobs", "current-jobs-ready", "current-jobs-buried", "cmd-delete")
JOB_FIELDS = ("state", "pri", "file")  # beanstalkd's binlog loses reserves/releases/...


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    def __init__(self, kind: str, wal: Path) -> None:
        self.port = free_port()
        wal.mkdir(exist_ok=True)  # beanstalkd does not create it
        if kind == "beanstalkd":
            assert BEANSTALKD is not None
            argv = [BEANSTALKD, "-l", "127.0.0.1", "-p", str(self.port), "-b", str(wal)]
        else:
            argv = [sys.executable, "-m", "beanpod", "serve", "-l", "127.0.0.1", "-p",
                    str(self.port), "--workq-port", "off", "-b", str(wal)]  # fmt: skip
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     env={**os.environ, "BEANPOD_HTTP": "off"})  # fmt: skip
        self.sock = self._connect()

    def _connect(self) -> socket.socket:
        deadline = time.monotonic() + 20
        while True:
            try:
                return socket.create_connection(("127.0.0.1", self.port), timeout=10)
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise
                time.sleep(0.02)

    def cmd(self, line: bytes) -> bytes:
        self.sock.sendall(line)
        data = b""
        while b"\r\n" not in data:
            data += self.sock.recv(65536)
        head, _, rest = data.partition(b"\r\n")
        if head.startswith(b"OK "):
            size = int(head.split()[1])
            while len(rest) < size + 2:
                rest += self.sock.recv(65536)
            return rest[:size]
        return head

    def yaml(self, line: bytes) -> dict[str, str]:
        text = self.cmd(line).decode()
        return dict(x.split(": ", 1) for x in text.splitlines()[1:])

    def kill(self) -> None:
        self.sock.close()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)


def session(kind: str, wal: Path) -> Iterator[dict[str, str]]:
    """What one operator sees: before the crash, after the restart, after one more put."""
    first = Server(kind, wal)
    try:
        first.cmd(b"use t\r\n")
        for _ in range(4):
            first.cmd(b"put 0 0 10 1\r\nx\r\n")
        first.cmd(b"watch t\r\n")
        first.cmd(b"reserve\r\n")
        first.cmd(b"bury 1 5\r\n")
        first.cmd(b"delete 2\r\n")
        first.cmd(b"stats\r\n")
        time.sleep(0.2)  # beanpod -f 50: let the group commit reach the page cache
    finally:
        first.kill()
    second = Server(kind, wal)
    try:
        yield pick(second.yaml(b"stats\r\n"), FIELDS)
        yield pick(second.yaml(b"stats-tube t\r\n"), TUBE_FIELDS)
        yield pick(second.yaml(b"stats-job 1\r\n"), JOB_FIELDS)
        second.cmd(b"use t\r\n")
        assert second.cmd(b"put 0 0 10 1\r\nx\r\n") == b"INSERTED 5"
        yield pick(second.yaml(b"stats\r\n"), FIELDS)
        yield pick(second.yaml(b"stats-tube t\r\n"), TUBE_FIELDS)
    finally:
        second.kill()


def pick(stats: dict[str, str], keys: tuple[str, ...]) -> dict[str, str]:
    return {k: stats[k] for k in keys}


@pytest.mark.skipif(BEANSTALKD is None, reason="beanstalkd 1.12 is not installed")
def test_counters_after_a_restart_match_beanstalkd(tmp_path: Path) -> None:
    ours = list(session("beanpod", tmp_path / "beanpod"))
    theirs = list(session("beanstalkd", tmp_path / "beanstalkd"))
    assert ours == theirs
    assert ours[0]["total-jobs"] == "0" and ours[0]["binlog-current-index"] == "2"
    assert ours[3]["binlog-records-written"] == "1"


@pytest.mark.skipif(BEANSTALKD is None, reason="beanstalkd 1.12 is not installed")
def test_binlog_indexes_of_a_fresh_directory_match_beanstalkd(tmp_path: Path) -> None:
    seen = []
    for kind in ("beanpod", "beanstalkd"):
        server = Server(kind, tmp_path / kind)
        try:
            seen.append(pick(server.yaml(b"stats\r\n"), FIELDS))
        finally:
            server.kill()
    assert seen[0] == seen[1]
    assert seen[0]["binlog-oldest-index"] == seen[0]["binlog-current-index"] == "1"
