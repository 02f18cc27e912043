"""/metrics over a real socket: parsed by prometheus-client's own parser, checked by
promtool, and equal to the `stats` YAML after a scripted workload."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from beanpod.protocols.beanstalkd.context import COUNTED
from tests.support.http import HttpServer
from tests.support.wire_client import RawClient

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(http: HttpServer) -> Samples:
    reply = http.get("/metrics")
    assert reply.status == 200
    assert reply.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples: Samples = {}
    for family in text_string_to_metric_families(reply.body.decode()):
        for sample in family.samples:
            samples[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def pick(samples: Samples, name: str, **labels: str) -> float:
    return samples[name, tuple(sorted(labels.items()))]


def total(samples: Samples, name: str, **labels: str) -> float:
    """sum(name{labels}) over every other label."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= set(ls))


def yaml_stats(client: RawClient, command: bytes) -> dict[str, str]:
    reply = client.cmd(command)
    assert reply.startswith(b"OK "), reply
    lines = reply.split(b"\r\n", 1)[1].decode().splitlines()[1:]
    return dict(line.split(": ", 1) for line in lines if ": " in line)


@pytest.fixture
def http(tmp_path: Path) -> Iterator[HttpServer]:
    server = HttpServer(["-b", str(tmp_path / "wal")]).start()
    yield server
    server.stop()


def connect(http: HttpServer) -> RawClient:
    return RawClient(socket.create_connection(("127.0.0.1", http.server.port), timeout=5))


def workload(client: RawClient) -> None:
    """Jobs in every state, in two tubes, with errors, a pause and a timeout."""
    client.cmd(b"use mail\r\n")
    for pri in (0, 2000, 2000, 2000):
        assert client.cmd(b"put %d 0 60 3\r\nabc\r\n" % pri).startswith(b"INSERTED")
    assert client.cmd(b"put 0 3600 60 1\r\nd\r\n").startswith(b"INSERTED")
    client.cmd(b"watch mail\r\n")
    first = client.cmd(b"reserve-with-timeout 0\r\n").split()[1]
    assert client.cmd(b"delete " + first + b"\r\n") == b"DELETED\r\n"
    second = client.cmd(b"reserve-with-timeout 0\r\n").split()[1]
    assert client.cmd(b"bury " + second + b" 5\r\n") == b"BURIED\r\n"
    assert client.cmd(b"kick 1\r\n") == b"KICKED 1\r\n"
    client.cmd(b"reserve-with-timeout 0\r\n")  # stays reserved
    assert client.cmd(b"delete 999\r\n") == b"NOT_FOUND\r\n"
    assert client.cmd(b"peek 999\r\n") == b"NOT_FOUND\r\n"
    assert client.cmd(b"frobnicate\r\n") == b"UNKNOWN_COMMAND\r\n"
    client.cmd(b"use other\r\n")
    assert client.cmd(b"put 10 0 1 1\r\nt\r\n").startswith(b"INSERTED")
    assert client.cmd(b"pause-tube other 0\r\n") == b"PAUSED\r\n"
    assert client.cmd(b"pause-tube mail 3600\r\n") == b"PAUSED\r\n"


