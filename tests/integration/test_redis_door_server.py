"""`beanpod serve --redis-port`: off by default, AUTH with --redis-password-file, refused
on a public address without --allow, FLUSHDB refused on a server not started for tests,
and refusals byte for byte as redis-server 7 words them (when one is installed)."""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.support.servers import SubprocessServer


def cmd(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


def ask(port: int, data: bytes) -> bytes:
    """Send `data` on a fresh connection; everything answered before it goes quiet."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        sock.settimeout(0.3)
        out = b""
        with contextlib.suppress(TimeoutError):
            while chunk := sock.recv(65536):
                out += chunk
        return out


def closed(sock: socket.socket) -> bool:
    """The server closed `sock` (an abort arrives as a reset)."""
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True


def test_off_by_default() -> None:
    server = SubprocessServer(["--http", "off"]).start()
    try:
        with pytest.raises(RuntimeError, match="no Redis listener"):
            server.listener_port("Redis", timeout=1)
    finally:
        server.stop()


def test_auth_with_a_password_file(tmp_path: Path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("s3cret\n")
    server = SubprocessServer(["--http", "off", "--redis-port", "0",
                               "--redis-password-file", str(secret)]).start()  # fmt: skip
    try:
        port = server.listener_port("Redis")
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=port, protocol=3).ping()
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=port, password="wrong").ping()
        assert redis.Redis(port=port, password="s3cret", protocol=3).ping()
        assert redis.Redis(port=port, password="s3cret", protocol=2).ping()
        flush = ask(port, cmd(b"AUTH", b"s3cret") + cmd(b"FLUSHDB"))
        assert flush.startswith(b"+OK\r\n-ERR FLUSHDB is refused")
    finally:
        server.stop()


def test_a_public_door_needs_an_allow_list() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "beanpod", "serve", "-p", "0", "--http", "off",
         "--redis-port", "0", "--redis-listen", "0.0.0.0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0" in done.stderr


@pytest.fixture(scope="module")
def reference() -> Iterator[int]:
    """redis-server 7 on a free loopback port, no persistence."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL)  # fmt: skip
    try:
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            subprocess.run(["sleep", "0.02"], check=True)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


SAME = [
    cmd(b"FOO", b"a", b"b"), cmd(b"FOO"), cmd(b"NOPE", b"x" * 100, b"y" * 100),
    cmd(b"ZSCORE", b"k"), cmd(b"PING"), cmd(b"PING", b"hi"), cmd(b"SELECT", b"0"),
    cmd(b"SELECT", b"99"), cmd(b"SELECT", b"a"), cmd(b"HELLO", b"4"), cmd(b"HELLO", b"a"),
    cmd(b"EVALSHA", b"abc", b"0"), cmd(b"SCRIPT", b"FOO"), cmd(b"SCRIPT", b"LOAD"),
    cmd(b"EXEC"), cmd(b"DISCARD"), cmd(b"MULTI") + cmd(b"MULTI"),
    cmd(b"MULTI") + cmd(b"ZCARD") + cmd(b"EXEC"),
    cmd(b"MULTI") + cmd(b"ZCARD", b"ql:q:x-work") + cmd(b"EXEC"),
    cmd(b"ZSCORE", b"ql:q:x-recur", b"jid"), cmd(b"AUTH", b"x"),
    cmd(b"SUBSCRIBE", b"a", b"b") + cmd(b"PING") + cmd(b"PUBLISH", b"a", b"x")
    + cmd(b"UNSUBSCRIBE", b"a") + cmd(b"UNSUBSCRIBE", b"b"),
    cmd(b"HELLO", b"3", b"AUTH", b"a"), cmd(b"RPUSH", b"l", b"1") + cmd(b"BRPOP", b"l", b"0"),
    cmd(b"BRPOP", b"nothing", b"0.1"), cmd(b"BRPOP", b"l", b"-1"), cmd(b"KEYS", b"*"),
    cmd(b"PUBLISH", b"c", b"m"), cmd(b"EVAL", b"return 1", b"-1"),
    cmd(b"EVALSHA", b"abc", b"2", b"k"), cmd(b"QUIT"),
    b"*a\r\n", b"*1\r\n:5\r\n", b"*1\r\n*1\r\n$1\r\na\r\n", b"*1\r\n$99999999999\r\n",
    b"*99999999999\r\n", b"*2\r\n$-5\r\n",
]  # fmt: skip


@pytest.fixture(scope="module")
def door() -> Iterator[int]:
    server = SubprocessServer(["--http", "off", "--redis-port", "0"]).start()
    try:
        yield server.listener_port("Redis")
    finally:
        server.stop()


@pytest.mark.parametrize("wire", SAME, ids=lambda w: repr(w[:40]))
def test_replies_as_redis_server_gives_them(reference: int, door: int, wire: bytes) -> None:
    assert ask(door, wire) == ask(reference, wire)


def test_request_and_idle_timeouts_cover_the_door() -> None:
    """The edge's watchdog sweeps the door's connections as the others': a request cut
    short past --request-timeout, or a silence past --idle-timeout, closes it; a
    subscribed connection is spared the idle timeout, as Redis spares it."""
    server = SubprocessServer(["--http", "off", "--redis-port", "0", "--request-timeout",
                               "0.4", "--idle-timeout", "0.8"]).start()  # fmt: skip
    try:
        port = server.listener_port("Redis")
        with socket.create_connection(("127.0.0.1", port), timeout=10) as cut, \
                socket.create_connection(("127.0.0.1", port), timeout=10) as idle, \
                socket.create_connection(("127.0.0.1", port), timeout=10) as sub:  # fmt: skip
            sub.sendall(cmd(b"SUBSCRIBE", b"ql:log"))
            assert sub.recv(100).startswith(b"*3\r\n$9\r\nsubscribe")
            cut.sendall(b"*1\r\n$4\r\nPI")
            idle.sendall(cmd(b"PING"))
            assert idle.recv(100) == b"+PONG\r\n"
            assert closed(cut)  # unanswered
            assert closed(idle)
            sub.sendall(cmd(b"PING"))  # a subscriber is never idle, as in Redis
            assert sub.recv(100) == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
        assert redis.Redis(port=port, protocol=3).ping()
        assert any("closing connection: request" in line for line in server.log)
    finally:
        server.stop()


def test_draining_refuses_new_jobs_through_the_door() -> None:
    server = SubprocessServer(["--http", "off", "--redis-port", "0"]).start()
    try:
        port = server.listener_port("Redis")
        put = cmd(b"EVALSHA", b"506e105128361dc90bc0ca1a33baac8ab4f2895a", b"0", b"put", b"1",
                  b"w", b"q", b"j1", b"K", b"{}", b"0")  # fmt: skip
        assert ask(port, put) == b"$2\r\nj1\r\n"
        server.signal(signal.SIGUSR1)
        for _ in range(100):  # the signal is handled on the server's loop
            refused = ask(port, put.replace(b"j1", b"j2"))
            if refused != b"$2\r\nj2\r\n":
                break
        assert refused.startswith(b"-ERR user_script:1: Put(): the server is draining")
        length = cmd(b"EVALSHA", b"506e105128361dc90bc0ca1a33baac8ab4f2895a", b"0", b"length",
                     b"1", b"q")  # fmt: skip
        assert ask(port, length) in (b":1\r\n", b":2\r\n")  # j2 only if put before the signal
    finally:
        server.stop()
