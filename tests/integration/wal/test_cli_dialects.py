"""`beanpod wal verify|dump` and salvage over a log a real server wrote with a plain
beanstalkd job, a qless job and a Workq job in it (all three CLI runs are processes)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from beanpod.client.workq import Client as WorkqClient
from tests.support.servers import SubprocessServer
from tests.support.wire_client import RawClient
from tests.support.workq_reference import free_port

UUID = "6ba7b810-9dad-41d1-80b4-00c04fd430c8"


def beanpod(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "beanpod", *args], capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip


def qless(client: RawClient, fn: str, *args: object) -> bytes:
    body = json.dumps({"fn": fn, "args": list(args)}).encode()
    return client.cmd(b"qless %d\r\n%s\r\n" % (len(body), body))


def fill(directory: Path, crash: bool) -> None:
    """One job of each dialect (the qless one popped, so its lock is in the log), then
    SIGTERM or kill -9."""
    workq_port = free_port()
    server = SubprocessServer(["-b", str(directory), "--http", "off",
                               "--workq-port", str(workq_port)]).start()  # fmt: skip
    try:
        client = RawClient(socket.create_connection(("127.0.0.1", server.port), timeout=10))
        assert client.cmd(b"put 5 0 60 5\r\nhello\r\n") == b"INSERTED 1\r\n"
        assert qless(client, "put", "w", "q", "abc", "Klass", "{}", 0) == b'OK 5\r\n"abc"\r\n'
        assert b'"jid":"abc"' in qless(client, "pop", "q", "w1", 1)
        with WorkqClient(("127.0.0.1", workq_port), backoff=None) as workq:
            workq.add(UUID, "wq", 60_000, 600_000, b"payload")
        client.close()
    finally:
        server.kill() if crash else server.stop()


@pytest.mark.parametrize("crash", [False, True], ids=["sigterm", "kill-9"])
def test_verify_dump_and_salvage_know_every_dialect(tmp_path: Path, crash: bool) -> None:
    directory = tmp_path / "wal"
    fill(directory, crash)
    verify = beanpod("wal", "verify", str(directory))
    assert verify.returncode == 0, verify.stderr
    assert verify.stderr == ""
    assert "3 jobs (ready 3, delayed 0, buried 0)" in verify.stdout
    dump = beanpod("wal", "dump", str(directory))
    assert dump.returncode == 0 and dump.stderr == "", dump.stderr
    puts = [line for line in dump.stdout.splitlines() if " put " in line]
    assert len(puts) == 3, dump.stdout
    assert "id=1 tube='default' pri=5" in puts[0] and "ext_kind=0 body_bytes=5" in puts[0]
    assert "tube='q'" in puts[1] and "ext=qless:abc" in puts[1]
    assert "tube='wq'" in puts[2] and f"ext=workq:{UUID}" in puts[2]
    assert any(" update " in line and "ext=qless:abc" in line for line in dump.stdout.splitlines())
    bodies = beanpod("wal", "dump", "--bodies", str(directory))
    assert "body=b'hello'" in bodies.stdout and '"klass":"Klass"' in bodies.stdout
    salvage = beanpod("wal", "verify", "--salvage", str(directory))
    assert salvage.returncode == 0, salvage.stderr
    assert "3 jobs" in salvage.stdout


def test_the_cli_registers_every_decoder_the_server_does() -> None:
    """The decoders registered by loading the server's extensions (as `serve` does
    before a replay) are the ones `beanpod wal` registers: each in a fresh interpreter."""
    show = "from beanpod.core.job import EXT_DECODERS; print(sorted(EXT_DECODERS))"

    def kinds(module: str) -> str:
        code = f"import {module}; {show}"
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, timeout=60).stdout  # fmt: skip

    served = kinds("beanpod.server.extensions")
    assert served.strip() not in ("", "[]")
    assert kinds("beanpod.cli.wal") == served
