"""Through the Redis door, the write-ahead log keeps what was acknowledged: after kill -9
and a restart, qless-py's worker (resuming the job it held) completes every job once."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from tests.integration import redis_door_jobs
from tests.qless_clients import QlessClients
from tests.support.servers import SubprocessServer

qless: Any = pytest.importorskip("qless", reason="qless-py 0.11.4 is not installed")
pytestmark = pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated")
KLASS = "tests.integration.redis_door_jobs.Door"


def start(wal: Path, clients: QlessClients) -> tuple[SubprocessServer, Any]:
    server = SubprocessServer(["-b", str(wal), "--redis-port", "0", "--http", "off"]).start()
    client = clients(f"redis://127.0.0.1:{server.listener_port('Redis')}")
    client.worker_name = "serial"
    return server, client


def test_worker_across_a_crash_completes_every_job_once(
    tmp_path: Path, qless_clients: QlessClients
) -> None:
    server, client = start(tmp_path / "wal", qless_clients)
    try:
        jids = [client.queues["door"].put(KLASS, {"n": n}, jid=f"d{n}") for n in range(6)]
        first = client.queues["door"].pop()
        assert first.complete() == "complete"
        held = client.queues["door"].pop()  # locked by "serial" when the server dies
    finally:
        server.kill()
    server, client = start(tmp_path / "wal", qless_clients)
    try:
        assert client.jobs[first.jid].state == "complete"
        assert client.jobs[held.jid].state == "running"
        serial = importlib.import_module("qless.workers.serial")
        worker = serial.SerialWorker(["door"], client, interval=0.05, resume=True,
                                     sandbox=str(tmp_path / "sandbox"))  # fmt: skip
        done = redis_door_jobs.run_worker(worker, 5)
        assert sorted(done) == sorted(set(jids) - {first.jid})
        assert [client.jobs[jid].state for jid in jids] == ["complete"] * 6
    finally:
        server.stop()
