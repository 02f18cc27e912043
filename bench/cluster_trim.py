"""etcd's size through a run of puts and deletes, with the log trimmed (every node keeps
checkpoints in -b DIR) and without (no node keeps any, so nothing is trimmed):

    python -m bench.cluster_trim --jobs 5000 --body 1024

Each job is put then deleted by one serial client (two log batches a job, as a queue
whose jobs come and go). Prints, for each run, the log's key count in etcd and each
member's database size (`etcdctl endpoint status`) before and after, and after the
leader's last defragmentation.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import greenstalk

from bench.cluster_nodes import Nodes
from bench.etcd_gateway import count
from bench.etcd_members import EtcdMembers

TUNING = ("--checkpoint-batches", "200", "--trim-every", "1", "--defrag-every", "5")


def db_sizes(endpoints: str) -> list[int]:
    """Each member's DB SIZE, as `etcdctl endpoint status -w json` reports it."""
    out = subprocess.run(["etcdctl", "--endpoints", endpoints, "endpoint", "status", "-w", "json"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return [int(status["Status"]["dbSize"]) for status in json.loads(out)]


def run(members: EtcdMembers, workdir: Path, jobs: int, body: int, trim: bool) -> dict[str, object]:
    name = f"{'trim' if trim else 'keep'}-{int(time.time())}"
    nodes = Nodes(members.endpoints, name, workdir / name, extra=TUNING if trim else (),
                  checkpoints=trim)  # fmt: skip
    (workdir / name).mkdir(parents=True)
    before = db_sizes(members.endpoints)
    nodes.start()
    try:
        leader = nodes.leader()
        nodes.followers_agree(leader)
        started = time.monotonic()
        with greenstalk.Client(leader.address) as client:
            for _ in range(jobs):
                client.delete(client.put(b"x" * body))
        seconds = time.monotonic() - started
        time.sleep(7 if trim else 0)  # a trim, a compaction and a defragmentation
        keys = count(members.members[0].client, f"/beanpod/{name}/log/")
        return {"trim": trim, "jobs": jobs, "batches": 2 * jobs, "seconds": round(seconds, 1),
                "log_keys_after": keys, "db_before": before,
                "db_after": db_sizes(members.endpoints)}  # fmt: skip
    finally:
        nodes.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--body", type=int, default=1024)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-trim-") as tmp:
        for trim in (True, False):  # a fresh etcd each, so sizes do not carry over
            members = EtcdMembers(Path(tmp) / f"etcd-{trim}").start()
            try:
                print(json.dumps(run(members, Path(tmp), args.jobs, args.body, trim)))
            finally:
                members.stop()


if __name__ == "__main__":
    main()
