"""greenstalk, a real beanstalkd client, exercising every command it has."""

from __future__ import annotations

from collections.abc import Iterator

import greenstalk
import pytest

from tests.support.servers import InProcessServer


@pytest.fixture
def client(server: InProcessServer) -> Iterator[greenstalk.Client]:
    with greenstalk.Client(("127.0.0.1", server.port), encoding=None) as c:
        yield c


def test_put_reserve_delete(client: greenstalk.Client) -> None:
    job_id = client.put(b"hello", priority=10, ttr=30)
    job = client.reserve(timeout=1)
    assert (job.id, job.body) == (job_id, b"hello")
    client.delete(job)
    with pytest.raises(greenstalk.TimedOutError):
        client.reserve(timeout=0)


def test_tubes_use_watch_ignore(client: greenstalk.Client) -> None:
    client.use("emails")
    assert client.using() == "emails"
    assert client.watch("emails") == 2
    assert client.ignore("default") == 1
    assert client.watching() == ["emails"]
    with pytest.raises(greenstalk.NotIgnoredError):
        client.ignore("emails")
    assert sorted(client.tubes()) == ["default", "emails"]


def test_release_bury_kick_and_peeks(client: greenstalk.Client) -> None:
    first = client.put(b"a")
    client.put(b"b", delay=60)
    job = client.reserve()
    client.release(job, priority=5, delay=0)
    job = client.reserve()
    assert job.id == first
    client.bury(job, priority=7)
    assert client.peek_buried().id == first
    assert client.peek_delayed().body == b"b"
    assert client.kick(10) == 1
    assert client.peek_ready().id == first
    assert client.stats_job(first)["pri"] == 7
    client.kick_job(client.peek_delayed())
    with pytest.raises(greenstalk.NotFoundError):
        client.peek_delayed()
    assert client.peek(first).body == b"a"


def test_touch_and_reserve_job(client: greenstalk.Client) -> None:
    job_id = client.put(b"x", ttr=5)
    job = client.reserve_job(job_id)
    client.touch(job)
    stats = client.stats_job(job)
    assert stats["state"] == "reserved" and stats["reserves"] == 1
    with pytest.raises(greenstalk.NotFoundError):
        client.reserve_job(job_id)


def test_stats_and_pause(client: greenstalk.Client) -> None:
    client.put(b"x")
    client.pause_tube("default", 30)
    tube = client.stats_tube("default")
    assert tube["pause"] == 30 and tube["current-jobs-ready"] == 1
    stats = client.stats()
    assert stats["cmd-put"] == 1 and stats["cmd-pause-tube"] == 1
    assert stats["version"] == "0.1.0"
    assert stats["draining"] is False or stats["draining"] == "false"
    with pytest.raises(greenstalk.TimedOutError):
        client.reserve(timeout=0)


def test_errors_map_to_exceptions(client: greenstalk.Client) -> None:
    with pytest.raises(greenstalk.NotFoundError):
        client.delete(12345)
    with pytest.raises(greenstalk.NotFoundError):
        client.stats_tube("missing")
    with pytest.raises(greenstalk.JobTooBigError):
        client.put(b"z" * 70000)
    assert client.put(b"still in sync") > 0


def test_binary_bodies_round_trip(client: greenstalk.Client) -> None:
    body = bytes(range(256)) + b"\r\n\r\n\x00"
    client.put(body)
    assert client.reserve().body == body
