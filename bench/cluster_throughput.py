"""Issue 27's throughput targets, one command: a cluster through HAProxy next to a single
node with `-b DIR -f 0`, same run, same machine, same load.

    python -m bench.cluster_throughput [--repeat 3] [--seconds 5] [--out FILE]

Per repeat, a fresh cluster, then a fresh single node, each starting empty: the cluster is
3 etcd members (the try-out script's options), 3 nodes on 127.0.0.11-13 (each with
`-b DIR`, as deployed) and HAProxy with deploy/haproxy-cluster.cfg. On each: 1,000
serial puts on one connection (latency), puts at depth 1 over 8 connections and at depth
64 over 4 connections for `--seconds` each (100-byte bodies, one asyncio client process).
Prints a table of min-max (median) per figure, the ratios and issue 27's targets.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import greenstalk

from bench.cluster_nodes import Nodes
from bench.cluster_proxy import Proxy
from bench.etcd_members import EtcdMembers, free_port
from bench.fault_cluster import ETCD_TIMING

Address = tuple[str, int]
FIGURES = ("p50 ms", "p99 ms", "d1x8", "d64x4")


def latency(address: Address, count: int = 1000) -> tuple[float, float]:
    """p50, p99 in ms of serial puts on one connection."""
    took = []
    with greenstalk.Client(address) as client:
        for _ in range(count):
            start = time.perf_counter()
            client.put("x" * 100)
            took.append(time.perf_counter() - start)
    cuts = statistics.quantiles(took, n=100)
    return cuts[49] * 1000, cuts[98] * 1000


async def _putter(address: Address, depth: int, until: float) -> int:
    reader, writer = await asyncio.open_connection(*address)
    batch = b"put 0 0 60 100\r\n" + b"x" * 100 + b"\r\n"
    done = 0
    while time.monotonic() < until:
        writer.write(batch * depth)
        for _ in range(depth):
            line = await reader.readline()
            assert line.startswith(b"INSERTED"), line
        done += depth
    writer.close()
    return done


async def _rate(address: Address, conns: int, depth: int, seconds: float) -> float:
    start = time.monotonic()
    counts = await asyncio.gather(*(_putter(address, depth, start + seconds) for _ in range(conns)))
    return sum(counts) / (time.monotonic() - start)


def measure(address: Address, seconds: float) -> dict[str, float]:
    p50, p99 = latency(address)
    before = _counts(address)
    d1 = asyncio.run(_rate(address, 8, 1, seconds))
    after = _counts(address)
    d64 = asyncio.run(_rate(address, 4, 64, seconds))
    figures = dict(zip(FIGURES, (p50, p99, d1, d64), strict=True))
    batches = after[1] - before[1]
    figures["d1x8 puts/batch"] = (after[0] - before[0]) / batches if batches else 0.0
    return figures


def _counts(address: Address) -> tuple[int, int]:
    """(puts, log batches) so far: a cluster leader's `binlog-current-index` is its next
    batch's seq (a single node's is its WAL segment: the figure is the cluster's)."""
    with greenstalk.Client(address) as client:
        stats = client.stats()
    return int(stats["cmd-put"]), int(stats["binlog-current-index"])


def single_node(tmp: Path, seconds: float) -> dict[str, float]:
    """The same load on one fresh node with `-b DIR -f 0` (every reply after its fsync)."""
    address = ("127.0.0.1", free_port("127.0.0.1"))
    wal = tempfile.mkdtemp(prefix="single-wal-", dir=tmp)
    with (tmp / "single.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "beanpod", "serve", "-l", address[0], "-p", str(address[1]),
             "-b", wal, "-f", "0", "--http", "off", "--workq-port", "off"],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_accepting(address)
        figures = measure(address, seconds)
        del figures["d1x8 puts/batch"]  # (its binlog index counts segments, not batches)
        return figures
    finally:
        process.terminate()
        process.wait(30)


