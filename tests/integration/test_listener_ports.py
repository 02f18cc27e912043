"""The Workq and HTTP listeners' default ports are soft: a second `beanpod serve -p PORT`
on one host (its 9922 and 11380 taken) still serves beanstalkd, with one warning per
listener naming its flag; a port named by flag, environment or config file that cannot be
had is fatal (exit 3), and the error names the flag. `--workq-port 0` is any free port
(as `-p 0`), `--workq-port off` disables it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from tests.support.certs import make_certs
from tests.support.servers import SubprocessServer
from tests.support.wire_client import RawClient

WORKQ_WARNING = "Workq listener not started: 127.0.0.1:9922 is in use; set --workq-port"
HTTP_WARNING = "HTTP listener not started: 127.0.0.1:11380 is in use; set --http"


@pytest.fixture(autouse=True)
def default_http(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite turns HTTP off (tests/conftest.py); these tests are about its default."""
    monkeypatch.delenv("BEANPOD_HTTP")


def serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "beanpod", "serve", *args], capture_output=True,
                          text=True, timeout=60, env={**os.environ, **(env or {})})  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def held_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def put_and_reserve(port: int) -> None:
    client = RawClient(socket.create_connection(("127.0.0.1", port), timeout=10))
    assert client.cmd(b"put 0 0 60 2\r\nhi\r\n").startswith(b"INSERTED ")
    assert client.cmd(b"reserve-with-timeout 0\r\n").startswith(b"RESERVED ")
    client.close()


@pytest.mark.parametrize("wal", [False, True], ids=["memory", "wal"])
def test_two_servers_started_with_p_alone_both_serve_beanstalkd(tmp_path: Path, wal: bool) -> None:
    with ExitStack() as stack:
        servers = []
        for n in range(2):  # `-p PORT` alone: SubprocessServer's own `-p 0` is overridden
            with_wal = ["-b", str(tmp_path / str(n))] if wal else []  # HTTP opens before replay
            server = SubprocessServer(["-p", str(free_port()), *with_wal]).start()
            stack.callback(server.stop)
            servers.append(server)
        for server in servers:
            put_and_reserve(server.port)
        second = "".join(servers[1].log)
        # The first server (or another program) holds 9922 and 11380: the second gives way.
        assert WORKQ_WARNING in second and HTTP_WARNING in second
        assert sum(" WARNING " in line for line in servers[1].log) == 2  # one line each


def test_a_named_port_in_use_is_fatal_and_names_its_flag(tmp_path: Path) -> None:
    config = tmp_path / "beanpod.toml"
    certs = make_certs(tmp_path)
    tls = ["--tls-cert", certs.server_cert, "--tls-key", certs.server_key]
    with held_port() as port:
        cases = {
            "-l ADDR / -p PORT": serve("-p", str(port)),
            "--workq-port PORT": serve("-p", "0", "--workq-port", str(port)),
            "--http ADDR:PORT": serve("-p", "0", "--http", f"127.0.0.1:{port}"),
            "--tls-listen ADDR:PORT": serve("-p", "0", "--tls-listen", f"127.0.0.1:{port}", *tls),
        }
        env = serve("-p", "0", env={"BEANPOD_WORKQ_PORT": str(port)})
        config.write_text(f'http = "127.0.0.1:{port}"\n')
        from_file = serve("--config", str(config), "-p", "0")
    for flag, out in cases.items():
        assert out.returncode == 3, out.stderr
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0], lines
        off = " (or off)" if flag in ("--workq-port PORT", "--http ADDR:PORT") else ""
        assert lines[0].endswith(f"Address already in use; choose another with {flag}{off}")
    assert env.returncode == 3 and "--workq-port PORT" in env.stderr
    assert from_file.returncode == 3 and "(HTTP)" in from_file.stderr, from_file.stderr


def test_workq_port_0_is_any_free_port_and_off_disables_it() -> None:
    port = free_port()
    server = SubprocessServer(["-p", str(port), "--workq-port", "0", "--http", "off"]).start()
    try:
        workq = server.workq_port()
        assert workq not in (0, 9922, port)
        socket.create_connection(("127.0.0.1", workq), timeout=10).close()
    finally:
        server.stop()
    server = SubprocessServer(["--workq-port", "off", "--http", "off"]).start()
    server.stop()
    assert not any("Workq" in line for line in server.log)
    bad = serve("--workq-port", "seven")
    assert bad.returncode == 2 and "'seven' is not a port" in bad.stderr


def test_config_files_keep_working(tmp_path: Path) -> None:
    """`workq-port = 0` (once: off) is now a free port; `false` and "off" turn it off."""
    config = tmp_path / "beanpod.toml"
    for written, shown in (("0", "0"), ("false", '"off"'), ('"off"', '"off"'), ("9000", "9000")):
        config.write_text(f"workq-port = {written}\n")
        out = serve("--config", str(config), "--print-config")
        assert out.returncode == 0, out.stderr
        assert f"workq-port = {shown}  # config file" in out.stdout.splitlines()


def test_print_config_tells_what_the_soft_defaults_mean() -> None:
    lines = serve("-p", "4000", "--print-config").stdout.splitlines()
    assert "workq-port = 9922  # default (off, with a warning, if the port is in use)" in lines
    assert (
        'http = "127.0.0.1:11380"  # default (off, with a warning, if the port is in use)' in lines
    )
    lines = serve("-p", "0", "--print-config").stdout.splitlines()
    assert "workq-port = 0  # default (-p 0: a free port)" in lines
    lines = serve("--workq-port", "off", "--print-config").stdout.splitlines()
    assert 'workq-port = "off"  # flag' in lines
