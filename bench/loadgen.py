"""Load-generator workers: one process per connection, raw blocking sockets.

Every worker connects, does its setup, waits on the shared start barrier
(``ready()``), runs its timed loop and returns a plain dict:

``ops``   operations completed inside the timed window
``t0/t1`` monotonic start/end of the timed window (seconds)
``cpu``   this process's CPU seconds spent in the window
``lat``   optional per-operation latencies in ns (``array('q')`` bytes)

Hot loops send a whole pipelined batch with one ``sendall`` and count reply
lines (see :mod:`bench.wire`); the reply kind is checked with ``bytes.count``
so a single ``NOT_FOUND``/``OUT_OF_MEMORY``/... fails the cell.
"""

from __future__ import annotations

import os
import re
import select
import time
from array import array
from collections.abc import Callable
from typing import Any

from bench.wire import LoadError, command, connect, expect_count, put_command, recv_lines

Ready = Callable[[], None]
Result = dict[str, Any]

BODY_SIZE = 100
RESERVED_ID = re.compile(rb"RESERVED (\d+) \d+\r\n")
TS_DIGITS = 19  # time.monotonic_ns() zero-padded at the start of round-trip bodies


def _result(ops: int, t0: float, t1: float, cpu0: float, lat: array[int] | None) -> Result:
    return {
        "ops": ops,
        "t0": t0,
        "t1": t1,
        "cpu": time.process_time() - cpu0,
        "lat": lat.tobytes() if lat is not None else None,
    }


def put_worker(
    port: int, ready: Ready, *, d: int, duration: float, latency: bool, tube: bytes = b"default"
) -> Result:
    """Put 100-byte jobs, ``d`` pipelined per batch, for ``duration`` seconds."""
    sock = connect(port)
    if tube != b"default":
        command(sock, b"use " + tube + b"\r\n", b"USING")
    batch = put_command(b"x" * BODY_SIZE) * d
    lat: array[int] | None = array("q") if latency else None
    clock = time.perf_counter_ns
    ops = 0
    ready()
    cpu0 = time.process_time()
    t0 = time.monotonic()
    deadline = clock() + int(duration * 1e9)
    while True:
        start = clock()
        if start >= deadline:
            break
        sock.sendall(batch)
        data = recv_lines(sock, d)
        if lat is not None:
            lat.append(clock() - start)
        expect_count(data, b"INSERTED ", d, "put")
        ops += d
    t1 = time.monotonic()
    sock.close()
    return _result(ops, t0, t1, cpu0, lat)


def fill_worker(
    port: int,
    ready: Ready,
    *,
    count: int,
    duration: float,
    d: int = 256,
    body_size: int = BODY_SIZE,
) -> Result:
    """Fast pipelined loader: put up to ``count`` jobs or stop after ``duration``."""
    sock = connect(port)
    full = put_command(b"x" * body_size) * d
    ops = 0
    ready()
    cpu0 = time.process_time()
    t0 = time.monotonic()
    deadline = t0 + duration
    while ops < count and time.monotonic() < deadline:
        n = min(d, count - ops)
        sock.sendall(full if n == d else put_command(b"x" * body_size) * n)
        expect_count(recv_lines(sock, n), b"INSERTED ", n, "fill put")
        ops += n
    t1 = time.monotonic()
    sock.close()
    return _result(ops, t0, t1, cpu0, None)


def reserve_delete_worker(
    port: int, ready: Ready, *, d: int, duration: float, quota: int, latency: bool
) -> Result:
    """Reserve ``d`` jobs (pipelined), then delete those ``d``; repeat.

    At most ``d`` requests are in flight.  ``reserve-with-timeout 0`` is used
    so an unexpectedly empty queue shows up as ``TIMED_OUT`` (an error) instead
    of a hang.  With ``latency`` the pair time (reserve sent to DELETED read)
    is recorded per batch, which at d=1 is per job.
    """
    sock = connect(port)
    reserve = b"reserve-with-timeout 0\r\n"
    full = reserve * d
    lat: array[int] | None = array("q") if latency else None
    clock = time.perf_counter_ns
    ops = 0
    ready()
    cpu0 = time.process_time()
    t0 = time.monotonic()
    deadline = clock() + int(duration * 1e9)
    while ops < quota:
        start = clock()
        if start >= deadline:
            break
        n = min(d, quota - ops)
        sock.sendall(full if n == d else reserve * n)
        data = recv_lines(sock, 2 * n)  # "RESERVED id bytes\r\n" + body + "\r\n"
        ids = RESERVED_ID.findall(data)
        if len(ids) != n:
            raise LoadError(f"reserve: expected {n} RESERVED, got {len(ids)}; head={data[:200]!r}")
        sock.sendall(b"".join([b"delete " + i + b"\r\n" for i in ids]))
        expect_count(recv_lines(sock, n), b"DELETED\r\n", n, "delete")
        if lat is not None:
            lat.append(clock() - start)
        ops += n
    t1 = time.monotonic()
    sock.close()
    return _result(ops, t0, t1, cpu0, lat)


