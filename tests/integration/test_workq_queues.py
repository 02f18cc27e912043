"""Workq queues persist as the reference's do: once add, schedule, run or lease creates a
queue it stays listed, with ready-len 0 / scheduled-len 0 once its jobs are gone, and
(with -b) across restarts, clean or kill -9. beanstalkd's own rule is unchanged: an empty,
unwatched tube leaves list-tubes. The first tests also run against the reference server
when WORKQ_SERVER names its binary."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from beanpod.client.workq import Client, ClientError, NotFound, TimedOut
from tests.support.servers import SubprocessServer
from tests.support.workq_reference import ReferenceWorkq, reference_binary
from tests.support.workq_server import WorkqServer, new_id, wq_server

__all__ = ["wq_server"]
EMPTY = {"ready-len": 0, "scheduled-len": 0}


@pytest.fixture(params=["beanpod", "reference"])
def client(request: pytest.FixtureRequest) -> Iterator[Client]:
    if request.param == "reference":
        ref = ReferenceWorkq(reference_binary()).start()
        with Client(("127.0.0.1", ref.port), timeout=10) as c:
            yield c
        ref.stop()
        return
    srv = WorkqServer(workq_port=0)
    srv.start()
    with srv.client() as c:
        yield c
    srv.stop()


def test_a_queue_outlives_its_last_job(client: Client) -> None:
    jid, later = new_id(), new_id()
    client.add(jid, "emptied", 1000, 60_000, b"x")
    client.delete(jid)
    client.schedule(later, "sched", 1000, 60_000, datetime.now(UTC) + timedelta(hours=1), b"")
    client.delete(later)
    assert client.inspect_queue("emptied") == EMPTY
    assert client.inspect_queue("sched") == EMPTY
    queues = client.inspect_queues(0, 100)
    assert queues["emptied"] == EMPTY and queues["sched"] == EMPTY
    assert client.inspect_jobs("emptied") == []
    assert client.inspect_scheduled_jobs("sched") == []


def test_run_and_lease_create_queues(client: Client) -> None:
    with pytest.raises(TimedOut):
        client.run(new_id(), "ran", 1000, 0, b"")
    with pytest.raises(TimedOut):
        client.lease(["watched", "also"], 0)
    for name in ("ran", "watched", "also"):
        assert client.inspect_queue(name) == EMPTY


def test_refused_commands_create_no_queue_but_names_before_a_bad_one_do(
    client: Client,
) -> None:
    with pytest.raises(ClientError, match="Invalid TTR"):
        client.add(new_id(), "refused", 0, 60_000, b"")
    with pytest.raises(ClientError, match="Invalid wait timeout"):
        client.lease(["bad#", "late"], 86_400_001)  # the timeout is checked first
    with pytest.raises(ClientError, match="Invalid Name"):
        client.lease(["early", "bad#"], 0)
    for name in ("refused", "late"):
        with pytest.raises(NotFound):
            client.inspect_queue(name)
    assert client.inspect_queue("early") == EMPTY


def _list_tubes(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"list-tubes\r\n")
        data = b""
        while b"\r\n" not in data:
            data += sock.recv(65536)
        head, _, body = data.partition(b"\r\n")  # OK <bytes>, then the YAML and CRLF
        while len(body) < int(head.split()[1]) + 2:
            body += sock.recv(65536)
        return body


def test_beanstalkd_still_forgets_an_empty_tube(wq_server: WorkqServer) -> None:
    with wq_server.client() as c:
        jid = new_id()
        c.add(jid, "wq-only", 1000, 60_000, b"x")
        assert b"- wq-only\n" in _list_tubes(wq_server.port)
        c.delete(jid)
        assert c.inspect_queue("wq-only") == EMPTY
    assert b"wq-only" not in _list_tubes(wq_server.port)


def _workq_client(server: SubprocessServer) -> Client:
    return Client(("127.0.0.1", server.workq_port()), timeout=10)


@pytest.mark.parametrize("crash", [False, True], ids=["SIGTERM", "kill -9"])
def test_queues_survive_restarts(tmp_path: Path, crash: bool) -> None:
    server = SubprocessServer(["-b", str(tmp_path)]).start()
    with _workq_client(server) as c:
        jid = new_id()
        c.add(jid, "gone", 1000, 60_000, b"x")
        c.delete(jid)
        with pytest.raises(TimedOut):
            c.lease(["leased-only"], 0)
        c.add(new_id(), "kept", 1000, 60_000, b"y")
    server.kill() if crash else server.stop()
    for _ in range(2):  # and again: compaction or replay must not drop them
        server = SubprocessServer(["-b", str(tmp_path)]).start()
        with _workq_client(server) as c:
            queues = c.inspect_queues(0, 100)
            assert queues["gone"] == EMPTY and queues["leased-only"] == EMPTY
            assert queues["kept"] == {"ready-len": 1, "scheduled-len": 0}
        server.kill() if crash else server.stop()


def test_queues_survive_compaction(tmp_path: Path) -> None:
    """Small segments and churn: the segment holding a queue's record is compacted away
    and the record carried forward. Checkpoints off: a builder started by a pause in the
    churn (a loaded machine) keeps every segment until it ends, whatever compaction did."""
    args = ["-b", str(tmp_path), "-s", "4096", "--checkpoint-floor", "0"]
    server = SubprocessServer(args).start()
    with _workq_client(server) as c:
        jid = new_id()
        c.add(jid, "first", 1000, 60_000, b"x")
        c.delete(jid)
        for n in range(400):  # ~100 segments of add + delete
            churn = new_id()
            c.add(churn, "churn", 1000, 60_000, b"%d" % n + b"." * 200)
            c.delete(churn)
    first_segment_gone = not (tmp_path / "0000000001.wal").exists()
    server.stop()
    server = SubprocessServer(args).start()
    with _workq_client(server) as c:
        assert c.inspect_queue("first") == EMPTY
    server.stop()
    assert first_segment_gone  # the queue's record was carried forward by compaction
