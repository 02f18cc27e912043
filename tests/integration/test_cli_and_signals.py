"""`beanpod serve` as a real process: beanstalkd's flags, signals, UNIX sockets."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from beanpod import __version__
from tests.support.servers import SubprocessServer
from tests.support.wire_client import RawClient


def client_for(server: SubprocessServer) -> RawClient:
    return RawClient(socket.create_connection(("127.0.0.1", server.port), timeout=5))


def test_version_flag() -> None:
    for args in (["-v"], ["serve", "-v"], ["--version"]):
        out = subprocess.run([sys.executable, "-m", "beanpod", *args], capture_output=True,
                             text=True, check=True)  # fmt: skip
        assert __version__ in out.stdout


def test_beanstalkd_flags_are_accepted() -> None:
    server = SubprocessServer(["-z", "10", "-V", "-c", "-n"]).start()
    try:
        client = client_for(server)
        assert client.cmd(b"put 0 0 1 11\r\n" + b"x" * 11 + b"\r\n") == b"JOB_TOO_BIG\r\n"
        assert client.cmd(b"put 0 0 1 10\r\n" + b"x" * 10 + b"\r\n") == b"INSERTED 1\r\n"
        assert b"max-job-size: 10\n" in client.cmd(b"stats\r\n")
        client.close()
    finally:
        server.stop()
    assert any("binlog is always compacted" in line for line in server.log)


def test_sigusr1_enters_drain_mode() -> None:
    server = SubprocessServer().start()
    try:
        client = client_for(server)
        assert client.cmd(b"put 0 0 1 1\r\na\r\n") == b"INSERTED 1\r\n"
        server.signal(signal.SIGUSR1)
        time.sleep(0.3)
        assert client.cmd(b"put 0 0 1 1\r\nb\r\n") == b"DRAINING\r\n"
        assert b"draining: true\n" in client.cmd(b"stats\r\n")
        assert client.cmd(b"reserve-with-timeout 0\r\n") == b"RESERVED 1 1\r\na\r\n"
        assert client.cmd(b"put 0 0 1 1\r\nc\r\n") == b"DRAINING\r\n"
        client.close()
    finally:
        server.stop()


def test_sigterm_and_sigint_shut_down_cleanly() -> None:
    for sig in (signal.SIGTERM, signal.SIGINT):
        server = SubprocessServer().start()
        client = client_for(server)
        client.send(b"reserve\r\n")  # a blocked client must not hold up shutdown
        time.sleep(0.1)
        server.signal(sig)
        assert server.wait() == 0
        assert client.closed_by_server()
        client.close()
        assert any("shutting down" in line for line in server.log)


def test_unix_socket_listener(tmp_path: Path) -> None:
    path = tmp_path / "beanpod.sock"
    proc = subprocess.Popen([sys.executable, "-m", "beanpod", "serve", "-l", f"unix:{path}"],
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(str(path))
        client = RawClient(sock)
        assert client.cmd(b"use over-unix\r\n") == b"USING over-unix\r\n"
        client.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_port_in_use_is_a_clear_error() -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    out = subprocess.run([sys.executable, "-m", "beanpod", "serve", "-p", str(port)],
                         capture_output=True, text=True, timeout=20)  # fmt: skip
    holder.close()
    assert out.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port}" in out.stderr
