"""`beanpod serve` opens its ports before its heavy imports and hands those sockets to the
server: a client that connects at once is accepted, then answered (TCP and UNIX), and
that answer waits for neither the HTTP listener's aiohttp nor the qless and Workq
extensions, which load after beanstalkd serves; the Workq and HTTP ports accept from the
same moment as the beanstalkd one."""

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

from beanpod.protocols.workq import wire as w
from tests.support.workq_server import new_id

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
    with sock:
        return ask_on(sock)


def ask_on(sock: socket.socket) -> bytes:
    with sock.makefile("rb") as replies:
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
    argv = [
        *LAUNCHERS[launcher],
        "serve",
        "-l",
        "127.0.0.1",
        "-p",
        str(port),
        "--workq-port",
        "off",
    ]
    with serving(argv) as proc:
        assert ask(connect_soon(socket.AF_INET, ("127.0.0.1", port))) == b"USING default\r\n"
        assert proc.stderr is not None
        assert f"listening on 127.0.0.1:{port}" in proc.stderr.readline()


def test_an_early_connection_is_answered_over_a_unix_socket(tmp_path: Path) -> None:
    path = tmp_path / "beanpod.sock"
    with socket.socket(socket.AF_UNIX) as stale:  # a file left by an earlier server
        stale.bind(str(path))
    argv = [sys.executable, "-m", "beanpod", "serve", "-l", f"unix:{path}", "--workq-port", "off"]
    with serving(argv):
        assert ask(connect_soon(socket.AF_UNIX, str(path))) == b"USING default\r\n"


# `beanpod serve` in a process whose imports of aiohttp (the HTTP listener) and of the
# qless extension wait until the test creates RELEASE: the first reply can only come if
# serving beanstalkd needs neither of them.
HOLD = """
import importlib.abc, os, sys, time
release = sys.argv[1]
class Hold(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        while name in ("aiohttp", "beanpod.core.qless") and not os.path.exists(release):
            time.sleep(0.005)
sys.meta_path.insert(0, Hold())
sys.argv = ["beanpod", "serve", *sys.argv[2:]]
from beanpod.cli import main
main()
"""


def qless_request(sock: socket.socket, fn: str) -> bytes:
    body = f'{{"fn": "{fn}", "args": []}}'.encode()
    sock.sendall(b"qless %d\r\n%s\r\n" % (len(body), body))
    return sock.recv(4096)


def test_the_first_reply_does_not_wait_for_aiohttp_or_qless(tmp_path: Path) -> None:
    release, port, http_port = tmp_path / "release", free_port(), free_port()
    argv = [sys.executable, "-c", HOLD, str(release), "-l", "127.0.0.1", "-p", str(port),
            "--workq-port", "off", "--http", f"127.0.0.1:{http_port}"]  # fmt: skip
    with serving(argv) as proc:
        sock = connect_soon(socket.AF_INET, ("127.0.0.1", port))
        sock.settimeout(GIVE_UP_S)
        assert ask_on(sock) == b"USING default\r\n"  # served, both imports still held
        release.touch()
        assert qless_request(sock, "queues") == b"OK 2\r\n[]\r\n"
        sock.close()
        assert proc.stderr is not None
        assert "(HTTP)" in "".join(proc.stderr.readline() for _ in range(2))


def test_a_qless_request_first_loads_the_extension_itself(tmp_path: Path) -> None:
    """A qless request that comes before the server has loaded its extensions waits for
    them (here: for the held import) and is answered."""
    release, port = tmp_path / "release", free_port()
    argv = [sys.executable, "-c", HOLD, str(release), "-l", "127.0.0.1", "-p", str(port),
            "--workq-port", "off", "--http", "off"]  # fmt: skip
    with serving(argv):
        sock = connect_soon(socket.AF_INET, ("127.0.0.1", port))
        sock.settimeout(GIVE_UP_S)
        assert ask_on(sock) == b"USING default\r\n"
        body = b'{"fn": "queues", "args": []}'
        sock.sendall(b"qless %d\r\n%s\r\n" % (len(body), body))
        time.sleep(0.2)  # the request is read and waits on the held import
        release.touch()
        assert sock.recv(4096) == b"OK 2\r\n[]\r\n"
        sock.close()


def test_serving_beanstalkd_imports_no_extension_or_web_module() -> None:
    """What `beanpod serve` imports before it answers: no aiohttp, web listener, qless,
    Workq, WAL or event-log module (they load after, or with their options)."""
    probe = (
        "import sys, beanpod.cli.serve, beanpod.server.app; "
        "print(' '.join(m for m in sys.modules if m.split('.')[0] == 'aiohttp' "
        "or m.startswith(('beanpod.web.listener', 'beanpod.core.qless', 'beanpod.core.workq', "
        "'beanpod.server.workq', 'beanpod.server.extensions', 'beanpod.storage', "
        "'beanpod.events'))))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(SRC), os.environ.get("PYTHONPATH")) if p)}  # fmt: skip
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    assert out.split() == []


def test_workq_and_http_accept_from_the_moment_beanstalkd_does(tmp_path: Path) -> None:
    """Once the beanstalkd port accepts, so do Workq's and HTTP's - although their modules
    are still held back from loading - and both answer once loaded."""
    release, port, workq_port, http_port = tmp_path / "release", *(free_port() for _ in "abc")
    argv = [sys.executable, "-c", HOLD, str(release), "-l", "127.0.0.1", "-p", str(port),
            "--workq-port", str(workq_port), "--http", f"127.0.0.1:{http_port}"]  # fmt: skip
    with serving(argv):
        connect_soon(socket.AF_INET, ("127.0.0.1", port)).close()
        # No retry: a refused connection fails the test.
        workq = socket.create_connection(("127.0.0.1", workq_port), timeout=GIVE_UP_S)
        http = socket.create_connection(("127.0.0.1", http_port), timeout=GIVE_UP_S)
        workq.sendall(b"add %s q 1000 1000 0\r\n\r\n" % new_id().encode())
        http.sendall(b"GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n")
        release.touch()
        with workq, http:
            assert workq.recv(64) == w.OK
            assert http.makefile("rb").read().split(b"\r\n", 1)[0].endswith(b" 200 OK")
