"""A follower's doors admit connections as a leader's do: `--max-connections` counts
them (and a closed one is counted out), on the beanstalkd, Workq and Redis doors alike."""

from __future__ import annotations

import itertools
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.cluster_nodes import Node, Nodes
from bench.etcd_members import EtcdMembers

from tests.integration.cluster.marks import needs_etcd

pytestmark = needs_etcd
_names = itertools.count()


@pytest.fixture
def limited(etcd: EtcdMembers, tmp_path: Path) -> Iterator[Nodes]:
    nodes = Nodes(etcd.endpoints, f"adm{next(_names)}-{tmp_path.name}", tmp_path,
                  extra=("--max-connections", "2")).start()  # fmt: skip
    yield nodes
    nodes.stop()


def closed_at_once(address: tuple[str, int]) -> bool:
    """Connect and wait briefly: refused connections are closed before any byte is read."""
    with socket.create_connection(address, timeout=5) as sock:
        sock.settimeout(2)
        try:
            return sock.recv(1) == b""
        except TimeoutError:
            return False


def a_follower(nodes: Nodes) -> Node:
    leader = nodes.leader()
    nodes.followers_agree(leader)
    return next(node for node in nodes.nodes if node is not leader)


@pytest.mark.parametrize("door", ["beanstalkd", "workq", "redis"])
def test_a_followers_door_admits_up_to_max_connections(limited: Nodes, door: str) -> None:
    follower = a_follower(limited)
    port = {"beanstalkd": follower.port, "workq": follower.workq, "redis": follower.redis}[door]
    address = (follower.host, port or 0)
    held = [socket.create_connection(address, timeout=5) for _ in range(2)]
    try:
        time.sleep(0.2)  # both accepted and counted
        assert closed_at_once(address)  # the third is refused
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 10
    while closed_at_once(address):  # the two are counted out once closed
        assert time.monotonic() < deadline, "closed connections were never counted out"
