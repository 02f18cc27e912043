"""Every way an admin command can fail is one line on stderr, no traceback, and the exit
status docs/cli.md gives it: the CLI runs as a subprocess against a real `beanpod serve`
(a stopped one for timeouts; a socket of the test's only for replies no server sends)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from beanpod.cli.admin_errors import (
    EXIT_BAD_NAME,
    EXIT_DRAINING,
    EXIT_NO_MEMORY,
    EXIT_NOT_FOUND,
    EXIT_PROTOCOL,
    EXIT_TIMEOUT,
    EXIT_TOO_BIG,
    EXIT_UNREACHABLE,
)
from tests.support.servers import SubprocessServer

QUIET = ("--http", "off")  # no fixed HTTP port: tests run side by side


def cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "beanpod", *args], input=stdin,
                          capture_output=True, timeout=60)  # fmt: skip
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


def fails(result: subprocess.CompletedProcess[str], status: int, text: str) -> str:
    """The one line on stderr, after checking it, the status and that there is no
    traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.returncode == status, (result.returncode, result.stderr)
    assert text in result.stderr, result.stderr
    return result.stderr


@pytest.fixture
def server() -> Iterator[SubprocessServer]:
    started = SubprocessServer(["-z", "100", "--max-jobs-per-tube", "3", *QUIET]).start()
    yield started
    started.stop()


def at(server: SubprocessServer) -> tuple[str, ...]:
    return ("-p", str(server.port))


BAD_NAMES = ("bad tube!", "-dash", "x" * 201, "tübe")
ALLOWED = "1-200 bytes of letters, digits and -+/;.$_(), not starting with -"


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_bad_tube_name_says_which_names_are_allowed(server: SubprocessServer, name: str) -> None:
    put = cli("put", *at(server), "--", name, "-", stdin=b"x")  # -- lets a name start with -
    fails(put, EXIT_BAD_NAME, f"{name!r} is not")
    assert ALLOWED in fails(cli("stats", *at(server), "--", name), EXIT_BAD_NAME, "tube name")


def test_every_command_taking_a_tube_checks_its_name(server: SubprocessServer) -> None:
    for args in (["kick", "a b"], ["pause", "a b", "1"], ["drain", "a b"],
                 ["peek", "--ready", "a b"], ["put", "a b", "--lines"]):  # fmt: skip
        fails(cli(*args, *at(server)), EXIT_BAD_NAME, "tube name 'a b' is not allowed")
    assert cli("tubes", *at(server)).stdout.split() == ["tube", *TUBE_HEADER, "default",
                                                        *["0"] * 7]  # fmt: skip


TUBE_HEADER = ["ready", "reserved", "delayed", "buried", "urgent", "waiting", "pause"]


def test_a_job_over_the_max_size_names_both_sizes_and_the_flag(server: SubprocessServer) -> None:
    result = cli("put", "big", "-", *at(server), stdin=b"x" * 150)
    fails(result, EXIT_TOO_BIG, "Error: job is 150 bytes; the server takes at most 100 (serve -z)")
    assert result.stdout == ""


def test_put_lines_reports_the_jobs_put_before_the_one_too_big(server: SubprocessServer) -> None:
    result = cli("put", "big", "--lines", *at(server), stdin=b"a\n" + b"y" * 101 + b"\nc\n")
    fails(result, EXIT_TOO_BIG, "line 2: job is 101 bytes; the server takes at most 100")
    assert result.stdout == "inserted 1\n"
    assert "current-jobs-ready: 1" in " ".join(cli("stats", "big", *at(server)).stdout.split())


def test_out_of_memory_says_how_to_make_room(server: SubprocessServer) -> None:
    cli("put", "full", "--lines", *at(server), stdin=b"1\n2\n3\n")
    result = cli("put", "full", "-", *at(server), stdin=b"4")
    fails(result, EXIT_NO_MEMORY, "no room for the job (OUT_OF_MEMORY): delete or drain jobs")