def wait_accepting(address: Address) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(address, timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on {address}"
            time.sleep(0.05)


def span(values: list[float], digits: int) -> str:
    fmt = f"{{:,.{digits}f}}"
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{fmt.format(low)}-{fmt.format(high)} ({fmt.format(mid)})"


def table(cluster: list[dict[str, float]], single: list[dict[str, float]]) -> str:
    def col(runs: list[dict[str, float]], key: str) -> list[float]:
        return [run[key] for run in runs]

    ratio = [c["d1x8"] / s["d1x8"] for c, s in zip(cluster, single, strict=True)]
    ratio64 = [c["d64x4"] / s["d64x4"] for c, s in zip(cluster, single, strict=True)]
    rows = [
        ("put d=1, 1 connection: p50 (ms)", "p50 ms", 2, "", "<= 3 ms"),
        ("put d=1, 1 connection: p99 (ms)", "p99 ms", 2, "", "<= 25 ms"),
        ("put d=1 x 8 connections (/s)", "d1x8", 0, span(ratio, 2), ">= 0.25x the single node"),
        ("put d=64 x 4 connections (/s)", "d64x4", 0, span(ratio64, 2), ">= 10,000/s"),
        ("put d=1 x 8: puts per etcd transaction", "d1x8 puts/batch", 2, "", ""),
    ]
    out = ["| | cluster via HAProxy | single node `-b -f 0` | cluster / single | issue 27 |",
           "|---|---|---|---|---|"]  # fmt: skip
    for label, key, digits, ratios, target in rows:
        mine = span(col(single, key), digits) if key in single[0] else "-"  # (the cluster's)
        cells = (span(col(cluster, key), digits), mine)
        out.append(f"| {label} | {cells[0]} | {cells[1]} | {ratios} | {target} |")
    return "\n".join(out)


def on_cluster(workdir: Path, seconds: float) -> dict[str, float]:
    """The load through HAProxy to a fresh cluster (fresh etcd members too)."""
    workdir.mkdir(parents=True)
    members = EtcdMembers(workdir / "etcd", options=ETCD_TIMING).start()
    nodes = Nodes(members.endpoints, "throughput", workdir, checkpoints=True)
    proxy = None
    try:
        nodes.start()
        nodes.followers_agree(nodes.leader())
        proxy = Proxy(nodes.nodes, workdir / "haproxy.log")
        proxy.wait_serving()
        return measure(proxy.beanstalkd, seconds)
    finally:
        if proxy is not None:
            proxy.stop()
        nodes.stop()
        members.stop()


def run(repeat: int, seconds: float, tmp: Path) -> tuple[list[dict[str, float]], ...]:
    """Cluster, single node, cluster, ...: each fresh, so each starts empty."""
    cluster, single = [], []
    for index in range(repeat):
        cluster.append(on_cluster(tmp / f"cluster{index + 1}", seconds))
        single.append(single_node(tmp, seconds))
        print(f"repeat {index + 1}: cluster {cluster[-1]}, single {single[-1]}",
              file=sys.stderr)  # fmt: skip
    return cluster, single


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="per throughput figure")
    parser.add_argument("--out", type=Path, help="append the table here (Markdown)")
    parser.add_argument("--workdir", type=Path, help="keep the logs here (default: temporary)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        cluster, single = run(args.repeat, args.seconds, args.workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="beanpod-throughput-") as tmp:
            cluster, single = run(args.repeat, args.seconds, Path(tmp))
    head = (
        f"`python -m bench.cluster_throughput --repeat {args.repeat} --seconds "
        f"{args.seconds:g}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} cores, load average {load:.1f} before / "
        f"{os.getloadavg()[0]:.1f} after; min-max (median) of {args.repeat} repeats"
    )
    report = f"{head}\n\n{table(cluster, single)}\n"
    print(report)
    if args.out is not None:
        with args.out.open("a") as out:
            out.write(f"\n{report}")


if __name__ == "__main__":
    main()
