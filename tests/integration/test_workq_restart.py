"""With the write-ahead log on, Workq jobs, attempts, failures and results survive a
restart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from beanpod.client.workq import ClientError, NotFound
from tests.support.workq_server import WorkqServer, new_id


def test_workq_state_survives_a_restart(tmp_path: Path) -> None:
    leased, failed, done, deleted, later = (new_id() for _ in range(5))
    when = datetime.now(UTC) + timedelta(hours=1)
    server = WorkqServer(workq_port=0, binlog_dir=str(tmp_path)).start()
    try:
        with server.client() as c:
            c.add(leased, "q", 60_000, 600_000, b"L", priority=9, max_attempts=5)
            assert c.lease("q", 0).id == leased
            c.add(failed, "q", 60_000, 600_000, b"F", max_fails=3)
            c.fail(c.lease("q", 0).id, b"first")
            c.add(done, "q", 60_000, 600_000, b"D")
            c.complete(done, b"result bytes")
            c.add(deleted, "q", 60_000, 600_000, b"X")
            c.delete(deleted)
            c.schedule(later, "s", 1000, 60_000, when, b"S")
    finally:
        server.stop()

    server = WorkqServer(workq_port=0, binlog_dir=str(tmp_path)).start()
    try:
        with server.client() as c:
            info = c.inspect_job(leased)  # a lease ends with the restart: back as PENDING
            assert (info["state"], info["attempts"], info["priority"]) == (b"3", b"1", b"9")
            assert info["max-attempts"] == b"5"
            info = c.inspect_job(failed)
            assert (info["state"], info["fails"], info["attempts"]) == (b"3", b"1", b"1")
            r = c.result(done, 0)
            assert (r.success, r.result) == (True, b"result bytes")
            with pytest.raises(ClientError, match="Duplicate job"):
                c.add(done, "q", 1000, 1000, b"")
            with pytest.raises(NotFound):
                c.inspect_job(deleted)
            [sched] = c.inspect_scheduled_jobs("s")
            assert (
                sched["id"] == later.encode()
                and sched["time"] == when.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
            )
            assert c.lease("q", 0).id == leased  # priority 9 first
    finally:
        server.stop()
