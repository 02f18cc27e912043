"""The qless extension over a socket, through the Python client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from beanpod.client.qless import Client, Job, QlessError
from tests.support.servers import InProcessServer


@pytest.fixture
def client(server: InProcessServer) -> Iterator[Client]:
    with Client(port=server.port, worker_name="w1") as c:
        yield c


def test_put_pop_complete(client: Client) -> None:
    queue = client.queues["emails"]
    jid = queue.put("app.Send", {"to": "a"}, tags=["t1"], priority=3)
    [job] = queue.pop()
    assert (job.jid, job.state, job.data, job.tags) == (jid, "running", {"to": "a"}, ["t1"])
    assert job.heartbeat() > 0
    job.data["sent"] = True
    assert job.complete() == "complete"
    done = client.jobs[jid]
    assert isinstance(done, Job)
    assert (done.state, done.data) == ("complete", {"to": "a", "sent": True})
    assert [h["what"] for h in done.history] == ["put", "popped", "done"]


def test_fail_listing_and_unfail(client: Client) -> None:
    queue = client.queues["q"]
    jid = queue.put("K", {})
    queue.pop()[0].fail("K:Boom", "it broke")
    assert client.jobs.failed() == {"K:Boom": 1}
    assert client.jobs.failed("K:Boom") == {"total": 1, "jobs": [jid]}
    assert client.unfail("K:Boom", "q") == 1
    assert queue.peek()[0].jid == jid


def test_errors_are_readable(client: Client) -> None:
    queue = client.queues["q"]
    queue.put("K", {}, jid="j1")
    with pytest.raises(QlessError, match="not currently running: waiting"):
        client.call("complete", "j1", "w1", "q", "{}")
    with pytest.raises(QlessError, match="does not exist"):
        client.call("heartbeat", "nope", "w1")
    [job] = queue.pop()
    job.worker_name = "other"
    with pytest.raises(QlessError, match="another worker"):
        job.heartbeat()
    with pytest.raises(QlessError, match="Unknown command"):
        client.call("frobnicate")


def test_retry_and_config(client: Client) -> None:
    client.config["heartbeat"] = 30
    assert client.config["heartbeat"] == 30
    assert client.config.all()["grace-period"] == 10
    del client.config["heartbeat"]
    assert client.config["heartbeat"] == 60
    queue = client.queues["q"]
    queue.put("K", {}, retries=1)
    assert queue.pop()[0].retry() == 0
    assert queue.pop()[0].retry() == -1
    assert list(client.jobs.failed()) == ["failed-retries-q"]


def test_dependencies_tags_recurring_stats(client: Client) -> None:
    queue = client.queues["q"]
    a = queue.put("K", {}, tags=["x"])
    b = queue.put("K", {}, depends=[a], tags=["x"])
    assert client.jobs[b].state == "depends"  # type: ignore[union-attr]
    assert client.tags() == ["x"]
    queue.pop()[0].complete()
    assert client.jobs[b].state == "waiting"  # type: ignore[union-attr]
    rjid = client.queues["r"].recur("K", {"n": 1}, interval=60, offset=0)
    [child] = client.queues["r"].pop()
    assert child.jid == f"{rjid}-1"
    stats = queue.stats()
    assert stats["wait"]["count"] == 1 and stats["run"]["count"] == 1
    assert len(stats["wait"]["histogram"]) == 148
    assert client.workers.counts[0]["name"] == "w1"


def test_multi_queue_pop_round_robin(client: Client) -> None:
    for name in ("a", "b"):
        for _ in range(2):
            client.queues[name].put("K", {})
    order = [client.call("pop", ["a", "b"], "w1", 1, "round-robin")[0]["queue"]
             for _ in range(4)]  # fmt: skip
    assert order == ["a", "b", "a", "b"]


def test_malformed_requests(server: InProcessServer) -> None:
    sock = server.connect()
    sock.sendall(b"qless 3\r\nxyz\r\nqless x\r\n")
    reply = b""
    while reply.count(b"\r\n") < 2:
        reply += sock.recv(4096)
    assert reply.startswith(b"QLESS_ERROR malformed request")
    assert reply.endswith(b"BAD_FORMAT\r\n")
    sock.close()
