"""beanpod.testing's BeanpodServer used directly (no pytest plugin): time, inspection,
faults and bad use, each over a real client connection."""

from __future__ import annotations

import asyncio
import gc
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import greenstalk
import pytest

from beanpod.client import qless, workq
from beanpod.client.workq_proto import NotFound
from beanpod.server.app import App
from beanpod.server.startup import StartupError
from beanpod.testing import (
    BeanpodServer,
    BeanstalkdServer,
    RealClockError,
    ServerStopped,
    UnknownTube,
)


@pytest.fixture
def server() -> Iterator[BeanpodServer]:
    with BeanpodServer() as started:
        yield started


@pytest.fixture
def client(server: BeanpodServer) -> Iterator[greenstalk.Client[str]]:
    with greenstalk.Client(server.socket()) as connected:
        yield connected


def test_the_address_is_a_real_loopback_port(server: BeanpodServer) -> None:
    assert server.host == "127.0.0.1" and server.port > 0
    assert server.url == f"beanstalk://127.0.0.1:{server.port}"
    with greenstalk.Client(server.address) as c:
        assert c.put("x") == 1


def test_a_unix_socket_when_asked() -> None:
    with BeanpodServer(unix=True) as server:
        assert server.unix_path is not None
        with greenstalk.Client(server.unix_path) as c:
            assert c.put("x") == 1
        unix_path = server.unix_path
    assert not Path(unix_path).exists()


def test_the_clock_ends_a_pause(server: BeanpodServer, client: greenstalk.Client[str]) -> None:
    client.put("x")
    client.pause_tube("default", 60)
    with pytest.raises(greenstalk.TimedOutError):
        client.reserve(timeout=0)
    server.clock.advance(60)
    assert client.reserve(timeout=0).body == "x"


