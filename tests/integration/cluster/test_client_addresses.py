"""The shipped clients given every node's address keep working across kill -9 of the
leader: a follower refuses (Workq: NotLeader; beanstalkd: it closes) and the client
moves on to the next address until the new leader answers."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.etcd_members import EtcdMembers

from beanpod.client import qless
from beanpod.client.reconnect import Backoff
from beanpod.client.workq import Client as WorkqClient
from tests.integration.cluster.door_nodes import DoorNodes, door_cluster
from tests.integration.cluster.marks import needs_etcd
from tests.support.workq_server import new_id

pytestmark = needs_etcd
PATIENT = Backoff(first=0.05, maximum=0.5, give_up_after=30)


@pytest.fixture
def doors(etcd: EtcdMembers, tmp_path: Path) -> Iterator[DoorNodes]:
    yield from door_cluster(etcd, tmp_path)


def test_clients_given_every_node_keep_working_across_kill_of_the_leader(
    doors: DoorNodes,
) -> None:
    leader = doors.leader()
    doors.followers_agree(leader)
    others = [node for node in doors.nodes if node is not leader]
    in_order = [*others, leader]  # the followers first: the clients must move on
    workq_spec = [doors.workq_address(node) for node in in_order]  # a list works too
    beanstalkd_spec = ",".join(f"{node.host}:{node.port}" for node in in_order)
    ids = [new_id() for _ in range(30)]
    with WorkqClient(workq_spec, timeout=20, backoff=PATIENT) as workq:
        q = qless.Client(beanstalkd_spec, worker_name="w", backoff=PATIENT)
        for job_id in ids[:15]:
            workq.add(job_id, "wq", 60_000, 600_000, b"before")
            q.queues["lq"].put("Klass", {}, jid=f"q-{job_id}")
        assert workq.address == doors.workq_address(leader)
        assert q.conn.address == leader.address
        assert leader.process is not None
        os.kill(leader.process.pid, signal.SIGKILL)
        leader.process.wait()
        for job_id in ids[15:]:  # through the failover: each call returns once a node took it
            workq.add(job_id, "wq", 60_000, 600_000, b"after")
            q.queues["lq"].put("Klass", {}, jid=f"q-{job_id}")
        new = doors.leader(besides=leader)
        assert workq.address == doors.workq_address(new)
        assert q.conn.address == new.address
        assert workq.inspect_queue("wq")["ready-len"] == len(ids)
        assert [job is not None for job in q.jobs.get(*(f"q-{i}" for i in ids))] == [True] * 30
        q.conn.close()
