"""deploy/: the systemd unit passes `systemd-analyze verify`, and its ExecStart and ExecStop
command lines, parsed out of the unit as systemd reads them and run by hand, start the
server (with /etc/beanpod/beanpod.toml when present) and stop it: at once with no job
reserved, after the reserved jobs are done, or when DRAIN_SECONDS run out. The
Dockerfile's HEALTHCHECK command passes against a server with an HTTP token."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.wire_client import RawClient

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
UNIT = DEPLOY / "beanpod.service"
BEANPOD = Path(sys.executable).parent / "beanpod"
ESCAPES = {"n": "\n", "t": "\t"}
Server = subprocess.Popen[str]  # systemd's C escapes; any other `\x` is `x`


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def unit_setting(key: str) -> str:
    """The value of `key=` in the unit, continuation lines joined as systemd joins them."""
    text = re.sub(r"\\\n", " ", UNIT.read_text())
    return next(line for line in text.splitlines() if line.startswith(key + "="))[len(key) + 1 :]


def systemd_words(text: str) -> list[str]:
    """A command line split as systemd does: `%%` specifiers, quotes, C escapes, `$$`."""
    text, words, i = text.replace("%%", "%"), [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        word, quote = "", ""
        while i < len(text) and (quote or not text[i].isspace()):
            char = text[i]
            if char == "\\":
                word += ESCAPES.get(text[i + 1], text[i + 1])
                i += 2
                continue
            if char in "'\"" and quote in ("", char):
                quote = "" if quote else char
            else:
                word += char
            i += 1
        words.append(word.replace("$$", "$"))
    return words


def command(key: str, config: Path) -> list[str]:
    """ExecStart/ExecStop with this machine's paths: the venv's beanpod, a temporary config."""
    words = systemd_words(unit_setting(key))
    return [w.replace("/opt/beanpod/venv/bin/beanpod", str(BEANPOD))
             .replace("/etc/beanpod/beanpod.toml", str(config)) for w in words]  # fmt: skip


def unit_environment(wal: Path) -> dict[str, str]:
    pairs = (word.split("=", 1) for word in systemd_words(unit_setting("Environment")))
    return {key: value.replace("/var/lib/beanpod", str(wal)) for key, value in pairs}


@contextmanager
def unit_server(tmp_path: Path, port: int, toml: bool) -> Iterator[tuple[Server, dict[str, str]]]:
    """ExecStart run by hand; the beanstalkd port from beanpod.toml, or from a BEANPOD_PORT
    variable as /etc/default/beanpod would give it."""
    config = tmp_path / "beanpod.toml"
    env = {**os.environ, **unit_environment(tmp_path / "wal")}
    if toml:
        config.write_text(f'port = {port}\nworkq-port = "off"\n')
    else:
        env.update(BEANPOD_PORT=str(port), BEANPOD_WORKQ_PORT="off")
    proc = subprocess.Popen(command("ExecStart", config), env=env, text=True,
                            stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except ConnectionRefusedError:
                assert proc.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.02)
        yield proc, {**env, "MAINPID": str(proc.pid), "CONFIG": str(config)}
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def stop(env: dict[str, str], drain_seconds: int) -> subprocess.Popen[str]:
    """ExecStop run by hand, as systemd would with $MAINPID set."""
    return subprocess.Popen(command("ExecStop", Path(env["CONFIG"])), text=True,
                            env={**env, "DRAIN_SECONDS": str(drain_seconds)})  # fmt: skip


def client(port: int) -> RawClient:
    return RawClient(socket.create_connection(("127.0.0.1", port), timeout=10))


def holding_job_1(port: int) -> RawClient:
    """A worker that put job 1 and holds it reserved."""
    worker = client(port)
    assert worker.cmd(b"put 0 0 600 3\r\njob\r\n") == b"INSERTED 1\r\n"
    assert worker.cmd(b"reserve\r\n") == b"RESERVED 1 3\r\njob\r\n"
    return worker


def ask(port: int, request: bytes) -> bytes:
    """One request on a connection of its own."""
    once = client(port)
    try:
        return once.cmd(request)
    finally:
        once.close()


def test_the_unit_passes_systemd_analyze_verify() -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    out = subprocess.run(["systemd-analyze", "verify", str(UNIT)], capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert out.returncode == 0 and out.stderr == "" and out.stdout == "", out.stderr


@pytest.mark.parametrize("toml", [True, False], ids=["beanpod.toml", "environment"])
def test_with_no_job_reserved_the_stop_is_immediate(tmp_path: Path, toml: bool) -> None:
    port = free_port()
    with unit_server(tmp_path, port, toml) as (proc, env):
        stopper = stop(env, drain_seconds=600)  # far beyond the test's own timeout
        assert stopper.wait(timeout=60) == 0
        assert proc.wait(timeout=30) == 0
        assert "entering drain mode" in proc.communicate(timeout=30)[1]  # drained first


def test_a_reserved_job_is_waited_for_until_it_is_deleted(tmp_path: Path) -> None:
    port = free_port()
    with unit_server(tmp_path, port, toml=False) as (proc, env):
        worker = holding_job_1(port)
        stopper = stop(env, drain_seconds=600)
        while ask(port, b"put 0 0 60 1\r\nx\r\n") != b"DRAINING\r\n":
            time.sleep(0.05)  # until ExecStop has sent SIGUSR1
        time.sleep(2.5)  # more than two polls of `stats`
        assert stopper.poll() is None and proc.poll() is None  # still waiting, still serving
        assert worker.cmd(b"delete 1\r\n") == b"DELETED\r\n"
        worker.close()
        assert stopper.wait(timeout=60) == 0
        assert proc.wait(timeout=30) == 0


def test_a_job_held_past_drain_seconds_does_not_hold_the_stop(tmp_path: Path) -> None:
    port = free_port()
    with unit_server(tmp_path, port, toml=True) as (proc, env):
        worker = holding_job_1(port)
        assert stop(env, drain_seconds=2).wait(timeout=60) == 0
        assert proc.wait(timeout=30) == 0  # stopped with the job still reserved
        worker.close()
    with unit_server(tmp_path, port, toml=True):  # the same WAL: the job is back, ready
        assert b"\nstate: ready\n" in ask(port, b"stats-job 1\r\n")


def test_the_dockerfile_healthcheck_passes_with_an_http_token(tmp_path: Path) -> None:
    line = re.search(r"HEALTHCHECK .*?CMD (\[.*\])", re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile")
                     .read_text())).group(1)  # type: ignore[union-attr]  # fmt: skip
    port, token = free_port(), tmp_path / "token"
    token.write_text("s3cret\n")
    check = [w.replace("11380", str(port)) for w in json.loads(line)]
    check[0] = sys.executable if check[0] == "python" else check[0]
    args = [str(BEANPOD), "serve", "-p", "0", "--http", f"127.0.0.1:{port}", "--http-token",
            str(token)]  # fmt: skip
    server = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while subprocess.run(check, timeout=30).returncode != 0:
            assert server.poll() is None and time.monotonic() < deadline, "never healthy"
            time.sleep(0.1)
    finally:
        server.terminate()
        server.communicate(timeout=30)
