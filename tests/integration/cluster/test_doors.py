"""The Workq and Redis (qless) doors on a cluster: what the leader acknowledges survives
kill -9 of it; a follower's doors change nothing and name the leader."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench.etcd_members import EtcdMembers

from beanpod.client.workq import NotFound, ServerError
from tests.integration.cluster.door_nodes import DoorNodes, door_cluster
from tests.integration.cluster.marks import needs_etcd
from tests.integration.cluster.test_failover import read_all
from tests.support.workq_server import new_id

qless: Any = pytest.importorskip("qless", reason="qless-py 0.11.4 is not installed")
redis: Any = pytest.importorskip("redis")
pytest.importorskip("qless.exceptions")
pytestmark = [needs_etcd, pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated")]
KLASS = "tests.integration.redis_door_jobs.Door"


@pytest.fixture
def doors(etcd: EtcdMembers, tmp_path: Path) -> Iterator[DoorNodes]:
    yield from door_cluster(etcd, tmp_path)


def test_workq_and_qless_jobs_survive_kill_of_the_leader(doors: DoorNodes) -> None:
    leader = doors.leader()
    doors.followers_agree(leader)
    ids = [new_id() for _ in range(40)]
    with doors.workq(leader) as c:
        for n, job_id in enumerate(ids):
            c.add(job_id, "q", 60_000, 600_000, b"w%d" % n)
        c.delete(ids[0])  # an acknowledged delete is not undone either
        c.complete(c.lease("q", 0).id, b"done")
    queue = doors.qless(leader).queues["door"]
    jids = [queue.put(KLASS, {"n": n}, jid=f"j{n}") for n in range(20)]
    assert queue.pop().complete() == "complete"  # j0: an acknowledged completion
    assert leader.process is not None
    os.kill(leader.process.pid, signal.SIGKILL)
    leader.process.wait()

    new = doors.leader(besides=leader)
    with doors.workq(new) as c:
        with pytest.raises(NotFound):
            c.inspect_job(ids[0])
        states = [c.inspect_job(job_id)["state"] for job_id in ids[1:]]
        assert c.inspect_queue("q")["ready-len"] == len(ids) - 2
    assert states == [b"1"] + [b"0"] * (len(ids) - 2)  # COMPLETED (1), the rest NEW (0)
    client = doors.qless(new)
    assert client.jobs[jids[0]].state == "complete"
    assert [client.jobs[jid].state for jid in jids[1:]] == ["waiting"] * (len(jids) - 1)


def test_a_followers_doors_change_nothing_and_name_the_leader(doors: DoorNodes) -> None:
    """Each door's refusal names the leader's address for that door (its leader key and
    GET /leader carry them beside the beanstalkd address)."""
    leader = doors.leader()
    doors.followers_agree(leader)  # their /leader: 503 naming all three of its doors
    assert leader.leader() == (200, leader.key_value())
    assert {"workq", "redis"} <= set(leader.key_value())
    follower = next(node for node in doors.nodes if node is not leader)
    workq_at, redis_at = f"{leader.host}:{leader.workq}", f"{leader.host}:{leader.redis}"
    job_id = new_id()
    with doors.workq(follower) as c:
        named = f"leader: {leader.node_id} at {workq_at}"
        with pytest.raises(ServerError, match=f"^Not the leader \\({named}\\)$"):
            c.add(job_id, "q", 60_000, 600_000, b"refused")
        with pytest.raises(ServerError, match=f"^Not the leader \\({named}\\)$"):
            c.inspect_queue("q")  # the connection stays
    named = f"leader: {leader.node_id} at {redis_at}"
    client = doors.qless(follower)
    with pytest.raises(qless.exceptions.QlessException, match=f"Not the leader \\({named}\\)"):
        client.queues["door"].put(KLASS, {}, jid="refused")  # qless-py wraps ReadOnlyError
    with pytest.raises(redis.exceptions.ReadOnlyError, match=f"^Not the leader \\({named}\\)$"):
        client.redis.get("any")
    assert client.redis.ping() is True  # the door still answers PING
    with doors.workq(leader) as c, pytest.raises(NotFound):
        c.inspect_job(job_id)
    assert doors.qless(leader).jobs["refused"] is None


def test_the_leaders_doors_answer_nothing_uncommitted(doors: DoorNodes, etcd: EtcdMembers) -> None:
    """With etcd stalled, a Workq add and the Redis replies sent meanwhile are held (as a
    beanstalkd put's): the leader steps down and both connections close unanswered."""
    leader = doors.leader()
    workq = socket.create_connection(doors.workq_address(leader), timeout=30)
    door = socket.create_connection(doors.redis_address(leader), timeout=30)
    pids = [m.process.pid for m in etcd.members if m.process is not None]
    for pid in pids:  # etcd stalls: the add's append cannot commit
        os.kill(pid, signal.SIGSTOP)
    try:
        workq.sendall(b"add %s q 60000 600000 6\r\nunsure\r\n" % new_id().encode())
        door.sendall(b"*1\r\n$4\r\nPING\r\n")  # shows nothing, but waits all the same
        workq_saw, door_saw = read_all(workq), read_all(door)  # until the leader steps down
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    assert (workq_saw, door_saw) == (b"", b"")
    new = doors.leader(seconds=60)
    with doors.workq(new) as c:  # the cluster serves Workq again
        c.add(new_id(), "q", 60_000, 600_000, b"later")


def test_sigterm_of_the_leader_under_workq_and_redis_load_exits(doors: DoorNodes) -> None:
    """SIGTERM while Workq and Redis clients send: the leader stops reading every door
    before its log's last append, gives the key up and exits (it used to go on reading
    Workq and Redis commands, append after giving the key up, be fenced out and re-execute
    itself as a follower: SIGTERM did not stop it)."""
    leader = doors.leader()
    doors.followers_agree(leader)
    stop = threading.Event()
    acked: list[str] = []

    def send() -> None:
        with contextlib.suppress(Exception), doors.workq(leader) as c:
            client = doors.qless(leader)
            while not stop.is_set():
                job_id = new_id()
                c.add(job_id, "q", 60_000, 600_000, b"x")
                acked.append(job_id)
                client.queues["door"].put(KLASS, {}, jid=job_id)

    senders = [threading.Thread(target=send) for _ in range(4)]
    for thread in senders:
        thread.start()
    while len(acked) < 100:
        time.sleep(0.01)
    assert leader.process is not None
    leader.process.terminate()
    try:
        assert leader.process.wait(30) == 0
    finally:
        stop.set()
        for thread in senders:
            thread.join(30)
    new = doors.leader(besides=leader)
    with doors.workq(new) as c:  # every acknowledged add is on the new leader
        assert all(c.inspect_job(job_id)["state"] == b"0" for job_id in acked)
