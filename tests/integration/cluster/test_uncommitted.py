"""No client sees what a failover could erase: while a put is not committed in etcd,
a reserve on another connection that would hand out that job is not answered; when the
append's outcome stays unknown, the leader steps down and both connections close."""

from __future__ import annotations

import os
import signal
import socket
import time

import greenstalk
import pytest
from bench.cluster_nodes import Nodes
from bench.etcd_members import EtcdMembers

from tests.integration.cluster.marks import needs_etcd
from tests.integration.cluster.test_failover import read_all

pytestmark = needs_etcd


@pytest.mark.parametrize("waiting", [False, True], ids=["reserve-after", "reserve-waiting"])
def test_a_job_in_flight_is_not_handed_out(
    cluster: Nodes, etcd: EtcdMembers, waiting: bool
) -> None:
    """`waiting`: the worker's reserve is parked before the put arrives, so the put wakes
    it; its reply must wait for the put's commit as a later reserve's does."""
    leader = cluster.leader()
    producer = socket.create_connection(leader.address, timeout=30)
    worker = socket.create_connection(leader.address, timeout=30)
    if waiting:
        worker.sendall(b"reserve-with-timeout 20\r\n")
        time.sleep(0.5)  # parked on the leader before etcd stalls
    pids = [m.process.pid for m in etcd.members if m.process is not None]
    for pid in pids:  # etcd stalls: the put's append cannot commit
        os.kill(pid, signal.SIGSTOP)
    try:
        producer.sendall(b"put 0 0 60 6\r\nunsure\r\n")
        if not waiting:
            worker.sendall(b"reserve-with-timeout 0\r\n")
        worker_saw = read_all(worker)  # until the leader steps down
        producer_saw = read_all(producer)
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    assert worker_saw == b"" and producer_saw == b""
    assert put_on_the_leader(cluster, b"later") >= 1  # the cluster serves again


def put_on_the_leader(cluster: Nodes, body: bytes, seconds: float = 60) -> int:
    """A put on whichever node leads; again on the next leader while the one named steps
    down (its /leader may answer 200 a moment before its lease watchdog re-executes it)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with greenstalk.Client(cluster.leader(seconds=60).address) as client:
                return client.put(body)
        except (ConnectionError, greenstalk.Error):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
