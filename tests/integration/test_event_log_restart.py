"""After a restart the event log closes every reservation the last stop cut: each job
reserved when the server was killed (or stopped) gets one `timeout` at start-up, and the
analytics count its next wait from there (docs/eventlog.md)."""

from __future__ import annotations

import json
import socket
import time
from collections import Counter
from pathlib import Path

import pytest

from beanpod.client.workq import Client as WorkqClient
from tests.support.analytics.reference import annotate_reservations, read_log
from tests.support.servers import SubprocessServer
from tests.support.wire_client import RawClient
from tests.support.workq_reference import free_port

UUID = "6ba7b810-9dad-41d1-80b4-00c04fd430c8"


def serve(wal: Path, events: Path) -> tuple[SubprocessServer, int]:
    workq_port = free_port()
    args = ["-b", str(wal), "--events", str(events), "--http", "off",
            "--workq-port", str(workq_port)]  # fmt: skip
    return SubprocessServer(args).start(), workq_port


def connect(server: SubprocessServer) -> RawClient:
    return RawClient(socket.create_connection(("127.0.0.1", server.port), timeout=10))


def reserve(client: RawClient) -> int:
    reply = client.cmd(b"reserve-with-timeout 0\r\n")
    assert reply.startswith(b"RESERVED "), reply
    return int(reply.split()[1])


def qless(client: RawClient, fn: str, *args: object) -> bytes:
    body = json.dumps({"fn": fn, "args": list(args)}).encode()
    return client.cmd(b"qless %d\r\n%s\r\n" % (len(body), body))


def logged(events_dir: Path, event: str, **fields: object) -> None:
    """Wait until the server has written an `event` with `fields` (events are flushed
    after the reply goes out, so a kill -9 at once could beat them to the file)."""
    deadline = time.monotonic() + 10
    while not any(
        e["event"] == event and all(e.get(k) == v for k, v in fields.items())
        for e in read_log(events_dir)
    ):
        assert time.monotonic() < deadline, f"no {event} {fields} in the log"
        time.sleep(0.01)


def test_reservations_cut_by_kill_9_are_closed_at_restart(tmp_path: Path) -> None:
    wal, events_dir = tmp_path / "wal", tmp_path / "events"
    server, workq_port = serve(wal, events_dir)
    holder = connect(server)  # stays open: its reservations are live at the kill
    try:
        for body in (b"a", b"b", b"c", b"d", b"e"):
            holder.cmd(b"put 10 0 120 1\r\n" + body + b"\r\n")
        held, touched, released, deleted = (reserve(holder) for _ in range(4))
        assert holder.cmd(b"touch %d\r\n" % touched) == b"TOUCHED\r\n"
        assert holder.cmd(b"release %d 10 0\r\n" % released) == b"RELEASED\r\n"
        assert holder.cmd(b"delete %d\r\n" % deleted) == b"DELETED\r\n"
        with WorkqClient(("127.0.0.1", workq_port), backoff=None) as workq:
            workq.add(UUID, "wq", 60_000, 600_000, b"payload")
            leased = workq.lease(["wq"], 1000).id
        assert b'"abc"' in qless(holder, "put", "w", "q", "abc", "K", "{}", 0)
        assert b'"jid":"abc"' in qless(holder, "pop", "q", "w1", 1)
        logged(events_dir, "reserve", worker="w1")  # the qless pop, the last event
    finally:
        server.kill()
        holder.close()
    before = read_log(events_dir)
    last = max(e["ts"] for e in before)
    workq_job = next(e["job"] for e in before if e["event"] == "put" and e["uuid"] == UUID)
    qless_job = next(e["job"] for e in before if e["event"] == "put" and e["queue"] == "q")
    assert leased == UUID
    # before the fix, the log ends here with four reservations open
    assert [e["event"] for e in before if e["job"] == held] == ["put", "reserve"]

    serve(wal, events_dir)[0].stop()
    events = read_log(events_dir)
    restart = [e for e in events if e["ts"] > last]
    timeouts = Counter(e["job"] for e in restart if e["event"] == "timeout")
    assert timeouts == {held: 1, touched: 1, workq_job: 1, qless_job: 1}
    assert all(e["conn"] is None for e in restart if e["event"] == "timeout")
    # each timeout comes before any new event of its job (qless takes its lock back)
    for job in timeouts:
        assert next(e["event"] for e in restart if e["job"] == job) == "timeout"
    assert Counter(e["job"] for e in events if e["event"] == "timeout") == timeouts

    # the tables: the reservation's run ends at the restart, the next wait starts there
    annotate_reservations(events)
    end = next(e for e in restart if e["event"] == "timeout" and e["job"] == held)
    reserved = next(e for e in before if e["event"] == "reserve" and e["job"] == held)
    assert end["run"] == end["ts"] - reserved["ts"]


def test_the_next_wait_counts_from_the_restart(tmp_path: Path) -> None:
    wal, events_dir = tmp_path / "wal", tmp_path / "events"
    server, _ = serve(wal, events_dir)
    holder = connect(server)
    try:
        holder.cmd(b"put 10 0 120 1\r\nx\r\n")
        job = reserve(holder)
        logged(events_dir, "reserve", job=job)
    finally:
        server.kill()
        holder.close()
    server, _ = serve(wal, events_dir)
    worker = connect(server)
    try:
        assert reserve(worker) == job
    finally:
        server.stop()
        worker.close()
    events = read_log(events_dir)
    annotate_reservations(events)
    mine = [e for e in events if e["job"] == job]
    assert [e["event"] for e in mine] == ["put", "reserve", "timeout", "reserve"]
    put, _, timeout, second = mine
    assert second["wait"] == second["ts"] - timeout["ts"]
    assert timeout["ts"] > put["ts"]


@pytest.mark.parametrize("jobs", [3, 10_000], ids=["log-only", "snapshot"])
def test_a_clean_stop_closes_each_reservation_once(tmp_path: Path, jobs: int) -> None:
    """SIGTERM: with 10,000 jobs the shutdown writes a snapshot that logs the reserved
    jobs as reserved (the restore closes them); with fewer, only the event log knows."""
    wal, events_dir = tmp_path / "wal", tmp_path / "events"
    server, _ = serve(wal, events_dir)
    holder = connect(server)
    try:
        holder.send(b"put 10 0 120 1\r\nx\r\n" * jobs)
        for _ in range(jobs):
            assert holder.reply().startswith(b"INSERTED ")
        held = [reserve(holder), reserve(holder)]
    finally:
        server.stop()
        holder.close()
    assert (wal / "snapshot").exists() == (jobs >= 10_000)
    for _ in range(2):  # a second restart closes nothing more
        server, _ = serve(wal, events_dir)
        server.stop()
    timeouts = Counter(e["job"] for e in read_log(events_dir) if e["event"] == "timeout")
    assert timeouts == dict.fromkeys(held, 1)
