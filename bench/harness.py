"""``python -m bench.harness``: what the beanpod.testing harness costs a test suite -
starting a server, resetting it between tests, and one request's round trip over its
in-process socketpair against loopback TCP and a UNIX socket. Median and p99 (ms)."""

from __future__ import annotations

import argparse
import socket
import time
from collections.abc import Callable

import greenstalk

from beanpod.testing import BeanpodServer


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return sorted(samples)


def row(name: str, samples: list[float]) -> str:
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    return f"| {name} | {samples[len(samples) // 2]:.3f} | {p99:.3f} | {len(samples)} |"


def start_stop() -> None:
    BeanpodServer().start().stop()


def leave_mess(server: BeanpodServer) -> None:
    """What a test leaves behind: jobs in a tube, one reserved, a client gone."""
    with greenstalk.Client(server.socket(), use="emails", watch="emails") as c:
        for _ in range(10):
            c.put("x")
        c.reserve(timeout=0)


def resets(server: BeanpodServer, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        leave_mess(server)
        start = time.perf_counter()
        server.reset()
        samples.append((time.perf_counter() - start) * 1000)
    return sorted(samples)


def round_trips(sock: socket.socket, runs: int) -> list[float]:
    def one() -> None:
        sock.sendall(b"list-tube-used\r\n")
        reply = b""
        while not reply.endswith(b"\r\n"):
            reply += sock.recv(64)

    return timed(one, runs)


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.harness", description=__doc__)
    parser.add_argument("--runs", type=int, default=200)
    opts = parser.parse_args(args)
    print("| what | median ms | p99 ms | runs |\n|---|---|---|---|")
    print(row("start + stop a server", timed(start_stop, max(20, opts.runs // 4))))
    with BeanpodServer(unix=True) as server:
        print(row("reset (10 jobs, 1 client)", resets(server, opts.runs)))
        assert server.unix_path is not None
        unix = socket.socket(socket.AF_UNIX)
        unix.connect(server.unix_path)
        connections = {
            "round trip, socketpair (server.socket())": server.socket(),
            "round trip, loopback TCP": socket.create_connection(server.address),
            "round trip, UNIX socket": unix,
        }
        for name, sock in connections.items():
            with sock:
                round_trips(sock, 100)  # warm up
                print(row(name, round_trips(sock, opts.runs * 10)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
