"""The log in etcd is trimmed below the checkpoint two nodes hold and etcd compacted, so
its key count stays bounded; acknowledged jobs survive kill -9 of the leader after a
trim; a node down past the trim point comes back from a peer's checkpoint and can lead."""

from __future__ import annotations

import itertools
import os
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import greenstalk
import pytest
from bench.cluster_nodes import Node, Nodes
from bench.etcd_gateway import compacted, count, value
from bench.etcd_members import EtcdMembers

from tests.integration.cluster.marks import needs_etcd

pytestmark = needs_etcd

CHECKPOINT_BATCHES = 5
# a checkpoint every 5 batches, a trim every 0.3 s, a defragmentation at most every 2 s
TUNING = ("--checkpoint-batches", str(CHECKPOINT_BATCHES), "--trim-every", "0.3",
          "--defrag-every", "2")  # fmt: skip
_names = itertools.count()


@pytest.fixture
def trimmed(etcd: EtcdMembers, tmp_path: Path) -> Iterator[Nodes]:
    """Three nodes keeping checkpoints in -b DIR, trimming often."""
    name = f"trim{next(_names)}-{tmp_path.name}"
    nodes = Nodes(etcd.endpoints, name, tmp_path, extra=TUNING, checkpoints=True).start()
    yield nodes
    nodes.stop()


@pytest.fixture
def with_token(etcd: EtcdMembers, tmp_path: Path) -> Iterator[Nodes]:
    """As `trimmed`, every node with the same --http-token."""
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    name = f"token{next(_names)}-{tmp_path.name}"
    extra = (*TUNING, "--http-token", str(token))
    nodes = Nodes(etcd.endpoints, name, tmp_path, extra=extra, checkpoints=True).start()
    yield nodes
    nodes.stop()


def put_each(address: tuple[str, int], count: int, tag: str) -> list[int]:
    """Serial puts: each one its own batch in the log."""
    with greenstalk.Client(address) as client:
        return [client.put(f"{tag} {n}".encode()) for n in range(count)]


def wait_for(what: Callable[[], bool], seconds: float, why: str) -> None:
    deadline = time.monotonic() + seconds
    while not what():
        assert time.monotonic() < deadline, why
        time.sleep(0.1)


def kill(node: Node) -> None:
    assert node.process is not None
    os.kill(node.process.pid, signal.SIGKILL)
    node.process.wait()


def all_there(node: Node, acked: list[int], deleted: int) -> None:
    """Every acknowledged job but `deleted` is on `node`, which puts one more (acked)."""
    with greenstalk.Client(node.address) as client:
        assert client.stats()["current-jobs-ready"] == len(acked) - 1
        for jid in acked:
            if jid != deleted:
                assert client.stats_job(jid)["state"] == "ready"
        with pytest.raises(greenstalk.NotFoundError):
            client.stats_job(deleted)
        acked.append(client.put(b"after"))
    assert acked[-1] > max(acked[:-1])


def test_the_log_stays_bounded_and_etcd_is_compacted(trimmed: Nodes, etcd: EtcdMembers) -> None:
    member, log = etcd.members[0].client, f"/beanpod/{trimmed.name}/log/"
    leader = trimmed.leader()
    trimmed.followers_agree(leader)
    acked = put_each(leader.address, 400, "job")
    with greenstalk.Client(leader.address) as client:
        client.delete(acked[0])
    wait_for(lambda: int(value(member, f"/beanpod/{trimmed.name}/trim") or 0) > 350, 30,
             "the log was not trimmed near its end")  # fmt: skip
    assert count(member, log) < 60  # of 400 batches and more
    assert compacted(member, log)  # the deleted batches' history is gone too
    kill(leader)
    new = trimmed.leader(besides=leader)
    all_there(new, acked, acked[0])
    trimmed.launch(leader)  # it comes back from its checkpoint, written as the leader
    wait_for(lambda: "loaded" in leader.log.read_text(), 30, "no checkpoint loaded")
    trimmed.followers_agree(new)
    for node in trimmed.nodes:
        if node is not leader:
            kill(node)
    assert trimmed.leader() is leader
    all_there(leader, acked, acked[0])


def test_a_node_down_past_the_trim_point_catches_up_from_a_peer(
    with_token: Nodes, etcd: EtcdMembers
) -> None:
    trimmed = with_token  # peers send the cluster's token for a checkpoint
    member, prefix = etcd.members[0].client, f"/beanpod/{trimmed.name}/"
    leader = trimmed.leader()
    trimmed.followers_agree(leader)
    away, other = [node for node in trimmed.nodes if node is not leader]
    acked = put_each(leader.address, 30, "before")
    kill(away)
    acked += put_each(leader.address, 200, "while away")
    with greenstalk.Client(leader.address) as client:
        client.delete(acked[0])
    wait_for(lambda: int(value(member, prefix + "trim") or 0) > 180, 30,
             "the log was not trimmed past the stopped node")  # fmt: skip

    url = f"http://{leader.host}:{leader.http}/cluster/checkpoint"
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(url, timeout=5)  # it holds every job: not without the token
    refused.value.close()
    assert refused.value.code == 401
    trimmed.launch(away)
    wait_for(away.ready, 30, "the node did not come back")
    trimmed.followers_agree(leader)
    said = away.log.read_text()
    assert f"took {leader.node_id}'s checkpoint" in said or f"took {other.node_id}'s" in said
    kill(leader)
    kill(other)
    assert trimmed.leader(besides=leader) is away
    all_there(away, acked, acked[0])
