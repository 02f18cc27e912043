"""Throttles over a socket, through the Python client."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from beanpod.client.qless import Client
from tests.support.servers import InProcessServer


@pytest.fixture
def client(server: InProcessServer) -> Iterator[Client]:
    with Client(port=server.port, worker_name="w1") as c:
        yield c


def test_named_throttle_caps_running_jobs_across_queues(client: Client) -> None:
    db = client.throttles["db"]
    db.maximum = 1
    assert db.maximum == 1 and db.ttl() == -1
    a = client.queues["q1"].put("K", {}, throttles=["db"])
    b = client.queues["q2"].put("K", {}, throttles=["db"])
    [job] = client.queues["q1"].pop(5)
    assert job.throttles == ["db", "ql:q:q1"]
    assert client.queues["q2"].pop(5) == []
    assert (db.locks(), db.pending()) == ([a], [b])
    assert client.jobs[b].state == "throttled"  # type: ignore[union-attr]
    assert client.queues["q2"].counts["throttled"] == 1
    job.complete()
    [other] = client.queues["q2"].pop(5)
    assert other.jid == b and db.locks() == [b]


def test_queue_throttle(client: Client) -> None:
    queue = client.queues["q"]
    queue.throttle.maximum = 2
    for _ in range(5):
        queue.put("K", {})
    assert len(queue.pop(5)) == 2
    assert len(queue.jobs("throttled")) == 3
    assert client.call("queue.throttle.get", "q") == {"id": "ql:q:q", "maximum": 2}


def test_worker_field_after_timeout(client: Client) -> None:
    client.queues["q"].put("K", {}, jid="a")
    [job] = client.queues["q"].pop()
    job.timeout()
    stalled = client.jobs["a"]
    assert (stalled.state, stalled.worker_name) == ("stalled", "w1")  # type: ignore[union-attr]


def test_recurring_children_rank_by_intended_time(client: Client) -> None:
    # Both children are due at the pop; the first was due before `b` was put.
    client.queues["q"].put("K", {}, jid="a")
    client.queues["q"].recur("K", {}, interval=0.2, offset=0, jid="r")
    time.sleep(0.25)
    client.queues["q"].put("K", {}, jid="b")
    jids = [job.jid for job in client.queues["q"].pop(10)]
    assert jids.index("a") < jids.index("r-1") < jids.index("r-2") < jids.index("b")