def producer_worker(
    port: int, ready: Ready, *, tube: bytes, d: int, window: int, duration: float, credit_fd: int
) -> Result:
    """Round-trip producer: put batches of ``d`` jobs stamped with monotonic_ns.

    It keeps at most ``window`` jobs outstanding (put but not yet reserved by
    its consumer); the consumer hands credits back through a pipe, one byte
    per reserved job, so the queue never grows without bound.
    """
    sock = connect(port)
    command(sock, b"use " + tube + b"\r\n", b"USING")
    pad = b"p" * (BODY_SIZE - TS_DIGITS)
    credits = window
    ops = 0
    ready()
    cpu0 = time.process_time()
    t0 = time.monotonic()
    deadline = t0 + duration
    while True:
        while credits < d:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            readable, _, _ = select.select([credit_fd], [], [], min(left, 0.1))
            if readable:
                credits += len(os.read(credit_fd, 1 << 16))
        if credits < d or time.monotonic() >= deadline:
            break
        body = b"%019d" % time.monotonic_ns() + pad
        sock.sendall(put_command(body) * d)
        expect_count(recv_lines(sock, d), b"INSERTED ", d, "round-trip put")
        credits -= d
        ops += d
    t1 = time.monotonic()
    sock.close()
    return _result(ops, t0, t1, cpu0, None)


def consumer_worker(
    port: int, ready: Ready, *, tube: bytes, d: int, duration: float, credit_fd: int
) -> Result:
    """Round-trip consumer: keep ``d`` reserves in flight, delete what arrives.

    Replies are parsed in order (this is the one place that needs real
    parsing: job ids and the send timestamp in the body).  Latency is
    ``monotonic_ns()`` when the RESERVED reply was read minus the producer's
    timestamp.  ``ops`` counts jobs reserved inside the window.
    """
    sock = connect(port)
    command(sock, b"watch " + tube + b"\r\n", b"WATCHING")
    command(sock, b"ignore default\r\n", b"WATCHING")
    sock.settimeout(0.1)
    reserve = b"reserve-with-timeout 1\r\n"
    lat: array[int] = array("q")
    buf = b""
    ops = 0
    ready()
    cpu0 = time.process_time()
    t0 = time.monotonic()
    deadline_ns = time.monotonic_ns() + int(duration * 1e9)
    sock.sendall(reserve * d)
    while True:
        try:
            chunk = sock.recv(1 << 18)
        except TimeoutError:
            chunk = None
        now = time.monotonic_ns()
        if now >= deadline_ns:
            break
        if chunk is None:
            continue
        if not chunk:
            raise LoadError("server closed the connection (consumer)")
        buf += chunk
        out: list[bytes] = []
        got = 0
        pos = 0
        while True:
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                break
            line = buf[pos:eol]
            if line.startswith(b"RESERVED "):
                _, jid, size = line.split(b" ")
                end = eol + 2 + int(size) + 2
                if len(buf) < end:
                    break
                lat.append(now - int(buf[eol + 2 : eol + 2 + TS_DIGITS]))
                out.append(b"delete " + jid + b"\r\n" + reserve)
                got += 1
                pos = end
            elif line == b"DELETED":
                pos = eol + 2
            elif line == b"TIMED_OUT":
                out.append(reserve)
                pos = eol + 2
            else:
                raise LoadError(f"consumer: unexpected reply {line[:200]!r}")
        buf = buf[pos:]
        if got:
            os.write(credit_fd, b"c" * got)
            ops += got
        if out:
            sock.sendall(b"".join(out))
    t1 = time.monotonic()
    sock.close()
    return _result(ops, t0, t1, cpu0, lat)
