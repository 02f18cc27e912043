"""Who may connect: the allow-list (closed before any byte is read), protected mode,
unix sockets with a mode and group (another uid refused), and the audit log."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import greenstalk
import pytest

from beanpod.server.app import App
from beanpod.server.config import ServerConfig
from beanpod.server.edge.settings import EdgeSettings
from tests.support.servers import InProcessServer
from tests.support.wire_client import RawClient
from tests.support.workq_server import WorkqServer, new_id


class UnixServer(InProcessServer):
    def __init__(self, path: str, **edge: object) -> None:
        super().__init__()
        self.path = path
        self.config = ServerConfig(address=f"unix:{path}", workq_port=None, check_moves=True,
                                   edge=EdgeSettings(**edge))  # type: ignore[arg-type]  # fmt: skip

    def start(self) -> UnixServer:
        self._thread.start()
        self.app = self.call(App, self.config)
        self.run(self.app.start(install_signals=False))
        return self


def test_denied_address_is_closed_before_any_byte() -> None:
    srv = InProcessServer(edge=EdgeSettings(allow=("10.0.0.0/8", "::1/128"))).start()
    try:
        sock = srv.connect()
        with contextlib.suppress(OSError):  # already reset: fine
            sock.sendall(b"put 0 0 60 2\r\nhi\r\n")
        sock.settimeout(10)
        with contextlib.suppress(ConnectionResetError):
            assert sock.recv(64) == b""
        sock.close()
        assert srv.app is not None
        assert srv.call(lambda: srv.app.edge.gate.refused_address) == 1  # type: ignore[union-attr]
        assert srv.call(lambda: len(srv.app.engine.jobs)) == 0  # type: ignore[union-attr]
    finally:
        srv.stop()


def test_allowed_address_is_served() -> None:
    srv = InProcessServer(edge=EdgeSettings(allow=("127.0.0.0/8",))).start()
    try:
        client = RawClient(srv.connect())
        assert client.cmd(b"put 0 0 60 2\r\nhi\r\n") == b"INSERTED 1\r\n"
        client.close()
    finally:
        srv.stop()


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    """Start `beanpod serve` expecting it to refuse at once."""
    cmd = [sys.executable, "-m", "beanpod", "serve", "-p", "0", "--no-uvloop", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30)


def test_protected_mode_refuses_a_public_plain_listener() -> None:
    done = serve("-l", "0.0.0.0")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "refusing to listen on 0.0.0.0 in plain TCP" in lines[0]
    assert "--allow" in lines[0] and "--insecure-public" in lines[0]


def test_protected_mode_needs_tls_files_together() -> None:
    done = serve("--tls-listen", "127.0.0.1:0")
    assert done.returncode == 2
    assert "--tls-cert" in done.stderr


def test_unix_socket_mode_and_greenstalk() -> None:
    directory = tempfile.mkdtemp(prefix="beanpod-unix-")  # reachable by another uid
    os.chmod(directory, 0o755)
    path = os.path.join(directory, "beanpod.sock")
    srv = UnixServer(path, unix_mode=0o660, unix_group="0").start()
    try:
        assert os.stat(path).st_mode & 0o777 == 0o660
        with greenstalk.Client(path) as client:
            job_id = client.put("over a unix socket")
            assert client.reserve(timeout=5).id == job_id
        if os.geteuid() != 0:
            pytest.skip("refusing another uid needs root to become one")
        assert other_uid_connects(path) == "PermissionError"
        os.chmod(path, 0o666)
        assert other_uid_connects(path) == "connected"
    finally:
        srv.stop()
        shutil.rmtree(directory, ignore_errors=True)


def other_uid_connects(path: str) -> str:
    """Connect to `path` as uid/gid 65534 (nobody) in a child process."""
    code = (
        "import os, socket\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        f"    s.connect({path!r}); print('connected')\n"
        "except OSError as e:\n"
        "    print(type(e).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=30, check=True)  # fmt: skip
    return done.stdout.strip()


def test_audit_log_records_admin_verbs_and_refusals(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    srv = InProcessServer(edge=EdgeSettings(audit_log=str(log), max_connections=1)).start()
    try:
        admin = RawClient(srv.connect())
        assert admin.cmd(b"put 0 0 60 2\r\nhi\r\n") == b"INSERTED 1\r\n"
        assert admin.cmd(b"reserve\r\n").startswith(b"RESERVED 1")
        assert admin.cmd(b"bury 1 0\r\n") == b"BURIED\r\n"
        assert admin.cmd(b"kick 5\r\n") == b"KICKED 1\r\n"
        assert admin.cmd(b"pause-tube default 0\r\n") == b"PAUSED\r\n"
        extra = srv.connect()
        extra.settimeout(10)
        assert extra.recv(1) == b""
        extra.close()
        assert srv.app is not None
        srv.call(lambda: srv.app.edge.audit.record("http-delete", job=1, peer="x"))  # type: ignore[union-attr]
        admin.close()
    finally:
        srv.stop()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["action"] for line in lines] == ["kick", "pause-tube", "refused", "http-delete"]
    assert lines[0]["kicked"] == 1 and lines[1]["tube"] == "default"
    assert lines[2]["reason"] == "max-connections reached"
    assert all(isinstance(line["ts"], float) for line in lines)


def test_audit_log_records_deleting_a_job_another_connection_leased(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    srv = WorkqServer(workq_port=0, edge=EdgeSettings(audit_log=str(log))).start()
    try:
        worker, admin = srv.client(), srv.client()
        job = new_id()
        admin.add(job, "q", ttr=60000, ttl=60000, payload=b"x")
        assert worker.lease("q", 1000).id == job
        admin.delete(job)
    finally:
        worker.close()
        admin.close()
        srv.stop()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(line["action"], line["job"]) for line in lines] == [("delete-reserved", job)]


def qless(client: RawClient, fn: str, *args: object) -> bytes:
    body = json.dumps({"fn": fn, "args": list(args)}).encode()
    return client.cmd(b"qless %d\r\n%s\r\n" % (len(body), body))


def test_audit_log_records_cancelling_a_job_another_worker_holds(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    srv = InProcessServer(edge=EdgeSettings(audit_log=str(log))).start()
    try:
        worker, admin = RawClient(srv.connect()), RawClient(srv.connect())
        assert qless(admin, "put", "w0", "q", "j1", "K", "{}", 0).startswith(b"OK")
        assert qless(admin, "put", "w0", "q", "j2", "K", "{}", 0).startswith(b"OK")
        assert b'"j1"' in qless(worker, "pop", "q", "w1", 1)
        assert qless(admin, "cancel", "j1", "j2").startswith(b"OK")  # j2 was not held
        worker.close()
        admin.close()
    finally:
        srv.stop()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(line["action"], line["jid"]) for line in lines] == [("delete-reserved", "j1")]


def test_peer_uid_is_known(tmp_path: Path) -> None:
    from beanpod.server.edge.gate import peer_uid

    a, b = socket.socketpair(socket.AF_UNIX)
    assert peer_uid(a) == os.getuid()
    a.close()
    b.close()


def test_edge_flags_from_the_command_line() -> None:
    from tests.support.servers import SubprocessServer

    flags = ["--max-memory", "100K", "--max-connections", "5", "--allow", "127.0.0.0/8",
             "--request-timeout", "5"]  # fmt: skip
    srv = SubprocessServer(["--no-uvloop", *flags]).start()
    try:
        client = RawClient(socket.create_connection(("127.0.0.1", srv.port), timeout=10))
        body = b"y" * 10_000
        replies = [client.cmd(b"put 0 0 60 %d\r\n%s\r\n" % (len(body), body)) for _ in range(12)]
        assert replies.count(b"OUT_OF_MEMORY\r\n") >= 2 and replies[0] == b"INSERTED 1\r\n"
        stats = client.cmd(b"stats\r\n")
        assert b"\nmax-memory: 102400\n" in stats and b"\nmax-connections: 5\n" in stats
        client.close()
    finally:
        srv.stop()


def test_unusable_tls_files_and_audit_log_refuse_to_start(tmp_path: Path) -> None:
    done = serve("--tls-listen", "127.0.0.1:0", "--tls-cert", str(tmp_path / "no.pem"),
                 "--tls-key", str(tmp_path / "no.key"))  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot load the TLS certificate" in lines[0], lines
    done = serve("--audit-log", str(tmp_path / "missing-dir" / "audit.jsonl"))
    assert done.returncode == 2 and "cannot open the audit log" in done.stderr


def test_denied_address_on_the_served_event_loop() -> None:
    """`beanpod serve` (uvloop when installed) closes a denied peer without a reply."""
    from tests.support.servers import SubprocessServer

    srv = SubprocessServer(["--allow", "10.0.0.0/8", "--max-connections", "3"]).start()
    try:
        for _ in range(5):  # more than --max-connections: each refused by address alone
            sock = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            with contextlib.suppress(OSError):
                sock.sendall(b"put 0 0 60 2\r\nhi\r\nstats\r\n")
            with contextlib.suppress(ConnectionResetError):
                assert sock.recv(64) == b""
            sock.close()
    finally:
        srv.stop()
