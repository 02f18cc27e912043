"""The floor under any asyncio server at pipeline depth 1: a uvloop protocol that answers
every read with a fixed reply, driven by one ping-pong client. Its server CPU per request
is what event loop + syscalls cost before beanpod does any work. `--epoll` runs the
bare minimum instead (one socket, a blocking epoll loop: poll, recv, send), to tell the
event loop's share from the kernel's.

`--compare` runs both floors, beanpod and beanstalkd (the same client, interleaved,
medians of `--repeat` rounds): what beanpod adds to the floor, and how far the floors
themselves are from beanstalkd's depth-1 throughput on the machine.

    python -m bench.floor [--requests 20000] [--epoll | --compare [--repeat 5]]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import select
import socket
import statistics
import subprocess
import sys
import time

from bench.servers import RunningServer, ServerKind, cpu_seconds

REQUEST = b"put 0 0 60 100\r\n" + b"x" * 100 + b"\r\n"


class Answer(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.transport.write(b"INSERTED 1\r\n")  # type: ignore[attr-defined]


async def serve() -> None:
    server = await asyncio.get_running_loop().create_server(Answer, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.sleep(3600)


def serve_epoll() -> None:
    """No event loop at all: the syscalls a depth-1 request needs, from Python."""
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    conn, _ = listener.accept()
    conn.setblocking(False)
    poller = select.epoll()
    poller.register(conn.fileno(), select.EPOLLIN)
    while True:
        poller.poll()
        if not conn.recv(65536):
            return
        conn.send(b"INSERTED 1\r\n")


FLOORS = {
    "uvloop protocol": [sys.executable, "-m", "bench.floor", "--serve"],
    "epoll loop": [sys.executable, "-m", "bench.floor", "--serve", "--epoll"],
}
QUEUES = {
    "beanpod": ServerKind.beanpod(python=sys.executable),
    "beanstalkd": ServerKind.beanstalkd(),
}


def ping_pong(port: int, pid: int, requests: int) -> tuple[float, float]:
    """Drive the server at `port` (process `pid`, on core 0) from core 1 at depth 1:
    (requests per second, server CPU µs per request)."""
    os.sched_setaffinity(0, {1})
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        cpu0, t0 = cpu_seconds(pid), time.perf_counter()
        for _ in range(requests):
            sock.sendall(REQUEST)
            sock.recv(64)
        elapsed = time.perf_counter() - t0
        cpu = cpu_seconds(pid) - cpu0
    return requests / elapsed, cpu / requests * 1e6


def floor(name: str, requests: int) -> tuple[float, float]:
    """One floor server on core 0 (it prints its port once listening), driven."""
    cmd = ["taskset", "-c", "0", *FLOORS[name]]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        return ping_pong(int(proc.stdout.readline()), proc.pid, requests)
    finally:
        proc.kill()
        proc.wait()


def queue(kind: ServerKind, requests: int) -> tuple[float, float]:
    """beanpod or beanstalkd on core 0, started as the side-by-side bench does, driven."""
    server = RunningServer(kind, (), core=0)
    try:
        return ping_pong(server.port, server.pid, requests)
    finally:
        server.stop()


def compare(requests: int, repeat: int) -> None:
    """Both floors, beanpod and beanstalkd, interleaved; medians and the ratio to
    beanstalkd."""
    results: dict[str, list[tuple[float, float]]] = {n: [] for n in [*FLOORS, *QUEUES]}
    for round_ in range(repeat):
        for name in FLOORS:
            results[name].append(floor(name, requests))
        for name, kind in QUEUES.items():
            results[name].append(queue(kind, requests))
        print(f"round {round_ + 1}/{repeat} done", file=sys.stderr, flush=True)
    base = statistics.median(rate for rate, _ in results["beanstalkd"])
    print("| server (d=1, one connection) | req/s | server CPU µs/request | vs beanstalkd |")
    print("|---|---:|---:|---:|")
    for name, runs in results.items():
        rate = statistics.median(r for r, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"| {name} | {rate:,.0f} | {cpu:.1f} | {rate / base:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--epoll", action="store_true", help="a bare epoll loop, no asyncio")
    parser.add_argument("--compare", action="store_true", help="both floors and beanstalkd")
    parser.add_argument("--repeat", type=int, default=5, help="rounds for --compare")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        if args.epoll:
            serve_epoll()
            return
        import uvloop

        uvloop.run(serve())
        return
    if args.compare:
        compare(args.requests, args.repeat)
        return
    name = "epoll loop" if args.epoll else "uvloop protocol"
    rate, cpu = floor(name, args.requests)
    print(f"floor d=1 ({name}): {rate:,.0f} req/s, server CPU {cpu:.1f} µs/request")


if __name__ == "__main__":
    main()
