"""The qless worker loop against a live server."""

from __future__ import annotations

import threading

from beanpod.client.qless import Client, Job
from beanpod.client.qless_worker import Worker
from tests.support.servers import InProcessServer


def test_worker_completes_fails_and_stops(server: InProcessServer) -> None:
    seen: list[str] = []

    def handler(job: Job) -> None:
        seen.append(job.queue_name)
        if job.data.get("boom"):
            raise RuntimeError("boom")

    def connect() -> Client:
        return Client(port=server.port, worker_name="wk")

    with connect() as c:
        c.queues["low"].put("K", {}, jid="l1")
        c.queues["high"].put("K", {}, jid="h1")
        c.queues["high"].put("K", {"boom": True}, jid="h2")
        worker = Worker(connect, ["high", "low"], handler, interval=0.05)
        assert worker.run(max_jobs=3) == 3
        assert seen == ["high", "high", "low"]
        assert c.jobs["h1"].state == "complete"  # type: ignore[union-attr]
        assert c.jobs.failed() == {"K:RuntimeError": 1}
        stopper = threading.Timer(0.2, worker.stop)
        stopper.start()
        assert worker.run() == 3  # nothing left: it idles until stopped
        worker.client.close()


def test_worker_heartbeats_long_jobs(server: InProcessServer) -> None:
    with Client(port=server.port, worker_name="wk") as c:
        c.config["heartbeat"] = 0.3
        c.config["grace-period"] = 0
        c.queues["q"].put("K", {}, jid="slow")
        done = threading.Event()

        def handler(job: Job) -> None:
            done.wait(1.0)  # three lock lengths

        worker = Worker(lambda: Client(port=server.port, worker_name="wk"), ["q"], handler)
        threading.Timer(0.9, done.set).start()
        assert worker.run(max_jobs=1) == 1
        assert c.jobs["slow"].state == "complete"  # type: ignore[union-attr]
        worker.client.close()
