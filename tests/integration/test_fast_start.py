"""`beanpod serve` opens its port before its heavy imports and hands that socket to the
server: a client that connects at once is accepted, then answered (TCP and UNIX)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
SCRIPT = Path(sys.executable).parent / "beanpod"
GIVE_UP_S = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(argv: list[str]) -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(SRC), os.environ.get("PYTHONPATH")) if p)}  # fmt: skip
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    try:
        yield proc
    finally:
        proc.terminate()
        proc.communicate(timeout=GIVE_UP_S)


def connect_soon(family: socket.AddressFamily, address: object) -> socket.socket:
    deadline = time.monotonic() + GIVE_UP_S
    while True:
        sock = socket.socket(family)
        try:
            sock.connect(address)
            return sock
        except (ConnectionRefusedError, FileNotFoundError):
            sock.close()
            assert time.monotonic() < deadline, "the server never listened"
            time.sleep(0.001)


def ask(sock: socket.socket) -> bytes:
    with sock, sock.makefile("rb") as replies:
        sock.sendall(b"list-tube-used\r\n")
        return replies.readline()


LAUNCHERS = {
    "console script": [str(SCRIPT)],
    "python -m beanpod": [sys.executable, "-m", "beanpod"],
}


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_an_early_connection_is_answered_over_tcp(launcher: str) -> None:
    if launcher == "console script" and not SCRIPT.exists():
        pytest.skip(f"no console script at {SCRIPT}")
    port = free_port()
    argv = [*LAUNCHERS[launcher], "serve", "-l", "127.0.0.1", "-p", str(port), "--workq-port", "0"]
    with serving(argv) as proc:
        assert ask(connect_soon(socket.AF_INET, ("127.0.0.1", port))) == b"USING default\r\n"
        assert proc.stderr is not None
        assert f"listening on 127.0.0.1:{port}" in proc.stderr.readline()


def test_an_early_connection_is_answered_over_a_unix_socket(tmp_path: Path) -> None:
    path = tmp_path / "beanpod.sock"
    with socket.socket(socket.AF_UNIX) as stale:  # a file left by an earlier server
        stale.bind(str(path))
    argv = [sys.executable, "-m", "beanpod", "serve", "-l", f"unix:{path}", "--workq-port", "0"]
    with serving(argv):
        assert ask(connect_soon(socket.AF_UNIX, str(path))) == b"USING default\r\n"
