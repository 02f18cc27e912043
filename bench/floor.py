"""The floor under any asyncio server at pipeline depth 1: a uvloop protocol that answers
every read with a fixed reply, driven by one ping-pong client. Its server CPU per request
is what event loop + syscalls cost before beanpod does any work. `--epoll` runs the
bare minimum instead (one socket, a blocking epoll loop: poll, recv, send), to tell the
event loop's share from the kernel's.

    python -m bench.floor [--requests 20000] [--epoll]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import select
import socket
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--epoll", action="store_true", help="a bare epoll loop, no asyncio")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        if args.epoll:
            serve_epoll()
            return
        import uvloop

        uvloop.run(serve())
        return
    cmd = ["taskset", "-c", "0", sys.executable, "-m", "bench.floor", "--serve"]
    if args.epoll:
        cmd.append("--epoll")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        os.sched_setaffinity(0, {1})
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        cpu0, t0 = server_cpu_seconds(proc.pid), time.perf_counter()
        for _ in range(args.requests):
            sock.sendall(REQUEST)
            sock.recv(64)
        elapsed = time.perf_counter() - t0
        cpu = server_cpu_seconds(proc.pid) - cpu0
        print(f"floor d=1 ({'epoll loop' if args.epoll else 'uvloop protocol'}): "
              f"{args.requests / elapsed:,.0f} req/s, "
              f"server CPU {cpu / args.requests * 1e6:.1f} µs/request")  # fmt: skip
        sock.close()
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
