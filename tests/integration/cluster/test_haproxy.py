"""Clients through HAProxy (deploy/haproxy-cluster.cfg: a frontend per door, each
checking GET /leader) keep working across kill -9 of the leader, reconnecting: a
greenstalk client, a Workq client and qless-py through the Redis door; no acknowledged
put or completion is lost."""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import greenstalk
import pytest
from bench.cluster_nodes import Nodes
from bench.cluster_proxy import Proxy

from beanpod.client.workq import Client as WorkqClient
from beanpod.client.workq import ClientError
from tests.integration.cluster.door_nodes import qless_client
from tests.integration.cluster.marks import needs_etcd
from tests.qless_clients import QlessClients
from tests.support.workq_server import new_id

pytestmark = [
    needs_etcd,
    pytest.mark.skipif(shutil.which("haproxy") is None,
                       reason="haproxy is not on PATH (Debian: apt-get install haproxy)"),
    pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated"),  # qless-py's
]  # fmt: skip
T = TypeVar("T")


@pytest.fixture
def haproxy(cluster: Nodes, tmp_path: Path) -> Iterator[Proxy]:
    proxy = Proxy(cluster.nodes, tmp_path / "haproxy.log")
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture
def proxy(haproxy: Proxy) -> tuple[str, int]:
    return haproxy.beanstalkd


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


def until_acknowledged(call: Callable[[], T], seconds: float = 30) -> T:
    """`call()` again (a fresh connection through the proxy each time) until it returns."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return call()
        except Exception:  # redis-py's and the Workq client's connection errors alike
            assert time.monotonic() < deadline, "no call went through the proxy"
            time.sleep(0.05)


def workq_add(proxy: Proxy, job_id: str) -> None:
    with WorkqClient(proxy.workq, timeout=10, backoff=None) as client:
        try:
            client.add(job_id, "wq", 60_000, 600_000, b"through")
        except ClientError as exc:  # an earlier try took effect; its reply was lost
            if str(exc) != "Duplicate job":
                raise


def test_workq_and_qless_through_haproxy_follow_the_leader(
    cluster: Nodes, haproxy: Proxy, qless_clients: QlessClients
) -> None:
    """Each door's frontend sends its clients to the leader's door; after kill -9 of the
    leader, to the new one's: every acknowledged add, put and completion is there."""
    pytest.importorskip("qless")
    leader = cluster.leader()
    cluster.followers_agree(leader)
    ids = [new_id() for _ in range(20)]
    for job_id in ids[:10]:
        until_acknowledged(lambda job_id=job_id: workq_add(haproxy, job_id))
    queue = qless_client(qless_clients, haproxy.redis).queues["lq"]
    jids = [queue.put("Klass", {}, jid=f"q{n}") for n in range(10)]
    assert queue.pop().complete() == "complete"  # q0
    with WorkqClient(haproxy.workq, timeout=10, backoff=None) as client:
        client.complete(client.lease("wq", 0).id, b"done")  # ids[0]
    assert leader.process is not None
    os.kill(leader.process.pid, signal.SIGKILL)
    for job_id in ids[10:]:
        until_acknowledged(lambda job_id=job_id: workq_add(haproxy, job_id))
    jids += [until_acknowledged(lambda n=n: qless_client(qless_clients, haproxy.redis)
                                .queues["lq"].put("Klass", {}, jid=f"q{n}"))
             for n in range(10, 20)]  # fmt: skip
    new = cluster.leader(besides=leader)
    with WorkqClient((new.host, new.workq or 0), timeout=10, backoff=None) as client:
        states = [client.inspect_job(job_id)["state"] for job_id in ids]
    assert states == [b"1"] + [b"0"] * (len(ids) - 1)  # COMPLETED (1), the rest NEW (0)
    jobs = qless_client(qless_clients, haproxy.redis).jobs
    assert [jobs[jid].state for jid in jids] == ["complete"] + ["waiting"] * (len(jids) - 1)
