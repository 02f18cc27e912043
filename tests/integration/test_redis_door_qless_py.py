"""qless-py 0.11.4 (the registry's, unchanged) against `beanpod serve --redis-port`: its
client, its serial worker and its events, and jobs crossing to and from beanpod's own
qless client on the beanstalkd port of the same server."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from beanpod.client.qless import Client as BeanpodClient
from beanpod.client.qless import Job as BeanpodJob
from beanpod.client.qless_worker import Worker as BeanpodWorker
from tests.integration import redis_door_jobs
from tests.qless_clients import QlessClients
from tests.support.servers import SubprocessServer

qless: Any = pytest.importorskip("qless", reason="qless-py 0.11.4 is not installed")
# qless-py (2016) logs with Logger.warn.
pytestmark = pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated")


@pytest.fixture
def door() -> Iterator[tuple[SubprocessServer, int]]:
    server = SubprocessServer(["--redis-port", "0", "--http", "off"]).start()
    try:
        yield server, server.listener_port("Redis")
    finally:
        server.stop()


def test_qless_py_puts_pops_and_completes(
    door: tuple[SubprocessServer, int], qless_clients: QlessClients
) -> None:
    client = qless_clients(f"redis://127.0.0.1:{door[1]}")
    queue = client.queues["testing"]
    jid = queue.put(qless.Job, {"answer": 42}, tags=["a"], priority=3)
    assert len(queue) == 1
    job = queue.pop()
    assert (job.jid, job.data, job.tags, job.priority) == (jid, {"answer": 42}, ["a"], 3)
    assert job.heartbeat() > 0
    assert job.complete() == "complete"
    assert client.jobs[jid].state == "complete"
    assert queue.pop() is None
    assert client.config["heartbeat"] == 60


def test_failure_retry_and_errors(
    door: tuple[SubprocessServer, int], qless_clients: QlessClients
) -> None:
    client = qless_clients(f"redis://127.0.0.1:{door[1]}")
    queue = client.queues["q"]
    jid = queue.put(qless.Job, {}, retries=0)
    job = queue.pop()
    assert job.fail("grp", "it broke\nbadly") == jid
    assert client.jobs.failed() == {"grp": 1}
    assert client.jobs.failed("grp")["jobs"][0].jid == jid
    with pytest.raises(qless.exceptions.QlessException, match="user_script:1: Complete"):
        client("complete", jid, client.worker_name, "q", "{}")


def test_recurring_job_next_run_via_zscore(
    door: tuple[SubprocessServer, int], qless_clients: QlessClients
) -> None:
    client = qless_clients(f"redis://127.0.0.1:{door[1]}")
    jid = client.queues["r"].recur(qless.Job, {}, interval=60, offset=30)
    recurring = client.jobs[jid]
    assert recurring.interval == 60
    assert recurring.next > 0  # ZSCORE ql:q:r-recur <jid>
    delayed = client.queues["r"].put(qless.Job, {}, delay=100)
    score = client.redis.zscore("ql:q:r-scheduled", delayed)
    assert score is not None and score > 0


def test_crossing_to_and_from_the_beanpod_client(
    door: tuple[SubprocessServer, int], qless_clients: QlessClients
) -> None:
    server, port = door
    theirs = qless_clients(f"redis://127.0.0.1:{port}")
    with BeanpodClient(port=server.port, worker_name="bp") as ours:
        jid = theirs.queues["cross"].put(qless.Job, {"from": "qless-py"})
        [job] = ours.queues["cross"].pop()
        assert (job.jid, job.data) == (jid, {"from": "qless-py"})
        job.complete()
        assert theirs.jobs[jid].state == "complete"
        ours.queues["cross"].put("qless.Job", {"from": "beanpod"}, jid="b1")
        popped = theirs.queues["cross"].pop()
        assert (popped.jid, popped.data) == ("b1", {"from": "beanpod"})
        popped.complete()
        assert ours.jobs["b1"].state == "complete"  # type: ignore[union-attr]


def test_qless_py_worker_runs_jobs_put_by_beanpod(
    door: tuple[SubprocessServer, int], tmp_path: Path, qless_clients: QlessClients
) -> None:
    server, port = door
    with BeanpodClient(port=server.port) as ours:
        for n in range(5):
            ours.queues["door"].put("tests.integration.redis_door_jobs.Door", {"n": n},
                                    jid=f"w{n}")  # fmt: skip
    client = qless_clients(f"redis://127.0.0.1:{port}")
    client.worker_name = "serial"
    serial = importlib.import_module("qless.workers.serial")
    worker = serial.SerialWorker(["door"], client, interval=0.05,
                                               sandbox=str(tmp_path / "sandbox"))  # fmt: skip
    done = redis_door_jobs.run_worker(worker, 5)  # it stops itself after the fifth
    assert [f"w{n}" for n in range(5)] == done
    with BeanpodClient(port=server.port) as ours:
        assert [ours.jobs[f"w{n}"].state for n in range(5)] == ["complete"] * 5  # type: ignore[union-attr]


def test_events_reach_qless_py_subscribers(
    door: tuple[SubprocessServer, int], qless_clients: QlessClients
) -> None:
    client = qless_clients(f"redis://127.0.0.1:{door[1]}")
    seen: list[tuple[str, str]] = []
    got = threading.Event()

    def on(kind: str) -> Any:
        def callback(data: Any) -> None:
            seen.append((kind, data.decode() if isinstance(data, bytes) else data))
            if kind == "completed":
                got.set()

        return callback

    client.events.on("popped", on("popped"))
    client.events.on("completed", on("completed"))
    queue = client.queues["ev"]
    jid = queue.put(qless.Job, {})
    client.jobs[jid].track()
    with client.events.thread():
        while not client.events._pubsub.subscribed:  # the thread has subscribed
            threading.Event().wait(0.01)
        queue.pop().complete()
        assert got.wait(10)
    assert seen == [("popped", jid), ("completed", jid)]


def test_beanpod_worker_runs_jobs_put_by_qless_py(
    door: tuple[SubprocessServer, int], qless_clients: QlessClients
) -> None:
    server, port = door
    theirs = qless_clients(f"redis://127.0.0.1:{port}")
    jids = [theirs.queues["mixed"].put(qless.Job, {"n": n}) for n in range(3)]
    seen: list[tuple[str, int]] = []

    def handler(job: BeanpodJob) -> None:
        seen.append((job.jid, job.data["n"]))

    worker = BeanpodWorker(lambda: BeanpodClient(port=server.port, worker_name="bw"),
                           ["mixed"], handler, interval=0.05)  # fmt: skip
    assert worker.run(max_jobs=3) == 3
    worker.client.close()
    assert seen == [(jid, n) for n, jid in enumerate(jids)]
    assert [theirs.jobs[jid].state for jid in jids] == ["complete"] * 3
