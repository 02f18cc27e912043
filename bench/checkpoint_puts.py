"""What a leader's checkpoints cost its clients: depth-1 put latency on a leader holding
~100,000 jobs that checkpoints every 200 batches, end to end (docs/cluster.md).

    python -m bench.checkpoint_puts [--no-checkpoints] [--src OTHER/src] [--puts 3000]

Starts 3 etcd members and 3 nodes (each `-b DIR` on /dev/shm, so that the checkpoints'
fsyncs do not slow etcd's on the one disk they share here; `--checkpoint-batches 200`),
fills the leader with 4 connections putting at depth 64 for 8 s, then puts `--puts` jobs
one at a time and prints the latency's p50, p99, p99.9 and max, how many took over
100 ms, and what the leader logged of its checkpoints. `--src` runs the nodes from
another checkout's `src/` (its pure Python; compare with BEANPOD_PURE=1 here), e.g. one
from before checkpoints were forked.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import greenstalk

from bench.cluster_nodes import Node, Nodes
from bench.cluster_throughput import _rate
from bench.etcd_members import EtcdMembers
from bench.fault_cluster import ETCD_TIMING


class ShmNodes(Nodes):
    shm = Path("/dev/shm")

    def data_dir(self, node: Node) -> Path:
        return self.shm / f"{node.node_id}-data"


def serial_puts(address: tuple[str, int], count: int) -> list[float]:
    took = []
    with greenstalk.Client(address) as client:
        for _ in range(count):
            start = time.perf_counter()
            client.put("x" * 100)
            took.append((time.perf_counter() - start) * 1000)
    return took


def run(workdir: Path, shm: Path, checkpoints: bool, puts: int) -> None:
    members = EtcdMembers(workdir / "etcd", options=ETCD_TIMING).start()
    extra = ("--workq-port", "off", "--checkpoint-batches", "200")
    nodes = ShmNodes(members.endpoints, "ckpt", workdir, extra=extra, checkpoints=checkpoints)
    nodes.shm = shm
    try:
        nodes.start()
        leader = nodes.leader()
        nodes.followers_agree(leader)
        rate = asyncio.run(_rate(leader.address, 4, 64, 8))
        took = serial_puts(leader.address, puts)
    finally:
        nodes.stop()
        members.stop()
    cuts = statistics.quantiles(took, n=1000)
    print(f"{rate * 8:,.0f} jobs put first ({rate:,.0f}/s), then {puts} serial puts: p50 "
          f"{cuts[499]:.1f}, p99 {cuts[989]:.1f}, p99.9 {cuts[998]:.1f}, max {max(took):.1f} "
          f"ms; over 100 ms: {sum(t > 100 for t in took)}")  # fmt: skip
    logged = [line for line in leader.log.read_text().splitlines() if "checkpoint of" in line]
    print(f"the leader ({leader.node_id}) wrote {len(logged)} checkpoints", *logged[-3:], sep="\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-checkpoints", action="store_true", help="no -b DIR (a baseline)")
    parser.add_argument("--src", type=Path, help="run the nodes from this src/ directory")
    parser.add_argument("--puts", type=int, default=3000)
    args = parser.parse_args()
    if args.src is not None:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(args.src.resolve()), *sys_path()])
    print(f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="beanpod-ckpt-") as tmp, \
            tempfile.TemporaryDirectory(prefix="beanpod-ckpt-", dir="/dev/shm") as shm:  # fmt: skip
        run(Path(tmp), Path(shm), not args.no_checkpoints, args.puts)


def sys_path() -> list[str]:
    """The repository root (for `bench`), after the other src/."""
    return [str(Path(__file__).resolve().parents[1])]


if __name__ == "__main__":
    main()
