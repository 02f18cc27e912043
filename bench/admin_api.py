"""The admin API at scale: `python -m bench.admin_api [--jobs N] [--wal]`.

Buries N jobs (default 100,000) in one tube of a `beanpod serve --http` process, then
measures (1) a page of 100 of them (oldest first, newest first, a page from the middle by
cursor, a body search) and (2) a confirmed bulk kick of all of them, while a probe
connection sends `stats-tube` round trips: the longest round trip during the kick is
the longest any other connection waited. Targets (issue 14): page < 100 ms, kick < 2 s,
no stall > 20 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import threading
import time
from typing import Any

from bench.servers import RunningServer, ServerKind, free_port

TUBE = "bulk"
PIPELINE = 2000  # commands sent before reading their replies


def request(port: int, method: str, path: str, doc: dict[str, Any] | None = None) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        body = None if doc is None else json.dumps(doc).encode()
        conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:200]!r}")
        return json.loads(data)
    finally:
        conn.close()


def read_replies(sock: socket.socket, count: int, buffer: bytearray) -> None:
    """Read `count` CRLF-terminated one-line replies (RESERVED lines carry a body)."""
    while count:
        while b"\r\n" not in buffer:
            buffer += sock.recv(1 << 16)
        line, _, rest = bytes(buffer).partition(b"\r\n")
        if line.startswith(b"RESERVED"):
            size = int(line.split()[2])
            while len(rest) < size + 2:
                rest += sock.recv(1 << 16)
            rest = rest[size + 2 :]
        buffer[:] = rest
        count -= 1


def bury_many(port: int, count: int) -> None:
    """put, reserve, bury `count` jobs, pipelined (reserve hands out the job just put)."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(f"use {TUBE}\r\nwatch {TUBE}\r\nignore default\r\n".encode())
        buffer = bytearray()
        read_replies(sock, 3, buffer)
        first = None
        done = 0
        while done < count:
            batch = min(PIPELINE, count - done)
            puts = b"".join(
                b"put 100 0 60 %d\r\njob %07d\r\n" % (11, done + i) for i in range(batch)
            )
            sock.sendall(puts)
            while b"INSERTED" not in buffer:
                buffer += sock.recv(1 << 16)
            if first is None:
                first = int(bytes(buffer).split(b"INSERTED ")[1].split(b"\r\n")[0])
            read_replies(sock, batch, buffer)
            ids = range(first + done, first + done + batch)
            sock.sendall(b"".join(b"reserve-job %d\r\nbury %d 100\r\n" % (i, i) for i in ids))
            read_replies(sock, 2 * batch, buffer)
            done += batch


def timed(fn: Any, repeat: int = 7) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return times


class Probe(threading.Thread):
    """Round trips of `stats-tube` on its own connection until stopped."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.stop = threading.Event()
        self.rtts: list[float] = []

    def run(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port)) as sock:
            while not self.stop.is_set():
                started = time.perf_counter()
                sock.sendall(f"stats-tube {TUBE}\r\n".encode())
                data = b""
                while not data.endswith(b"\r\n") or data.count(b"\r\n") < 2:
                    data += sock.recv(1 << 16)
                self.rtts.append((time.perf_counter() - started) * 1000)


def describe(name: str, values: list[float]) -> str:
    return (f"{name:<34} min {min(values):7.1f}  median {statistics.median(values):7.1f}  "
            f"max {max(values):7.1f} ms")  # fmt: skip


def run(jobs: int, wal: bool) -> None:
    http_port = free_port()
    flags = ("--http", f"127.0.0.1:{http_port}") + (("-b", "{wal}") if wal else ())
    server = RunningServer(ServerKind.beanpod(), flags, None)
    try:
        started = time.perf_counter()
        bury_many(server.port, jobs)
        print(f"buried {jobs:,} jobs in {time.perf_counter() - started:.1f} s"
              f" ({'WAL on, -f 50' if wal else 'in memory'})")  # fmt: skip
        base = f"/api/v1/tubes/{TUBE}/jobs?state=buried&limit=100"
        middle = request(http_port, "GET", f"{base}&limit=1000")["next_cursor"]
        pages = {
            "page of 100, oldest first": base,
            "page of 100, newest first": f"{base}&order=newest",
            "page of 100 after a cursor": f"{base}&cursor={middle}",
            "page of 100, body search": f"{base}&contains=job%2000",
        }
        for name, path in pages.items():
            print(describe(name, timed(lambda p=path: request(http_port, "GET", p))))
        kick(http_port, server.port, jobs)
    finally:
        server.stop()


def kick(http_port: int, port: int, jobs: int) -> None:
    path = f"/api/v1/tubes/{TUBE}/kick"
    dry = request(http_port, "POST", path, {"state": "buried"})
    probe = Probe(port)
    probe.start()
    time.sleep(1.0)  # the machine's own noise: round trips while the server idles
    idle = list(probe.rtts)
    before = len(idle)
    started = time.perf_counter()
    done = request(http_port, "POST", path, {"state": "buried", "confirm": dry["confirm"]})
    elapsed = time.perf_counter() - started
    during = probe.rtts[before:]
    probe.stop.set()
    probe.join()
    print(f"bulk kick of {done['done']:,} jobs: {elapsed:.2f} s wall ({done['seconds']} s "
          f"in the server); probe round trips during it: {len(during)}, "
          f"max {max(during):.1f} ms, median {statistics.median(during):.2f} ms; idle: "
          f"max {max(idle):.1f} ms, median {statistics.median(idle):.2f} ms")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--wal", action="store_true", help="run the server with -b (WAL on)")
    args = parser.parse_args()
    run(args.jobs, args.wal)


if __name__ == "__main__":
    main()