def reserve_in_thread(client: greenstalk.Client[str]) -> tuple[threading.Thread, list[object]]:
    """A worker blocked in `reserve`; its outcome (job or exception) lands in the list."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(client.reserve())
        except greenstalk.Error as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def wait_for_waiting(server: BeanpodServer, tube: str = "default") -> None:
    for _ in range(10_000):
        view = server.tube(tube)
        if view is not None and view.waiting:
            return
        time.sleep(0.001)
    raise AssertionError("the worker never started waiting")


def test_the_clock_wakes_a_waiting_reserve_with_deadline_soon(
    server: BeanpodServer, client: greenstalk.Client[str]
) -> None:
    client.put("slow", ttr=5)
    client.reserve(timeout=0)
    thread, outcome = reserve_in_thread(client)
    wait_for_waiting(server)
    server.clock.advance(4)  # one second before the TTR ends
    thread.join(10)
    assert [type(each) for each in outcome] == [greenstalk.DeadlineSoonError]


def test_the_clock_hands_a_delayed_job_to_a_waiting_reserve(
    server: BeanpodServer, client: greenstalk.Client[str]
) -> None:
    client.put("later", delay=10)
    thread, outcome = reserve_in_thread(client)
    wait_for_waiting(server)
    server.clock.advance(9.999)
    assert outcome == []
    server.clock.advance(0.001)
    thread.join(10)
    assert [getattr(each, "body", each) for each in outcome] == ["later"]


def test_added_latency_answers_held_requests_before_a_half_close(server: BeanpodServer) -> None:
    server.latency = 0.01
    with socket.create_connection(server.address) as sock:
        sock.sendall(b"use a\r\n")
        sock.shutdown(socket.SHUT_WR)
        assert sock.makefile("rb").read() == b"USING a\r\n"


def test_the_clock_expires_workq_jobs() -> None:
    with BeanpodServer(workq=True) as server, workq.Client(("127.0.0.1", server.workq_port)) as c:
        job_id = uuid.uuid4().hex
        c.add(job_id, "q", ttr=1000, ttl=60_000, payload=b"p")
        assert c.inspect_job(job_id)
        server.clock.advance(60)
        with pytest.raises(NotFound):
            c.inspect_job(job_id)


def test_the_clock_makes_scheduled_workq_jobs_ready() -> None:
    with BeanpodServer(workq=True) as server, workq.Client(("127.0.0.1", server.workq_port)) as c:
        at = datetime.fromtimestamp(server.clock.now_ms() // 1000 + 120, UTC)
        c.schedule(uuid.uuid4().hex, "q", ttr=1000, ttl=60_000, time=at, payload=b"p")
        assert len(c.inspect_scheduled_jobs("q")) == 1 and c.inspect_jobs("q") == []
        server.clock.advance(120)
        assert len(c.inspect_jobs("q")) == 1


def test_inspection_sees_every_state(server: BeanpodServer, client: greenstalk.Client[str]) -> None:
    server.put("ready", tube="a")
    server.put("delayed", tube="a", delay=5)
    client.put("buried")
    client.bury(client.reserve(timeout=0))
    assert [(j.tube, j.state, j.body) for j in server.jobs()] == [
        ("default", "buried", b"buried"),
        ("a", "ready", b"ready"),
        ("a", "delayed", b"delayed"),
    ]
    delayed = server.jobs(tube="a", state="delayed")[0]
    assert delayed.time_left == 5.0
    view = server.tube("a")
    assert view is not None and (view.ready, view.delayed) == (1, 1)
    assert server.job(999) is None and server.tube("nope") is None


def test_seeding_is_not_counted_but_client_commands_are(
    server: BeanpodServer, client: greenstalk.Client[str]
) -> None:
    server.put("seed")
    client.put("mine")
    client.reserve(timeout=0)
    assert server.counts == {"put": 1, "reserve-with-timeout": 1}


def test_a_transcript_per_connection(server: BeanpodServer, client: greenstalk.Client[str]) -> None:
    client.use("mail")
    client.put("hi")
    [transcript] = server.transcripts
    assert transcript.lines() == [
        "> use mail", "< USING mail", "> put 65536 0 60 2", "> hi", "< INSERTED 1",
    ]  # fmt: skip


def test_assert_jobs_put_shows_what_was_put(
    server: BeanpodServer, client: greenstalk.Client[str]
) -> None:
    with server.assert_jobs_put(1):
        client.put("one")
    client.use("other")
    expected = (
        r"expected 1 job\(s\) put to tube 'default', 0 were; puts in the block: #2 to 'other'"
    )
    with pytest.raises(AssertionError, match=expected), server.assert_jobs_put(1, tube="default"):
        client.put("two")


def test_assert_tube_empty_lists_what_is_there(
    server: BeanpodServer, client: greenstalk.Client[str]
) -> None:
    server.assert_tube_empty("default")
    client.put("left over")
    with pytest.raises(AssertionError, match=r"tube 'default' is not empty: #1 ready"):
        server.assert_tube_empty("default")


def test_unknown_tubes_in_assertions_are_errors(server: BeanpodServer) -> None:
    server.put("x", tube="emails")
    with pytest.raises(UnknownTube, match=r"'emials'.*a typo\?.*'emails'"):
        server.assert_tube_empty("emials")
    with pytest.raises(UnknownTube):
        server.assert_no_buried("emials")


def test_fail_next_answers_the_word_once(
    server: BeanpodServer, client: greenstalk.Client[str]
) -> None:
    server.fail_next("put", "OUT_OF_MEMORY")
    with pytest.raises(greenstalk.OutOfMemoryError):
        client.put("x")
    assert client.put("x") == 1
    with pytest.raises(ValueError, match="unknown beanstalkd command 'putt'"):
        server.fail_next("putt", "OUT_OF_MEMORY")


def test_drain_and_drop_connections(server: BeanpodServer, client: greenstalk.Client[str]) -> None:
    client.put("x")
    job = client.reserve(timeout=0)
    server.drop_connections()  # as a restart would: the reserved job is ready again
    assert server.job(job.id).state == "ready"  # type: ignore[union-attr]
    with greenstalk.Client(server.address) as again:
        server.drain()
        with pytest.raises(greenstalk.DrainingError):
            again.put("y")


def test_restart_with_a_wal_keeps_acknowledged_jobs(tmp_path: Path) -> None:
    with BeanpodServer(wal=tmp_path / "wal") as server:
        with greenstalk.Client(server.address) as c:
            c.put("kept", delay=30)
        port = server.port
        server.restart()
        assert server.port == port
        assert [(j.body, j.state) for j in server.jobs()] == [(b"kept", "delayed")]
        server.reset()
        assert server.jobs() == []


def test_restart_without_a_wal_loses_everything(server: BeanpodServer) -> None:
    server.put("gone")
    server.restart()
    assert server.jobs() == []


def test_a_small_max_job_size() -> None:
    with (
        BeanpodServer(max_job_size=4) as server,
        greenstalk.Client(server.socket()) as c,
        pytest.raises(greenstalk.JobTooBigError),
    ):
        c.put("12345")


def test_added_latency_keeps_order(server: BeanpodServer) -> None:
    server.latency = 0.02
    with socket.create_connection(server.address) as sock:
        start = time.monotonic()
        sock.sendall(b"use a\r\n")
        sock.sendall(b"use b\r\n")
        replies = b""
        while replies.count(b"\r\n") < 2:
            replies += sock.recv(100)
        assert replies == b"USING a\r\nUSING b\r\n"
        assert time.monotonic() - start >= 0.02


def test_a_real_clock_cannot_be_advanced() -> None:
    expected = r"real clock \(clock='real'\).*clock='virtual'"
    with BeanpodServer(clock="real") as server, pytest.raises(RealClockError, match=expected):
        server.clock.advance(1)


def test_a_stopped_server_says_so() -> None:
    server = BeanpodServer().start()
    server.stop()
    with pytest.raises(ServerStopped, match="has stopped"):
        server.jobs()
    with pytest.raises(ServerStopped):
        server.clock.advance(1)


def test_reset_forgets_jobs_connections_and_counts(
    server: BeanpodServer, client: greenstalk.Client[str]
) -> None:
    client.put("x")
    server.fail_next("put", "DRAINING")
    server.reset()
    assert server.jobs() == [] and server.counts == {} and server.transcripts == []
    with greenstalk.Client(server.address) as c:
        assert c.put("y") == 1  # ids start again; the pending failure is gone


def test_the_clock_expires_qless_locks_and_spawns_recurring_jobs(server: BeanpodServer) -> None:
    with (
        qless.Client(server.host, server.port, worker_name="a") as a,
        qless.Client(server.host, server.port, worker_name="b") as b,
    ):
        jid = a.queues["q"].put("Klass", {})
        assert [job.jid for job in a.queues["q"].pop()] == [jid]
        assert b.queues["q"].pop() == []  # locked by worker a
        server.clock.advance(61)  # past the default 60 s heartbeat
        assert b.queues["q"].pop() == []  # as in qless: a courtesy notice, then a grace period
        server.clock.advance(10)
        assert [job.jid for job in b.queues["q"].pop()] == [jid]
        a.queues["r"].recur("Klass", {}, interval=60)
        assert len(a.queues["r"].pop(5)) == 1
        server.clock.advance(120)
        assert len(a.queues["r"].pop(5)) == 2


def test_a_start_that_fails_says_why_and_leaves_nothing_running(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    server = BeanpodServer(wal=not_a_dir)
    with pytest.raises(StartupError, match=str(not_a_dir)):
        server.start()
    assert server.stopped
    assert not [t for t in threading.enumerate() if t.name == "beanpod-test-server"]


def test_the_beanstalkd_target_speaks_for_a_real_beanstalkd(tmp_path: Path) -> None:
    if shutil.which("beanstalkd") is None:
        pytest.skip("no beanstalkd on PATH")
    with BeanstalkdServer(wal=tmp_path / "wal") as server:
        with greenstalk.Client(server.socket()) as c:
            assert c.put("x") == 1
        server.restart()
        with greenstalk.Client(server.address) as c:
            assert c.peek_ready().body == "x"  # beanstalkd's own binlog brought it back
        with pytest.raises(pytest.skip.Exception, match="BEANPOD_TEST_TARGET=beanstalkd"):
            server.jobs()  # under pytest a skip (outside it, NotSupported)
        server.reset()
    with pytest.raises(ConnectionError):
        greenstalk.Client(server.address)  # stopped with the block


def test_a_reset_lets_the_old_server_go_on_a_real_clock() -> None:
    with BeanpodServer(clock="real") as server:
        server.put("an hour away", delay=3600)  # arms a loop timer on the real clock
        gc.collect()
        before = sum(isinstance(each, App) for each in gc.get_objects())
        server.reset()
        gc.collect()
        assert sum(isinstance(each, App) for each in gc.get_objects()) == before


def test_an_asyncio_client_over_the_in_process_socket(server: BeanpodServer) -> None:
    async def talk() -> bytes:
        reader, writer = await asyncio.open_connection(sock=server.socket())
        writer.write(b"put 0 0 60 2\r\nhi\r\n")
        reply = await reader.readline()
        writer.close()
        await writer.wait_closed()
        return reply

    assert asyncio.run(talk()) == b"INSERTED 1\r\n"


def test_a_worker_in_another_process_uses_the_server(server: BeanpodServer) -> None:
    server.put("for the worker", tube="jobs")
    worker = (
        "import sys, greenstalk\n"
        "with greenstalk.Client(('127.0.0.1', int(sys.argv[1])), watch='jobs') as c:\n"
        "    job = c.reserve(timeout=0)\n"
        "    c.delete(job)\n"
        "    print(job.body)\n"
    )
    done = subprocess.run([sys.executable, "-c", worker, str(server.port)],
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    assert done.stdout == "for the worker\n"
    server.assert_tube_empty("jobs")
