"""A follower's refusal on the Workq and Redis doors names the leader at that door, as
its leader key says; a leader that does not say (its door on port 0, or a node of an
older version) is named by its beanstalkd address, marked so. Over real processes: the
first node serves Workq on a port chosen at random and leads alone; the follower's
refusals are then read off the wire."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.cluster_nodes import Node, Nodes
from bench.etcd_members import HOSTS, EtcdMembers

from tests.integration.cluster.marks import needs_etcd
from tests.support.workq_server import new_id

pytestmark = needs_etcd


@pytest.fixture
def nodes(etcd: EtcdMembers, tmp_path: Path) -> Iterator[Nodes]:
    nodes = Nodes(etcd.endpoints, f"refusals-{tmp_path.name}", tmp_path)
    yield nodes
    nodes.stop()


def started(nodes: Nodes, node: Node) -> Node:
    nodes.nodes.append(node)
    nodes.launch(node)
    return node


def ask(address: tuple[str, int], request: bytes) -> bytes:
    """One request on a fresh connection; the reply's first line."""
    with socket.create_connection(address, timeout=20) as sock:
        sock.sendall(request)
        return sock.makefile("rb").readline()


def test_a_leader_whose_door_port_is_not_known_is_named_by_its_beanstalkd_address(
    nodes: Nodes, tmp_path: Path
) -> None:
    first = Node.fresh(1, HOSTS[0], tmp_path)
    first.workq = 0  # --workq-port 0: its Workq address is not in its leader key
    started(nodes, first)
    assert nodes.leader() is first  # alone: it leads at once
    status, body = first.leader() or (0, {})
    assert status == 200 and "workq" not in body and body["redis"] == f"{first.host}:{first.redis}"
    follower = started(nodes, Node.fresh(2, HOSTS[1], tmp_path))
    deadline = time.monotonic() + 30
    while follower.leader() != (503, {"leader": body}) or not follower.ready():
        assert follower.alive() and time.monotonic() < deadline, "the follower names no leader"
        time.sleep(0.05)
    assert follower.workq is not None and follower.redis is not None
    add = b"add %s q 1000 60000 2\r\nhi\r\n" % new_id().encode()
    workq = ask((follower.host, follower.workq), add)
    assert workq == b"-SERVER-ERROR Not the leader (leader: n1 at %s:%d (beanstalkd))\r\n" % (
        first.host.encode(), first.port,
    )  # fmt: skip
    redis = ask((follower.host, follower.redis), b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
    assert redis == b"-READONLY Not the leader (leader: n1 at %s:%d)\r\n" % (
        first.host.encode(), first.redis,
    )  # fmt: skip
