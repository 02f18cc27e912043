"""The leader keeps leading when the etcd member it talks to dies (not etcd's Raft
leader): an append whose outcome that loss left unknown is tried again on the next
member, and its `version == 0` compare tells whether the first try committed. Nor does
it step down when etcd's Raft leadership moves under its appends (etcd drops proposals
meanwhile: "raft proposal dropped"; the append is sent again)."""

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


class Putting:
    """Puts one at a time on one connection to `address` inside the `with` block."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.address = address
        self.acked: list[int] = []
        self.error: BaseException | None = None  # what ended the puts early (a lost connection)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        try:
            with greenstalk.Client(self.address) as client:
                while not self.stop.is_set():
                    self.acked.append(client.put(b"x"))
        except Exception as exc:  # reported by the test, not the thread
            self.error = exc

    def __enter__(self) -> Putting:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(30)


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
        with Putting(leader.address) as putting:
            time.sleep(1)
            assert first.process is not None
            os.kill(first.process.pid, signal.SIGKILL)
            time.sleep(3)
        assert putting.error is None, putting.error  # it never lost its connection: no failover
        assert nodes.leader() is leader
        with greenstalk.Client(leader.address) as client:
            assert client.stats()["current-jobs-ready"] == len(putting.acked)
        assert "stepping down" not in leader.log.read_text()
    finally:
        nodes.stop()


def test_etcd_leadership_moving_under_appends_costs_no_failover(
    own_etcd: EtcdMembers, tmp_path: Path
) -> None:
    nodes = Nodes(own_etcd.endpoints, "raft-moves", tmp_path).start()
    try:
        leader = nodes.leader()
        with Putting(leader.address) as putting:
            for _ in range(6):  # each member leads etcd's Raft twice, appends flowing
                time.sleep(0.3)
                move_raft_leader(raft_leader(own_etcd))
        assert putting.error is None, putting.error  # it never lost its connection: no failover
        assert "stepping down" not in leader.log.read_text()
        with greenstalk.Client(leader.address) as client:
            assert client.stats()["current-jobs-ready"] == len(putting.acked)
    finally:
        nodes.stop()
