"""A leader's acknowledged puts survive kill -9 of it; a paused old leader, woken after
another took over, acknowledges nothing and hands out no job (its append is fenced)."""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

import greenstalk
from bench.cluster_nodes import Node, Nodes
from bench.etcd_members import free_port

from tests.integration.cluster.marks import needs_etcd

pytestmark = needs_etcd


def put_many(address: tuple[str, int], count: int) -> list[int]:
    with greenstalk.Client(address) as client:
        return [client.put(b"job %d" % n) for n in range(count)]


def test_acknowledged_puts_survive_kill_of_the_leader(cluster: Nodes) -> None:
    leader = cluster.leader()
    cluster.followers_agree(leader)
    acked = put_many(leader.address, 300)
    with greenstalk.Client(leader.address) as client:
        client.delete(acked[0])  # a delete acknowledged is not undone either
    assert leader.process is not None
    os.kill(leader.process.pid, signal.SIGKILL)
    leader.process.wait()

    new = cluster.leader(besides=leader)
    with greenstalk.Client(new.address) as client:
        assert client.stats()["current-jobs-ready"] == len(acked) - 1
        for jid in acked[1:]:
            assert client.stats_job(jid)["state"] == "ready"
        later = client.put(b"after the failover")
    assert len(set(acked)) == len(acked) and acked == sorted(acked)
    assert later > max(acked)  # ids stay unique and rising across leaders


def test_a_woken_old_leader_acknowledges_nothing(cluster: Nodes) -> None:
    old = cluster.leader()
    acked = put_many(old.address, 5)
    held = socket.create_connection(old.address, timeout=20)  # open before the pause
    assert old.process is not None
    os.kill(old.process.pid, signal.SIGSTOP)
    try:
        held.sendall(b"reserve-with-timeout 0\r\nput 0 0 60 3\r\nnew\r\n")
        new = cluster.leader(besides=old)
    finally:
        os.kill(old.process.pid, signal.SIGCONT)
    assert read_all(held) == b""  # no job handed out, no put acknowledged
    with greenstalk.Client(new.address) as client:
        assert client.stats()["current-jobs-ready"] == len(acked)
        assert client.stats()["current-jobs-reserved"] == 0
    cluster.followers_agree(new)  # the old leader came back as a follower
    assert old.process.poll() is None


def read_all(sock: socket.socket) -> bytes:
    """What the server sent before closing the connection."""
    data = b""
    with sock:
        while True:
            try:
                chunk = sock.recv(4096)
            except ConnectionResetError:
                return data
            if not chunk:
                return data
            data += chunk


def test_a_node_waits_for_etcd_and_says_who_leads(tmp_path: Path) -> None:
    """With no etcd member answering, a node keeps trying (it may have stepped down while
    etcd lost its quorum) and its /leader says no leader is known."""
    nowhere = f"127.0.0.11:{free_port('127.0.0.11')}"
    nodes = Nodes(nowhere, "lonely", tmp_path)
    node = Node("n1", "127.0.0.11", free_port("127.0.0.11"), free_port("127.0.0.11"),
                tmp_path / "n1.log")  # fmt: skip
    nodes.nodes.append(node)
    nodes.launch(node)
    try:
        deadline = time.monotonic() + 30
        while node.leader() is None or "not usable yet" not in node.log.read_text():
            assert node.alive() and time.monotonic() < deadline
            time.sleep(0.1)
        assert node.leader() == (503, {"leader": None})
    finally:
        nodes.stop()


def test_large_pipelined_puts_split_into_batches_survive(cluster: Nodes) -> None:
    """More than a transaction's 1 MiB of records at once: split into several appends,
    every one acknowledged and kept across a leader kill."""
    leader = cluster.leader()
    body = b"y" * 60_000
    with socket.create_connection(leader.address, timeout=30) as sock:
        sock.sendall(b"".join(b"put 0 0 60 %d\r\n%s\r\n" % (len(body), body) for _ in range(60)))
        replies = b""
        while replies.count(b"\r\n") < 60:
            replies += sock.recv(4096)
    ids = [int(line.split()[1]) for line in replies.split(b"\r\n")[:60]]
    assert leader.process is not None
    os.kill(leader.process.pid, signal.SIGKILL)
    leader.process.wait()
    with greenstalk.Client(cluster.leader(besides=leader).address) as client:
        assert client.stats()["current-jobs-ready"] == 60
        assert client.peek(ids[-1]).body == body.decode()
