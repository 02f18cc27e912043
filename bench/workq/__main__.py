"""Workq benchmark: add -> lease -> complete throughput and `run` latency.

    python -m bench.workq [--jobs N] [--conns C] [--depth D] [--runs R] [--json PATH]

Starts `beanpod serve -p 0` (Workq on a free port) in a subprocess and drives it from
this process with asyncio (uvloop when installed). Cells:

Each throughput cell also reports the server's CPU time per cycle (from /proc), which
is steadier than wall-clock throughput on a busy machine.

- seq-1conn: one connection, add, lease, complete, each waiting for its reply.
- pipelined: one connection, batches of D adds, then D leases, then D completes.
- many-conns: C connections each running seq-1conn's loop concurrently.
- beanstalkd pipelined: the same server's beanstalkd dialect, put/reserve/delete in
  batches of D (a same-machine reference for the Workq figures).
- run-latency: one worker leasing and completing; one client issuing sequential `run`s;
  latency percentiles of `run` (round trip through the worker).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORKQ_LINE = re.compile(r"listening on (\S+):(\d+) \(Workq protocol\)")
BEANSTALKD_LINE = re.compile(r"listening on (\S+):(\d+) \(beanstalkd protocol\)")
PAYLOAD = b"x" * 100


def start_server() -> tuple[subprocess.Popen[str], int, int]:
    cmd = [sys.executable, "-m", "beanpod", "serve", "-l", "127.0.0.1", "-p", "0"]
    env = {"BEANPOD_HTTP": "off", **os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    deadline = time.monotonic() + 15
    beanstalkd = 0
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if m := BEANSTALKD_LINE.search(line):
            beanstalkd = int(m[2])
        if m := WORKQ_LINE.search(line):
            return proc, int(m[2]), beanstalkd
    proc.kill()
    raise RuntimeError("beanpod did not start a Workq listener")


class Conn:
    """A minimal pipelining Workq connection over asyncio streams."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.r, self.w = reader, writer

    @classmethod
    async def open(cls, port: int) -> Conn:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def ok(self, n: int = 1) -> None:
        for _ in range(n):
            line = await self.r.readline()
            assert line == b"+OK\r\n", line

    async def block(self) -> bytes:
        """`+OK 1` then `<fields...> <size>` and the block; returns the first field."""
        head = await self.r.readline()
        assert head == b"+OK 1\r\n", head
        fields = (await self.r.readline()).split()
        await self.r.readexactly(int(fields[-1]) + 2)
        return fields[0]

    def send(self, data: bytes) -> None:
        self.w.write(data)


def add(jid: bytes, name: bytes) -> bytes:
    return b"add %s %s 60000 600000 %d\r\n%s\r\n" % (jid, name, len(PAYLOAD), PAYLOAD)


def complete(jid: bytes) -> bytes:
    return b"complete %s 2\r\nok\r\n" % jid


def new_id() -> bytes:
    return str(uuid.uuid4()).encode()


async def seq_cycles(port: int, jobs: int, name: bytes) -> None:
    c = await Conn.open(port)
    for _ in range(jobs):
        c.send(add(new_id(), name))
        await c.ok()
        c.send(b"lease %s 1000\r\n" % name)
        jid = await c.block()
        c.send(complete(jid))
        await c.ok()
    c.w.close()


async def pipelined(port: int, jobs: int, depth: int) -> None:
    c = await Conn.open(port)
    for _ in range(jobs // depth):
        c.send(b"".join(add(new_id(), b"pipe") for _ in range(depth)))
        await c.ok(depth)
        c.send(b"lease pipe 1000\r\n" * depth)
        ids = [await c.block() for _ in range(depth)]
        c.send(b"".join(complete(jid) for jid in ids))
        await c.ok(depth)
    c.w.close()


async def beanstalkd_pipelined(port: int, jobs: int, depth: int) -> None:
    """The same server's beanstalkd dialect: put, reserve, delete in batches (reference)."""
    r, w = await asyncio.open_connection("127.0.0.1", port)
    put = b"put 0 0 60 %d\r\n%s\r\n" % (len(PAYLOAD), PAYLOAD)
    for _ in range(jobs // depth):
        w.write(put * depth)
        for _ in range(depth):
            await r.readline()
        w.write(b"reserve-with-timeout 1\r\n" * depth)
        ids = []
        for _ in range(depth):
            ids.append((await r.readline()).split()[1])
            await r.readline()
        w.write(b"".join(b"delete %s\r\n" % i for i in ids))
        for _ in range(depth):
            await r.readline()
    w.close()


async def many(port: int, jobs: int, conns: int) -> None:
    per = jobs // conns
    await asyncio.gather(*(seq_cycles(port, per, b"many%d" % i) for i in range(conns)))


async def run_latency(port: int, runs: int) -> list[float]:
    worker = await Conn.open(port)
    client = await Conn.open(port)

    async def work() -> None:
        for _ in range(runs):
            worker.send(b"lease rl 5000\r\n")
            jid = await worker.block()
            worker.send(complete(jid))
            await worker.ok()

    async def call() -> list[float]:
        out = []
        for _ in range(runs):
            started = time.perf_counter()
            client.send(b"run %s rl 5000 5000 %d\r\n%s\r\n" % (new_id(), len(PAYLOAD), PAYLOAD))
            await client.block()
            out.append((time.perf_counter() - started) * 1000)
        return out

    _, latencies = await asyncio.gather(work(), call())
    worker.w.close()
    client.w.close()
    return latencies


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def timed(fn: Callable[[], Awaitable[None]], jobs: int, pid: int) -> list[float]:
    """[cycles per second, server CPU microseconds per cycle]."""
    cpu = cpu_seconds(pid)
    started = time.perf_counter()
    await fn()
    elapsed = time.perf_counter() - started
    return [round(jobs / elapsed), round((cpu_seconds(pid) - cpu) / jobs * 1e6, 1)]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def bench(port: int, bport: int, pid: int, args: argparse.Namespace) -> dict[str, object]:
    await seq_cycles(port, 200, b"warm")  # warm-up
    n = args.jobs
    results: dict[str, object] = {
        "seq-1conn [cycles/s, us/cycle]": await timed(lambda: seq_cycles(port, n, b"seq"), n, pid),
        f"pipelined-{args.depth} [cycles/s, us/cycle]": await timed(
            lambda: pipelined(port, n, args.depth), n, pid
        ),
        f"many-conns-{args.conns} [cycles/s, us/cycle]": await timed(
            lambda: many(port, n, args.conns), n, pid
        ),
        f"beanstalkd pipelined-{args.depth} [cycles/s, us/cycle]": await timed(
            lambda: beanstalkd_pipelined(bport, n, args.depth), n, pid
        ),
    }
    lat = await run_latency(port, args.runs)
    results["run latency ms p50/p99/max"] = [
        round(pct(lat, 50), 3),
        round(pct(lat, 99), 3),
        round(max(lat), 3),
    ]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--conns", type=int, default=32)
    parser.add_argument("--depth", type=int, default=64)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    proc, port, bport = start_server()
    try:
        try:
            import uvloop

            results = uvloop.run(bench(port, bport, proc.pid, args))
        except ImportError:
            results = asyncio.run(bench(port, bport, proc.pid, args))
    finally:
        proc.terminate()
        proc.wait(10)
    results["machine"] = f"{platform.python_implementation()} {platform.python_version()}, " + (
        f"{os.cpu_count()} cores"
    )
    for key, value in results.items():
        print(f"{key:40} {value}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
