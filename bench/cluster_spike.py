"""etcd's fenced-append commit rate here: the cluster log's one write, measured alone.

    python -m bench.cluster_spike [--seconds 5]

Starts 3 etcd members on 127.0.0.11-13, takes a leader key on a lease, then appends
batches of 1 and of 64 put records (100-byte bodies, the WAL's format) as
`Txn(create_revision(leader) == mine AND version(log/<seq>) == 0 -> put log/<seq>)`, one
in flight at a time, as the leader does. Prints commits/s, jobs/s and latencies.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from beanpod.core.job import READY, Job
from beanpod.core.tube import Tube
from beanpod.durability.cluster.etcd import Etcd, b64, parse_endpoints
from beanpod.durability.records import encode_put_head
from beanpod.storage.framing import frame_pair
from bench.etcd_members import EtcdMembers

PREFIX = b"/beanpod/spike/"


def batch_of(jobs: int, first_id: int) -> bytes:
    tube = Tube("default", 0, {})
    records = []
    for jid in range(first_id, first_id + jobs):
        job = Job(jid, tube, 1024, 0, 60_000, b"x" * 100, 0)
        job.state = READY
        records.append(frame_pair(encode_put_head(job), job.body))
    return b"".join(records)


async def measure(etcd: Etcd, jobs: int, seconds: float, seq: int) -> tuple[int, list[float]]:
    lease = await etcd.grant(5)
    leader = PREFIX + b"leader"
    await etcd.txn([], [{"request_delete_range": {"key": b64(leader)}}])
    ok, answer = await etcd.txn(
        [{"key": b64(leader), "target": "CREATE", "create_revision": 0}],
        [{"request_put": {"key": b64(leader), "value": b64("spike"), "lease": lease}}],
    )
    assert ok, answer
    mine = int(answer["header"]["revision"])
    took: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        key = PREFIX + b"log/%020d" % seq
        payload = batch_of(jobs, seq * jobs)
        start = time.perf_counter()
        ok, _ = await etcd.txn(
            [{"key": b64(leader), "target": "CREATE", "create_revision": mine},
             {"key": b64(key), "target": "VERSION", "version": 0}],
            [{"request_put": {"key": b64(key), "value": b64(payload)}}],
        )  # fmt: skip
        took.append(time.perf_counter() - start)
        assert ok
        seq += 1
    await etcd.revoke(lease)
    return seq, took


def line(jobs: int, took: list[float]) -> str:
    rate = len(took) / sum(took)
    cuts = statistics.quantiles(took, n=100)
    p50, p99 = cuts[49] * 1000, cuts[98] * 1000
    return (f"batch {jobs:>2} jobs: {rate:,.0f} commits/s = {rate * jobs:,.0f} jobs/s, "
            f"p50 {p50:.1f} ms, p99 {p99:.1f} ms ({len(took)} commits)")  # fmt: skip


async def spike(members: EtcdMembers, seconds: float) -> None:
    etcd = Etcd(parse_endpoints(members.endpoints))
    try:
        seq = 0
        for jobs in (1, 64):
            seq, took = await measure(etcd, jobs, seconds, seq)
            print(line(jobs, took))
    finally:
        await etcd.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="beanpod-spike-") as tmp:
        members = EtcdMembers(Path(tmp)).start()
        try:
            asyncio.run(spike(members, args.seconds))
        finally:
            members.stop()


if __name__ == "__main__":
    main()
