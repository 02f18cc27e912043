"""What a failover costs: the gap between acknowledged puts across kill -9 and SIGTERM of
a cluster's leader (throughput while nothing fails: bench/cluster_throughput.py).

    python -m bench.cluster_failover [--rounds 3]

Starts 3 etcd members and 3 nodes on 127.0.0.11-13; one producer puts serially,
reconnecting to whichever node GET /leader names; each round kills the leader (kill -9,
then SIGTERM), restarts it as a follower, and records the longest gap between two
acknowledged puts. Every acknowledged id is then checked on the last leader.
"""

from __future__ import annotations

import argparse
import os
import signal
import tempfile
import threading
import time
from pathlib import Path

import greenstalk

from bench.cluster_nodes import Node, Nodes
from bench.etcd_members import EtcdMembers


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
                        self.acked.append((time.monotonic(), client.put("x" * 100)))
            except (OSError, greenstalk.Error, AssertionError):
                time.sleep(0.01)

    def gap_after(self, moment: float) -> float:
        times = [t for t, _ in self.acked]
        before = max((t for t in times if t <= moment), default=moment)
        after = min(t for t in times if t > moment)
        return after - before


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


def _missing(client: greenstalk.Client[str], jid: int) -> bool:
    try:
        client.stats_job(jid)
    except greenstalk.NotFoundError:
        return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="beanpod-failover-") as tmp:
        members = EtcdMembers(Path(tmp)).start()
        nodes = Nodes(members.endpoints, "failover", Path(tmp)).start()
        try:
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
