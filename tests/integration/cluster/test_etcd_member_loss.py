"""The leader keeps leading when the etcd member it talks to dies (not etcd's Raft
leader): an append whose outcome that loss left unknown is tried again on the next
member, and its `version == 0` compare tells whether the first try committed."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import greenstalk
import pytest
from bench.cluster_nodes import Nodes
from bench.etcd_members import EtcdMembers, move_raft_leader, raft_leader

from tests.integration.cluster.marks import needs_etcd

pytestmark = needs_etcd


@pytest.fixture
def own_etcd(tmp_path: Path) -> Iterator[EtcdMembers]:
    """Members of this test's own (one of them dies)."""
    members = EtcdMembers(tmp_path / "etcd").start()
    yield members
    members.stop()


def test_losing_the_etcd_member_in_use_costs_no_failover(
    own_etcd: EtcdMembers, tmp_path: Path
) -> None:
    first = own_etcd.members[0]  # every node talks to the first endpoint first
    if raft_leader(own_etcd) is first:
        move_raft_leader(first)
    nodes = Nodes(own_etcd.endpoints, "member-loss", tmp_path).start()
    try:
        leader = nodes.leader()
        acked: list[int] = []
        stop = threading.Event()

        def produce() -> None:
            with greenstalk.Client(leader.address) as client:
                while not stop.is_set():
                    acked.append(client.put(b"x"))

        producer = threading.Thread(target=produce)
        producer.start()
        time.sleep(1)
        assert first.process is not None
        os.kill(first.process.pid, signal.SIGKILL)
        time.sleep(3)
        stop.set()
        producer.join(30)
        assert not producer.is_alive()  # it never lost its connection: no failover
        assert nodes.leader() is leader
        with greenstalk.Client(leader.address) as client:
            assert client.stats()["current-jobs-ready"] == len(acked)
        assert "stepping down" not in leader.log.read_text()
    finally:
        nodes.stop()
