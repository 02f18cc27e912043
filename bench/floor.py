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
from pathlib import Path

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


def server_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


SERVERS = {
    "uvloop protocol": [sys.executable, "-m", "bench.floor", "--serve"],
    "epoll loop": [sys.executable, "-m", "bench.floor", "--serve", "--epoll"],
}


def ping_pong(cmd: list[str], requests: int, port: int | None = None) -> tuple[float, float]:
    """Start `cmd` on core 0 (it prints its port unless `port` is given), drive it from
    core 1 at depth 1: (requests per second, server CPU µs per request)."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent / "src"))
    proc = subprocess.Popen(
        ["taskset", "-c", "0", *cmd], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        if port is None:
            port = int(proc.stdout.readline())
        os.sched_setaffinity(0, {1})
        sock = _connect(port)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        cpu0, t0 = server_cpu_seconds(proc.pid), time.perf_counter()
        for _ in range(requests):
            sock.sendall(REQUEST)
            sock.recv(64)
        elapsed = time.perf_counter() - t0
        cpu = server_cpu_seconds(proc.pid) - cpu0
        sock.close()
        return requests / elapsed, cpu / requests * 1e6
    finally:
        proc.kill()
        proc.wait()


def _connect(port: int) -> socket.socket:
    deadline = time.monotonic() + 10
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port))
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def compare(requests: int, repeat: int) -> None:
    """Both floors and beanstalkd, interleaved; medians and the ratio to beanstalkd."""
    queues = {
        "beanpod": [sys.executable, "-m", "beanpod", "serve", "--workq-port", "0"],
        "beanstalkd": ["beanstalkd"],
    }
    results: dict[str, list[tuple[float, float]]] = {n: [] for n in [*SERVERS, *queues]}
    for round_ in range(repeat):
        for name, cmd in SERVERS.items():
            results[name].append(ping_pong(cmd, requests))
        for name, cmd in queues.items():
            with socket.create_server(("127.0.0.1", 0)) as probe:
                port = probe.getsockname()[1]
            argv = [*cmd, "-l", "127.0.0.1", "-p", str(port)]
            results[name].append(ping_pong(argv, requests, port))
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
    rate, cpu = ping_pong(SERVERS[name], args.requests)
    print(f"floor d=1 ({name}): {rate:,.0f} req/s, server CPU {cpu:.1f} µs/request")


if __name__ == "__main__":
    main()
