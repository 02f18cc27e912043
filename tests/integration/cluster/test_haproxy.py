"""A greenstalk client through HAProxy (deploy/haproxy-cluster.cfg, checking GET /leader)
keeps working across kill -9 of the leader, reconnecting; no acknowledged put is lost."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import greenstalk
import pytest
from bench.cluster_nodes import Nodes
from bench.etcd_members import free_port

from tests.integration.cluster.marks import needs_etcd

pytestmark = [
    needs_etcd,
    pytest.mark.skipif(shutil.which("haproxy") is None,
                       reason="haproxy is not on PATH (Debian: apt-get install haproxy)"),
]  # fmt: skip
CONFIG = Path(__file__).parents[3] / "deploy" / "haproxy-cluster.cfg"


@pytest.fixture
def proxy(cluster: Nodes, tmp_path: Path) -> Iterator[tuple[str, int]]:
    address = ("127.0.0.1", free_port("127.0.0.1"))
    env = {**os.environ, "BEANPOD_PROXY": f"{address[0]}:{address[1]}"}
    for index, node in enumerate(cluster.nodes, 1):
        env[f"BEANPOD_NODE{index}"] = f"{node.host}:{node.port}"
        env[f"BEANPOD_NODE{index}_HTTP"] = str(node.http)
    with (tmp_path / "haproxy.log").open("ab") as log:
        process = subprocess.Popen(["haproxy", "-f", str(CONFIG), "-db"], env=env,
                                   stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        yield address
    finally:
        process.terminate()
        process.wait(10)


def put_through(address: tuple[str, int], body: bytes, seconds: float = 30) -> int:
    """Put once, reconnecting through the proxy until a put is acknowledged."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with greenstalk.Client(address) as client:
                return client.put(body)
        except (OSError, greenstalk.Error):
            assert time.monotonic() < deadline, "no put went through the proxy"
            time.sleep(0.05)


def test_a_client_through_haproxy_survives_a_leader_kill(
    cluster: Nodes, proxy: tuple[str, int]
) -> None:
    leader = cluster.leader()
    acked = [put_through(proxy, b"before %d" % n) for n in range(50)]
    assert leader.process is not None
    os.kill(leader.process.pid, signal.SIGKILL)
    acked += [put_through(proxy, b"after %d" % n) for n in range(50)]
    assert cluster.leader(besides=leader) is not leader
    assert acked == sorted(set(acked))  # unique and rising across the two leaders
    with greenstalk.Client(proxy) as client:
        assert client.stats()["current-jobs-ready"] == len(acked)
        assert {client.stats_job(jid)["id"] for jid in acked} == set(acked)
