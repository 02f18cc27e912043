"""One engine, two front doors: Workq jobs seen and worked through beanstalkd
(greenstalk), beanstalkd jobs seen and worked through Workq; the CLI listener flags."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator

import greenstalk
import pytest

from beanpod.client.workq import Client, NotFound
from beanpod.core.workq.ext import synthetic_uuid
from tests.support.servers import SubprocessServer
from tests.support.workq_server import WorkqServer, new_id, wq, wq_server

__all__ = ["wq", "wq_server"]
Make = Callable[[], Client]


@pytest.fixture
def bean(wq_server: WorkqServer) -> Iterator[Callable[..., greenstalk.Client]]:
    clients: list[greenstalk.Client] = []

    def make(**kwargs: object) -> greenstalk.Client:
        client = greenstalk.Client(("127.0.0.1", wq_server.port), encoding=None, **kwargs)  # type: ignore[arg-type]
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def test_workq_jobs_in_beanstalkd_stats_and_tubes(
    wq: Make, bean: Callable[..., greenstalk.Client]
) -> None:
    c = wq()
    c.add(new_id(), "wq-tube", 1500, 60_000, b"a")
    c.add(new_id(), "wq-tube", 1500, 60_000, b"b")
    c.lease("wq-tube", 0)
    g = bean()
    assert "wq-tube" in g.tubes()
    tube = g.stats_tube("wq-tube")
    assert (tube["current-jobs-ready"], tube["current-jobs-reserved"], tube["total-jobs"]) == (
        1, 1, 2,
    )  # fmt: skip
    stats = g.stats()
    assert stats["current-jobs-ready"] == 1 and stats["current-jobs-reserved"] == 1


def test_beanstalkd_reserves_and_deletes_a_workq_job(
    wq: Make, bean: Callable[..., greenstalk.Client]
) -> None:
    c = wq()
    jid = new_id()
    c.add(jid, "shared", 3000, 60_000, b"payload", priority=100)
    g = bean(watch="shared")
    job = g.reserve(timeout=1)
    assert job.body == b"payload"
    assert g.stats_job(job)["pri"] == 2**31 - 1 - 100  # Workq priority, mapped
    assert g.stats_job(job)["ttr"] == 3  # engine ms shown in beanstalkd seconds
    assert c.inspect_job(jid)["state"] == b"4"
    g.delete(job)
    assert c.inspect_queue("shared") == {"ready-len": 0, "scheduled-len": 0}
    c.add(jid, "shared", 1000, 60_000, b"")  # the uuid is free again


def test_priorities_order_the_same_in_both_dialects(
    wq: Make, bean: Callable[..., greenstalk.Client]
) -> None:
    c = wq()
    for pri in (1, 50, -3):
        c.add(new_id(), "order", 1000, 60_000, b"%d" % pri, priority=pri)
    g = bean(watch="order")
    bodies = []
    for _ in range(3):
        job = g.reserve(timeout=1)
        bodies.append(job.body)
        g.delete(job)
    assert bodies == [b"50", b"1", b"-3"]


def test_beanstalkd_job_visible_and_leasable_through_workq(
    wq: Make, bean: Callable[..., greenstalk.Client]
) -> None:
    g = bean(use="plain")
    job_id = g.put(b"from beanstalkd", priority=2**31 - 1 - 7, ttr=5)
    c = wq()
    uuid = synthetic_uuid(job_id).decode()
    [record] = c.inspect_jobs("plain")
    assert record["id"] == uuid.encode() and record["priority"] == b"7"
    assert c.inspect_job(uuid)["payload"] == b"from beanstalkd"
    leased = c.lease("plain", 0)
    assert (leased.id, leased.ttr, leased.payload) == (uuid, 5000, b"from beanstalkd")
    c.complete(uuid, b"ok")
    assert g.stats_tube("plain")["current-jobs-ready"] == 0
    with pytest.raises(greenstalk.NotFoundError):
        g.stats_job(job_id)  # no TTL to keep a result under: gone once completed


def _logged(server: SubprocessServer, pattern: str, timeout: float = 5) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(re.search(pattern, line) for line in server.log):
            return True
        time.sleep(0.02)
    return False


def test_serve_opens_the_workq_listener_and_can_disable_it() -> None:
    workq_line = r"listening on 127\.0\.0\.1:(\d+) \(Workq protocol\)"
    server = SubprocessServer().start()  # -p 0: Workq on a free port too
    try:
        assert _logged(server, workq_line)
        port = int(next(m[1] for line in server.log if (m := re.search(workq_line, line))))
        with Client(("127.0.0.1", port)) as c:
            assert c.inspect_server()["evicted-jobs"] == "0"
    finally:
        server.stop()
    server = SubprocessServer(["--workq-port", "off"]).start()
    server.stop()
    assert not any("Workq" in line for line in server.log)


def test_finished_workq_job_is_not_buried_and_beanstalkd_can_delete_it(
    wq: Make, bean: Callable[..., greenstalk.Client]
) -> None:
    c = wq()
    jid = new_id()
    c.add(jid, "fin", 1000, 60_000, b"")
    c.complete(jid, b"r")
    g = bean(use="fin")
    assert g.stats()["current-jobs-buried"] == 0
    job_id = 1  # each test gets a fresh server: the first job has id 1
    assert g.stats_job(job_id)["state"] == "complete"
    g.delete(job_id)
    with pytest.raises(NotFound):
        c.result(jid, 0)
