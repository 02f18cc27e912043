"""What a failover costs: the gap between acknowledged puts across kill -9 and SIGTERM of
a cluster's leader; and, while nothing fails, a depth-1 put's latency and put throughput
(8 connections at depth 1, 4 at depth 64) next to a single node with `-b DIR -f 0`.

    python -m bench.cluster_failover [--rounds 3] [--seconds 5]

Starts 3 etcd members and 3 nodes on 127.0.0.11-13; one producer puts serially,
reconnecting to whichever node GET /leader names; each round kills the leader (kill -9,
then SIGTERM), restarts it as a follower, and records the longest gap between two
acknowledged puts. Every acknowledged id is then checked on the last leader.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import greenstalk

from bench.cluster_nodes import Node, Nodes
from bench.etcd_members import EtcdMembers, free_port


class Producer(threading.Thread):
    """Puts serially to the leader, recording (time, id) of every acknowledged put."""

    def __init__(self, nodes: Nodes) -> None:
        super().__init__(daemon=True)
        self.nodes = nodes
        self.acked: list[tuple[float, int]] = []
        self.running = True

    def run(self) -> None:
        while self.running:
            try:
                with greenstalk.Client(self.nodes.leader().address) as client:
                    while self.running:
                        self.acked.append((time.monotonic(), client.put(b"x" * 100)))
            except (OSError, greenstalk.Error, AssertionError):
                time.sleep(0.01)

    def gap_after(self, moment: float) -> float:
        times = [t for t, _ in self.acked]
        before = max((t for t in times if t <= moment), default=moment)
        after = min(t for t in times if t > moment)
        return after - before


def latency(address: tuple[str, int], count: int = 1000) -> tuple[float, float]:
    took = []
    with greenstalk.Client(address) as client:
        for _ in range(count):
            start = time.perf_counter()
            client.put(b"x" * 100)
            took.append(time.perf_counter() - start)
    cuts = statistics.quantiles(took, n=100)
    return cuts[49] * 1000, cuts[98] * 1000


async def _putter(address: tuple[str, int], depth: int, until: float) -> int:
    reader, writer = await asyncio.open_connection(*address)
    batch = b"put 0 0 60 100\r\n" + b"x" * 100 + b"\r\n"
    done = 0
    while time.monotonic() < until:
        writer.write(batch * depth)
        for _ in range(depth):
            assert (await reader.readline()).startswith(b"INSERTED")
        done += depth
    writer.close()
    return done


async def _throughput(address: tuple[str, int], conns: int, depth: int, seconds: float) -> float:
    start = time.monotonic()
    counts = await asyncio.gather(*(_putter(address, depth, start + seconds) for _ in range(conns)))
    return sum(counts) / (time.monotonic() - start)


def throughput(address: tuple[str, int], seconds: float) -> str:
    d1 = asyncio.run(_throughput(address, 8, 1, seconds))
    d64 = asyncio.run(_throughput(address, 4, 64, seconds))
    return f"put d=1 x 8 conns {d1:,.0f}/s, d=64 x 4 conns {d64:,.0f}/s"


def single_node(tmp: Path, seconds: float) -> str:
    """The same load on one node with `-b DIR -f 0` (every reply waits for fsync)."""
    node = Node("single", "127.0.0.1", free_port("127.0.0.1"), 0, tmp / "single.log")
    log = node.log.open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "beanpod", "serve", "-l", node.host, "-p", str(node.port),
         "-b", str(tmp / "single-wal"), "-f", "0", "--http", "off", "--workq-port", "off"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    log.close()
    try:
        _wait_accepting(node.address)
        return throughput(node.address, seconds)
    finally:
        process.terminate()
        process.wait(30)


def _wait_accepting(address: tuple[str, int]) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(address, timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on {address}"
            time.sleep(0.05)


def fail(nodes: Nodes, producer: Producer, sig: signal.Signals) -> float:
    leader = nodes.leader()
    assert leader.process is not None
    time.sleep(1.0)
    moment = time.monotonic()
    os.kill(leader.process.pid, sig)
    leader.process.wait()
    nodes.leader(besides=leader)
    while producer.acked[-1][0] <= moment:
        time.sleep(0.05)
    restart(nodes, leader)
    return producer.gap_after(moment)


def restart(nodes: Nodes, node: Node) -> None:
    nodes.launch(node)
    deadline = time.monotonic() + 30
    while node.leader() is None and time.monotonic() < deadline:
        time.sleep(0.05)


def check(nodes: Nodes, acked: list[int]) -> None:
    assert acked == sorted(set(acked)), "ids not unique and rising"
    with greenstalk.Client(nodes.leader().address) as client:
        missing = [jid for jid in acked if _missing(client, jid)]
    assert not missing, f"{len(missing)} acknowledged puts lost"


def _missing(client: greenstalk.Client, jid: int) -> bool:
    try:
        client.stats_job(jid)
    except greenstalk.NotFoundError:
        return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="per throughput run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="beanpod-failover-") as tmp:
        members = EtcdMembers(Path(tmp)).start()
        nodes = Nodes(members.endpoints, "failover", Path(tmp)).start()
        try:
            p50, p99 = latency(nodes.leader().address)
            print(f"put d=1 latency: p50 {p50:.1f} ms, p99 {p99:.1f} ms")
            print(f"cluster: {throughput(nodes.leader().address, args.seconds)}")
            print(f"single node -b -f 0: {single_node(Path(tmp), args.seconds)}")
            producer = Producer(nodes)
            producer.start()
            for sig in [signal.SIGKILL, signal.SIGTERM] * args.rounds:
                print(f"{sig.name} of the leader: gap {fail(nodes, producer, sig):.2f} s")
            producer.running = False
            producer.join(10)
            check(nodes, [jid for _, jid in producer.acked])
            print(f"{len(producer.acked)} acknowledged puts, all present, ids rising")
        finally:
            nodes.stop()
            members.stop()


if __name__ == "__main__":
    main()
