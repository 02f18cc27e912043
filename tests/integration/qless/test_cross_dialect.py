"""A job is one job whatever door it came in by: qless <-> plain beanstalkd."""

from __future__ import annotations

import greenstalk
import pytest

from beanpod.client.qless import Client
from tests.support.servers import InProcessServer


def test_qless_put_beanstalkd_reserve_delete(server: InProcessServer) -> None:
    with Client(port=server.port) as qc, greenstalk.Client(("127.0.0.1", server.port),
                                                           watch="jobs") as bs:  # fmt: skip
        jid = qc.queues["jobs"].put("K", {"n": 1})
        job = bs.reserve(timeout=1)
        assert job.body == '{"n": 1}'  # the data as the client sent it
        assert qc.jobs[jid].state == "running"  # type: ignore[union-attr]
        assert bs.stats_job(job)["state"] == "reserved"
        bs.delete(job)
        assert qc.jobs[jid] is None


def test_beanstalkd_put_qless_peek_pop_complete(server: InProcessServer) -> None:
    with Client(port=server.port) as qc, greenstalk.Client(("127.0.0.1", server.port),
                                                           use="plain") as bs:  # fmt: skip
        job_id = bs.put('{"x": 2}')
        [seen] = qc.queues["plain"].peek()
        assert (seen.jid, seen.data, seen.state) == (f"beanstalkd:{job_id}", {"x": 2}, "waiting")
        [job] = qc.queues["plain"].pop()
        assert job.complete() == "complete"
        assert bs.stats_job(job_id)["state"] == "complete"
        assert bs.peek(job_id).body == '{"x": 2}'


def test_held_states_are_never_reserved(server: InProcessServer) -> None:
    with Client(port=server.port) as qc, greenstalk.Client(("127.0.0.1", server.port),
                                                           watch="q") as bs:  # fmt: skip
        a = qc.queues["q"].put("K", {}, jid="a")
        qc.queues["q"].put("K", {}, jid="b", depends=[a])
        got = bs.reserve(timeout=1)
        assert got.body == "{}"
        with pytest.raises(greenstalk.TimedOutError):
            bs.reserve(timeout=0)
        bs.release(got)
        assert qc.call("get", "b")["state"] == "depends"


def test_failed_is_buried_and_kick_unfails(server: InProcessServer) -> None:
    with Client(port=server.port) as qc, greenstalk.Client(("127.0.0.1", server.port),
                                                           use="q", watch="q") as bs:  # fmt: skip
        jid = qc.queues["q"].put("K", {})
        qc.queues["q"].pop()[0].fail("g", "m")
        assert bs.stats_tube("q")["current-jobs-buried"] == 1
        assert bs.kick(1) == 1
        assert qc.jobs.failed() == {}
        assert qc.jobs[jid].state == "waiting"  # type: ignore[union-attr]
