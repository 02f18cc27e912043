"""Restart tests: every state and command survives a clean stop and a restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.walserver import FakeClock, WalServer, stats

T0 = 1_800_000_000_000


@pytest.fixture
def wal(tmp_path: Path) -> Path:
    return tmp_path / "wal"


@pytest.fixture
def restart(wal: Path) -> Iterator[object]:
    servers: list[WalServer] = []

    def start(**config: object) -> WalServer:
        if servers and servers[-1].app is not None:
            servers[-1].stop()
            servers[-1].app = None
        server = WalServer(wal, **config).start()  # type: ignore[arg-type]
        servers.append(server)
        return server

    yield start
    if servers and servers[-1].app is not None:
        servers[-1].stop()


def test_ready_job_keeps_body_pri_ttr_tube_and_id(restart) -> None:  # type: ignore[no-untyped-def]
    c = restart().client()
    c.cmd(b"use jobs\r\n")
    assert c.cmd(b"put 17 0 33 5\r\nhello\r\n") == b"INSERTED 1\r\n"
    c = restart().client()
    assert c.cmd(b"peek 1\r\n") == b"FOUND 1 5\r\nhello\r\n"
    job = stats(c, b"stats-job 1\r\n")
    assert (job["tube"], job["state"], job["pri"], job["ttr"]) == ("jobs", "ready", "17", "33")
    assert job["file"] != "0"


def test_deleted_jobs_stay_gone_and_ids_continue(restart) -> None:  # type: ignore[no-untyped-def]
    c = restart().client()
    for _ in range(3):
        c.cmd(b"put 0 0 10 1\r\nx\r\n")
    assert c.cmd(b"delete 3\r\n") == b"DELETED\r\n"
    assert c.cmd(b"delete 1\r\n") == b"DELETED\r\n"
    c = restart().client()
    assert c.cmd(b"peek 1\r\n") == b"NOT_FOUND\r\n"
    assert c.cmd(b"peek 3\r\n") == b"NOT_FOUND\r\n"
    assert c.cmd(b"peek 2\r\n") == b"FOUND 2 1\r\nx\r\n"
    assert c.cmd(b"put 0 0 10 1\r\ny\r\n") == b"INSERTED 4\r\n"


def test_reserved_job_comes_back_ready(restart) -> None:  # type: ignore[no-untyped-def]
    c = restart().client()
    c.cmd(b"put 5 0 10 1\r\nx\r\n")
    assert c.cmd(b"reserve\r\n") == b"RESERVED 1 1\r\nx\r\n"
    c = restart().client()
    job = stats(c, b"stats-job 1\r\n")
    assert (job["state"], job["pri"]) == ("ready", "5")


def test_zero_delay_release_keeps_its_new_priority(restart) -> None:  # type: ignore[no-untyped-def]
    c = restart().client()
    c.cmd(b"put 500 0 10 1\r\nx\r\n")
    c.cmd(b"reserve\r\n")
    assert c.cmd(b"release 1 7 0\r\n") == b"RELEASED\r\n"
    c = restart().client()
    job = stats(c, b"stats-job 1\r\n")
    assert (job["state"], job["pri"], job["releases"], job["reserves"]) == ("ready", "7", "1", "1")


def test_bury_and_kick(restart) -> None:  # type: ignore[no-untyped-def]
    c = restart().client()
    c.cmd(b"put 1 0 10 1\r\na\r\n")
    c.cmd(b"put 2 0 10 1\r\nb\r\n")
    c.cmd(b"reserve\r\n")
    c.cmd(b"reserve\r\n")
    assert c.cmd(b"bury 2 40\r\n") == b"BURIED\r\n"
    assert c.cmd(b"bury 1 30\r\n") == b"BURIED\r\n"
    c = restart().client()
    assert [stats(c, b"stats-job %d\r\n" % i)["state"] for i in (1, 2)] == ["buried"] * 2
    assert stats(c, b"stats-job 1\r\n")["pri"] == "30"
    assert c.cmd(b"peek-buried\r\n") == b"FOUND 2 1\r\nb\r\n"  # bury order kept
    assert c.cmd(b"kick 1\r\n") == b"KICKED 1\r\n"
    c = restart().client()
    job = stats(c, b"stats-job 2\r\n")
    assert (job["state"], job["pri"], job["buries"], job["kicks"]) == ("ready", "40", "1", "1")
    assert stats(c, b"stats-job 1\r\n")["state"] == "buried"
    assert c.cmd(b"kick-job 1\r\n") == b"KICKED\r\n"
    c = restart().client()
    assert stats(c, b"stats-job 1\r\n")["state"] == "ready"


def test_delayed_jobs_keep_their_wall_clock_due_time(restart) -> None:  # type: ignore[no-untyped-def]
    clock = FakeClock(T0)
    c = restart(clock=clock).client()
    c.cmd(b"put 0 100 10 1\r\nd\r\n")
    c.cmd(b"put 0 0 10 1\r\ne\r\n")
    c.cmd(b"reserve\r\n")
    assert c.cmd(b"release 2 3 50\r\n") == b"RELEASED\r\n"
    clock.ms = T0 + 40_000  # 40 s later, with the server down in between
    c = restart(clock=clock).client()
    assert stats(c, b"stats-job 1\r\n")["time-left"] == "59"
    job = stats(c, b"stats-job 2\r\n")
    assert (job["state"], job["pri"], job["time-left"]) == ("delayed", "3", "9")
    clock.ms = T0 + 200_000
    c = restart(clock=clock).client()
    c.cmd(b"list-tubes\r\n")  # let the start-up tick run
    assert stats(c, b"stats-job 1\r\n")["state"] == "ready"


def test_kick_job_of_delayed_job(restart) -> None:  # type: ignore[no-untyped-def]
    c = restart().client()
    c.cmd(b"put 0 100 10 1\r\nd\r\n")
    assert c.cmd(b"kick-job 1\r\n") == b"KICKED\r\n"
    c = restart().client()
    assert stats(c, b"stats-job 1\r\n")["state"] == "ready"


def test_paused_tube_stays_paused(restart) -> None:  # type: ignore[no-untyped-def]
    clock = FakeClock(T0)
    c = restart(clock=clock).client()
    c.cmd(b"use p\r\n")
    c.cmd(b"put 0 0 10 1\r\nx\r\n")
    assert c.cmd(b"pause-tube p 60\r\n") == b"PAUSED\r\n"
    clock.ms = T0 + 10_000
    c = restart(clock=clock).client()
    tube = stats(c, b"stats-tube p\r\n")
    assert (tube["pause"], tube["pause-time-left"]) == ("60", "49")
    c.cmd(b"watch p\r\n")
    assert c.cmd(b"reserve-with-timeout 0\r\n") == b"TIMED_OUT\r\n"


def test_job_of_maximum_size_comes_back_with_the_jobs_after_it(restart) -> None:  # type: ignore[no-untyped-def]
    body = bytes(range(256)) * 255 + b"z" * 255  # 65,535 bytes, every byte value
    c = restart().client()
    assert c.cmd(b"put 0 0 10 65535\r\n" + body + b"\r\n") == b"INSERTED 1\r\n"
    c.cmd(b"put 0 0 10 1\r\nx\r\n")
    c = restart().client()
    assert c.cmd(b"peek 1\r\n") == b"FOUND 1 65535\r\n" + body + b"\r\n"
    assert c.cmd(b"peek 2\r\n") == b"FOUND 2 1\r\nx\r\n"


def test_stats_report_the_log(restart) -> None:  # type: ignore[no-untyped-def]
    c = restart(segment_size=8192).client()
    for _ in range(200):
        c.cmd(b"put 0 0 10 50\r\n" + b"x" * 50 + b"\r\n")
    s = stats(c, b"stats\r\n")
    assert s["binlog-max-size"] == "8192"
    assert int(s["binlog-records-written"]) >= 200
    assert int(s["binlog-current-index"]) > int(s["binlog-oldest-index"]) >= 1
    assert stats(c, b"stats-job 200\r\n")["file"] == s["binlog-current-index"]


def test_many_restarts_in_a_row(restart) -> None:  # type: ignore[no-untyped-def]
    for n in range(1, 6):
        c = restart().client()
        assert c.cmd(b"put 0 0 10 1\r\nx\r\n") == b"INSERTED %d\r\n" % n
    assert int(stats(c, b"stats\r\n")["current-jobs-ready"]) == 5
