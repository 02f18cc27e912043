"""`beanpod serve --http`: the listener's address and defaults, start-up failures named
like the other listeners', /healthz and /readyz, JSON errors."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.http import HttpServer


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "beanpod", "serve", *args], capture_output=True,
                          text=True, timeout=30, env=dict(os.environ))  # fmt: skip


@pytest.fixture
def http() -> Iterator[HttpServer]:
    server = HttpServer().start()
    yield server
    server.stop()


def test_default_address_is_loopback_11380() -> None:
    out = serve("--print-config", "--http", "127.0.0.1:11380")  # the suite sets BEANPOD_HTTP
    assert 'http = "127.0.0.1:11380"  # flag' in out.stdout.splitlines()
    env = {k: v for k, v in os.environ.items() if k != "BEANPOD_HTTP"}
    out = subprocess.run([sys.executable, "-m", "beanpod", "serve", "--print-config"],
                         capture_output=True, text=True, timeout=30, env=env)  # fmt: skip
    soft = "# default (off, with a warning, if the port is in use)"
    assert f'http = "127.0.0.1:11380"  {soft}' in out.stdout.splitlines()


def test_http_off_opens_no_listener() -> None:
    from tests.support.servers import SubprocessServer

    server = SubprocessServer(["--http", "off"]).start()
    server.stop()
    assert not any("(HTTP)" in line for line in server.log)


def test_busy_http_port_is_named_with_exit_3() -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        out = serve("-p", "0", "--http", f"127.0.0.1:{port}")
    finally:
        holder.close()
    assert out.returncode == 3
    assert f"cannot listen on 127.0.0.1:{port} (HTTP): " in out.stderr


def test_non_loopback_address_needs_a_token(tmp_path: Path) -> None:
    out = serve("-p", "0", "--http", "0.0.0.0:0")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "beanpod: refusing --http 0.0.0.0:0: a non-loopback address needs --http-token FILE"
    ]
    empty = tmp_path / "token"
    empty.write_text("\n")
    out = serve("-p", "0", "--http", "127.0.0.1:0", "--http-token", str(empty))
    assert out.returncode == 2 and "it is empty" in out.stderr
    missing = tmp_path / "nope"
    out = serve("-p", "0", "--http", "127.0.0.1:0", "--http-token", str(missing))
    assert out.returncode == 2
    assert f"cannot read the HTTP token file {missing}: No such file" in out.stderr


def test_malformed_http_address_is_a_usage_error() -> None:
    out = serve("-p", "0", "--http", "localhost")
    assert out.returncode == 2 and "is not ADDR:PORT" in out.stderr


def test_healthz_and_readyz(http: HttpServer) -> None:
    assert http.get("/healthz").json() == {"status": "ok"}
    ready = http.get("/readyz")
    assert (ready.status, ready.json()) == (200, {"status": "ready"})


def test_readyz_is_503_while_draining(http: HttpServer) -> None:
    http.server.signal(signal.SIGUSR1)
    deadline = time.monotonic() + 5
    while http.get("/readyz").status == 200 and time.monotonic() < deadline:
        time.sleep(0.02)
    reply = http.get("/readyz")
    assert (reply.status, reply.json()) == (503, {"status": "draining"})
    assert http.get("/healthz").status == 200  # alive, just not taking work


def test_errors_are_json(http: HttpServer) -> None:
    missing = http.get("/no/such/page")
    assert (missing.status, missing.json()) == (404, {"error": "not found", "status": 404})
    assert missing.headers["Content-Type"].startswith("application/json")
    wrong = http.request("DELETE", "/metrics")
    assert wrong.status == 405 and wrong.json()["status"] == 405
    assert "GET" in wrong.headers["Allow"]
