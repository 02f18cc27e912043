"""Raw-socket helpers for the load generator.

Replies are not parsed in full on the hot path: a batch of pipelined
commands is answered by a known number of LF-terminated lines (every reply
line ends in CRLF and the job bodies the benchmark uses never contain LF),
so the reader only counts ``\\n`` bytes until the batch is complete and then
checks the reply kind with one ``bytes.count``.
"""

from __future__ import annotations

import socket

HOST = "127.0.0.1"
IO_TIMEOUT = 10.0
RECV_SIZE = 1 << 16


class LoadError(RuntimeError):
    """The server answered something unexpected, closed, or stalled."""


def connect(port: int, timeout: float = IO_TIMEOUT) -> socket.socket:
    sock = socket.create_connection((HOST, port), timeout=timeout)
    _BUFFERS.pop(sock.fileno(), None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(timeout)
    return sock


def recv_lines(sock: socket.socket, lines: int) -> bytes:
    """Read until exactly ``lines`` LF bytes have arrived and return the data.

    Reads go into one preallocated buffer per socket (no per-call allocation).
    ``SO_RCVLOWAT`` is deliberately not used to batch wake-ups: holding replies
    unread delays ACKs, which stalls a server that leaves Nagle on
    (beanstalkd does) but not one that sets TCP_NODELAY, skewing the comparison.

    More data than that means the server sent replies nobody asked for (for
    example an error line followed by something else), which fails loudly.
    """
    buf = _buffer(sock)
    filled = 0
    seen = 0
    try:
        while seen < lines:
            if filled == len(buf):
                buf.extend(bytes(len(buf)))
            with memoryview(buf) as view:
                n = sock.recv_into(view[filled:])
            if not n:
                raise LoadError(
                    f"server closed the connection after {seen}/{lines} reply lines; "
                    f"tail={bytes(buf[max(0, filled - 200) : filled])!r}"
                )
            seen += buf.count(b"\n", filled, filled + n)
            filled += n
    except TimeoutError as exc:
        raise LoadError(
            f"no complete reply within {sock.gettimeout()}s ({seen}/{lines} lines); "
            f"tail={bytes(buf[max(0, filled - 200) : filled])!r}"
        ) from exc
    data = bytes(buf[:filled])
    if seen != lines:
        raise LoadError(f"expected {lines} reply lines, got {seen}; tail={data[-200:]!r}")
    return data


_BUFFERS: dict[int, bytearray] = {}


def _buffer(sock: socket.socket) -> bytearray:
    """The receive buffer of a socket (workers are single-threaded)."""
    buf = _BUFFERS.get(sock.fileno())
    if buf is None:
        buf = _BUFFERS[sock.fileno()] = bytearray(RECV_SIZE)
    return buf


def expect_count(data: bytes, token: bytes, n: int, what: str) -> None:
    got = data.count(token)
    if got != n:
        raise LoadError(f"{what}: expected {n} x {token!r}, got {got}; head={data[:200]!r}")


def command(sock: socket.socket, line: bytes, expect_prefix: bytes) -> bytes:
    """Send one command line and check that its one-line reply starts as expected."""
    sock.sendall(line)
    reply = recv_lines(sock, 1)
    if not reply.startswith(expect_prefix):
        raise LoadError(f"{line.strip()!r}: expected {expect_prefix!r}, got {reply!r}")
    return reply


def put_command(body: bytes, pri: int = 1024, ttr: int = 120) -> bytes:
    return b"put %d 0 %d %d\r\n%s\r\n" % (pri, ttr, len(body), body)


def _tail(chunks: list[bytes]) -> bytes:
    return b"".join(chunks)[-200:]