def test_metrics_equal_the_stats_yaml(http: HttpServer) -> None:
    client = connect(http)
    workload(client)
    other = connect(http)  # a worker whose 1 s reservation times out
    other.cmd(b"watch other\r\n")
    assert other.cmd(b"reserve-with-timeout 0\r\n").startswith(b"RESERVED")
    deadline = time.monotonic() + 10
    while yaml_stats(client, b"stats\r\n")["job-timeouts"] == "0":
        assert time.monotonic() < deadline, "the reservation never timed out"
        time.sleep(0.05)
    samples = scrape(http)
    stats = yaml_stats(client, b"stats\r\n")
    for state in ("ready", "reserved", "delayed", "buried"):
        assert total(samples, "beanpod_jobs", state=state) == int(stats[f"current-jobs-{state}"])
    assert total(samples, "beanpod_jobs_urgent") == int(stats["current-jobs-urgent"])
    assert total(samples, "beanpod_job_timeouts_total") == int(stats["job-timeouts"])
    assert total(samples, "beanpod_jobs_put_total") == int(stats["total-jobs"])
    for _verb, key in COUNTED:
        command = key.decode()[4:]
        value = pick(samples, "beanpod_commands_total", command=command)
        assert value == int(stats[key.decode()]) - (command == "stats"), command
    assert total(samples, "beanpod_connections", protocol="beanstalkd") == int(
        stats["current-connections"]
    )
    assert pick(samples, "beanpod_connections_accepted_total", protocol="beanstalkd") == int(
        stats["total-connections"]
    )
    assert pick(samples, "beanpod_wal_records_written_total") <= int(
        stats["binlog-records-written"]
    )
    for name in ("mail", "other"):
        tube = yaml_stats(client, b"stats-tube %s\r\n" % name.encode())
        assert pick(samples, "beanpod_jobs_put_total", tube=name) == int(tube["total-jobs"])
        assert pick(samples, "beanpod_jobs_deleted_total", tube=name) == int(tube["cmd-delete"])
        for state in ("ready", "reserved", "delayed", "buried"):
            got = pick(samples, "beanpod_jobs", tube=name, state=state)
            assert got == int(tube[f"current-jobs-{state}"]), (name, state)
    assert pick(samples, "beanpod_tube_paused", tube="mail") == 1
    assert pick(samples, "beanpod_tube_paused", tube="other") == 0
    assert pick(samples, "beanpod_jobs_buried_total", tube="mail") == 1
    assert pick(samples, "beanpod_jobs_kicked_total", tube="mail") == 1
    assert pick(samples, "beanpod_command_errors_total", command="delete", reply="NOT_FOUND") == 1
    assert pick(samples, "beanpod_command_errors_total", command="peek", reply="NOT_FOUND") == 1
    assert (
        pick(samples, "beanpod_command_errors_total", command="unparsed", reply="UNKNOWN_COMMAND")
        == 1
    )
    # mail: two first reserves (the kicked job, now pri 5, is reserved again: no wait) and
    # one delete of a reserved job; other: one reserve
    assert pick(samples, "beanpod_job_wait_seconds_count", tube="mail") == 2
    assert pick(samples, "beanpod_job_wait_seconds_count", tube="other") == 1
    assert pick(samples, "beanpod_job_run_seconds_count", tube="mail") == 1
    assert pick(samples, "beanpod_oldest_ready_job_age_seconds", tube="mail") >= 0
    assert pick(samples, "beanpod_build_info", version=stats["version"].strip('"')) == 1
    assert pick(samples, "beanpod_wal_fsync_seconds_count") >= 0
    assert total(samples, "process_resident_memory_bytes") > 0
    client.sock.close()
    other.sock.close()


def test_tubes_past_the_limit_add_up_under_other(tmp_path: Path) -> None:
    http = HttpServer(["--metrics-max-tubes", "2"]).start()
    try:
        client = connect(http)
        for name in (b"t1", b"t2", b"t3", b"t4"):
            client.cmd(b"use " + name + b"\r\n")
            assert client.cmd(b"put 0 0 60 1\r\nx\r\n").startswith(b"INSERTED")
        samples = scrape(http)
        client.sock.close()
    finally:
        http.stop()
    tubes = {dict(ls)["tube"] for (n, ls), _ in samples.items() if n == "beanpod_jobs"}
    assert tubes == {"default", "t1", "_other"}  # list-tubes order: default first
    assert pick(samples, "beanpod_jobs", tube="_other", state="ready") == 3
    assert total(samples, "beanpod_jobs_put_total") == 4


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed "
                    "(Debian: apt-get install prometheus)")  # fmt: skip
def test_promtool_accepts_the_exposition(http: HttpServer) -> None:
    client = connect(http)
    workload(client)
    body = http.get("/metrics").body
    client.sock.close()
    out = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True,
                         timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout + out.stderr == b""  # no lint warnings either


def test_pending_job_times_are_binned_without_a_scrape() -> None:
    """The listener's timer folds the engine's pending times about once a second, so they
    never pile up between scrapes."""
    from tests.support.servers import InProcessServer

    server = InProcessServer(http=("127.0.0.1", 0)).start()
    try:
        client = RawClient(server.connect())
        assert client.cmd(b"put 0 0 60 1\r\nx\r\n") == b"INSERTED 1\r\n"
        assert client.cmd(b"reserve\r\n").startswith(b"RESERVED 1 ")
        assert client.cmd(b"delete 1\r\n") == b"DELETED\r\n"
        client.sock.close()
        app = server.app
        assert app is not None and app.engine.timings is not None
        waits = app.engine.timings.waits["default"]

        def binned() -> tuple[int, int]:
            return len(waits.pending), waits.cumulative()[-1]

        deadline = time.monotonic() + 10
        while server.call(binned) != (0, 1):
            assert time.monotonic() < deadline, server.call(binned)
            time.sleep(0.05)
    finally:
        server.stop()


def test_qless_held_states_have_their_own_series() -> None:
    from beanpod.client.qless import Client

    http = HttpServer().start()
    try:
        with Client(port=http.server.port, worker_name="w1") as qless:
            queue = qless.queues["q"]
            first = queue.put("K", {})
            queue.put("K", {}, depends=[first])
            queue.recur("K", {}, interval=3600, offset=3600)
            queue.put("K", {}, jid="done-soon", priority=100)
            [job] = queue.pop()
            assert job.jid == "done-soon" and job.complete() == "complete"
        samples = scrape(http)
    finally:
        http.stop()
    states = {
        dict(labels)["state"]: value
        for (name, labels), value in samples.items()
        if name == "beanpod_jobs" and dict(labels)["tube"] == "q" and value
    }
    assert states == {"ready": 1, "depends": 1, "recur": 1, "complete": 1}
