"""The fault run, short (bench/cluster_faults.py, one round): 3 etcd members and 3 nodes
on 127.0.0.11-13 behind HAProxy, producers and workers through it, a Workq and a qless
client through its other frontends; one of each fault: kill -9 of the leader, SIGTERM
of it, kill -9 of its whole node, SIGSTOP of it for 8 s, a partition of its address
(nftables, else a pause of both its processes), a follower's disk full, then that node
made the leader while its disk is full. No acknowledged put lost, no acknowledged delete
undone (nor a Workq/qless add lost or completion undone), ids unique and rising, no old
leader acknowledging anything, etcd's database small. The gaps between puts are printed
(the bench judges them: no timing thresholds in tests)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from bench.cluster_faults import fault_run
from bench.fault_cluster import missing_tools

pytestmark = [
    pytest.mark.skipif(missing_tools() is not None, reason=str(missing_tools())),
    pytest.mark.skipif(shutil.which("etcdctl") is None,
                       reason="etcdctl is not on PATH (Debian: apt-get install etcd-client)"),
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated"),  # qless-py's
]  # fmt: skip


def test_one_round_of_faults_loses_no_acknowledgement(tmp_path: Path) -> None:
    report = fault_run(tmp_path / "run", rounds=1)
    print(report.table())
    assert [o.fault for o in report.outcomes] == [
        "SIGKILL of the leader", "SIGTERM of the leader", "kill -9 of the leader's whole node",
        "SIGSTOP of the leader for 8 s", "partition of the leader's address",
        "a follower's disk full", "kill -9 of the leader: the full-disk node takes over",
    ]  # fmt: skip
    assert report.verdict.inserted > 0 and report.verdict.deleted > 0
    for door in ("workq", "qless"):  # both ran through the faults: adds and completions
        assert min(report.verdict.doors[door]) > 0, report.table()
    assert not report.problems, report.table()