def test_a_draining_server_says_puts_are_refused_until_restart(server: SubprocessServer) -> None:
    server.signal(signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while "draining: true" not in " ".join(cli("stats", *at(server)).stdout.split()):
        assert time.monotonic() < deadline, "the server never reported draining"
        time.sleep(0.05)
    result = cli("put", "jobs", "-", *at(server), stdin=b"x")
    fails(result, EXIT_DRAINING, "the server is draining (it got SIGUSR1): it refuses new jobs")
    assert cli("stats", *at(server)).returncode == 0  # everything but puts still works


def test_an_unknown_tube_is_the_same_line_and_status_for_every_command(
    server: SubprocessServer,
) -> None:
    for args in (["stats", "nope"], ["kick", "nope"], ["pause", "nope", "5"], ["drain", "nope"]):
        assert fails(cli(*args, *at(server)), EXIT_NOT_FOUND, "") == "Error: no tube 'nope'\n"
    assert "nope" not in cli("tubes", *at(server)).stdout  # kick/drain did not create it


def test_unknown_jobs_are_not_found(server: SubprocessServer) -> None:
    fails(cli("peek", "7", *at(server)), EXIT_NOT_FOUND, "Error: no job 7")
    fails(cli("peek", "--buried", "default", *at(server)), EXIT_NOT_FOUND, "no buried job")
    result = cli("delete", "7", *at(server))
    assert (result.returncode, result.stdout) == (EXIT_NOT_FOUND, "deleted 0, not found: 7\n")


def test_no_server_names_the_address_and_the_flags() -> None:
    with socket.socket() as unused:  # a port with nothing listening
        unused.bind(("127.0.0.1", 0))
        port = str(unused.getsockname()[1])
    for command in (["stats"], ["tubes"], ["kick", "t"], ["top", "-n", "1"], ["delete", "1"]):
        line = fails(cli(*command, "-p", port), EXIT_UNREACHABLE, f"to 127.0.0.1:{port}")
        assert "connection refused" in line and "-H HOST -p PORT" in line


def test_an_unknown_host_is_one_line() -> None:
    line = fails(cli("stats", "-H", "no-such-host.invalid"), EXIT_UNREACHABLE, "unknown host")
    assert "no-such-host.invalid:11300" in line


def test_a_server_that_closes_the_connection() -> None:
    server = SubprocessServer(["--max-connections", "1", *QUIET]).start()
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as holder:
            holder.sendall(b"use held\r\n")
            assert holder.recv(100) == b"USING held\r\n"  # the one connection allowed
            result = cli("stats", *at(server))
        fails(result, EXIT_UNREACHABLE, f"the server at 127.0.0.1:{server.port} closed")
    finally:
        server.stop()


def test_a_server_that_does_not_answer_times_out(server: SubprocessServer) -> None:
    server.signal(signal.SIGSTOP)  # the kernel still accepts; nothing answers
    try:
        result = cli("stats", "--timeout", "0.5", *at(server))
    finally:
        server.signal(signal.SIGCONT)
    fails(result, EXIT_TIMEOUT, "did not answer within 0.5 s (--timeout)")
    assert cli("stats", *at(server)).returncode == 0


@pytest.mark.parametrize(
    ("reply", "text"),
    [
        (b"INTERNAL_ERROR\r\n", "failed (INTERNAL_ERROR); its log says why"),
        (b"UNKNOWN_COMMAND\r\n", "answered UNKNOWN_COMMAND; is it a beanstalkd 1.12 server?"),
        (b"HTTP/1.1 400 Bad Request\r\n", "sent 'HTTP/1.1 400 Bad Request', not a beanstalkd"),
        (b"OK 40\r\n---\nversion: 1", "sent a malformed or truncated reply"),
        (b"OK 4x\r\n", "sent a malformed or truncated reply"),
    ],
)
def test_a_reply_the_client_cannot_use(reply: bytes, text: str) -> None:
    with one_reply_server(reply) as port:
        fails(cli("stats", "-p", str(port)), EXIT_PROTOCOL, text)


class one_reply_server:
    """A listener that answers the first command line with `reply`, then closes."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> int:
        self.thread.start()
        return int(self.listener.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.thread.join(timeout=30)
        self.listener.close()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn, conn.makefile("rb") as reader:
            reader.readline()
            conn.sendall(self.reply)
