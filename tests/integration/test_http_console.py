"""The console's operator views over a real `beanpod serve` process: who holds each
reserved job (peer address, qless worker name, since when) and the Busy listing; finding
a job by qless jid, Workq UUID or id; the ready tab in reserve order with cursor pages;
a failed qless job listed once (by its group, not again as buried) and retried alone;
Busy read from the holders of all three dialects as clients come and go (no entry left by
one that closed)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import greenstalk
import pytest

from beanpod.client.qless import Client as Qless
from beanpod.client.qless import Job as QlessJob
from beanpod.client.workq import Client as Workq
from tests.support.http import HttpServer


@pytest.fixture
def http() -> Iterator[HttpServer]:
    server = HttpServer().start()
    yield server
    server.stop()


def beanstalk(http: HttpServer, tube: str) -> greenstalk.Client:
    return greenstalk.Client(("127.0.0.1", http.server.port), encoding=None, use=tube, watch=tube)


def peer_of(c: greenstalk.Client) -> str:
    return "{}:{}".format(*c._sock.getsockname()[:2])


def test_busy_names_each_holder_by_peer_worker_and_time(http: HttpServer) -> None:
    with beanstalk(http, "mail") as c, Qless(port=http.server.port, worker_name="box-7") as q:
        c.put(b"send", ttr=90)
        held = c.reserve(timeout=5)
        jid = q.queues["reports"].put("app.Report", {})
        assert [j.jid for j in q.queues["reports"].pop(1)] == [jid]
        workq = Workq(("127.0.0.1", http.server.workq_port()), timeout=10)
        with workq:
            wid = str(uuid.uuid4())
            workq.add(wid, "thumbs", 30_000, 60_000, b"img")
            workq.lease(["thumbs"], 1000)
            busy = http.get("/api/v1/busy").json()
            assert workq.sock is not None
            wq_peer = "{}:{}".format(*workq.sock.getsockname()[:2])
        assert (busy["count"], busy["connections"]) == (3, 3)
        rows = {row["tube"]: row for row in busy["jobs"]}
        mail = rows["mail"]
        assert mail["id"] == held.id and mail["dialect"] == "beanstalkd"
        assert mail["holder"]["peer"] == peer_of(c) and mail["holder"]["name"] == ""
        assert 0 <= mail["holder"]["held_ms"] <= mail["holder"]["connected_ms"]
        assert 0 < mail["ttr_left_ms"] <= 90_000 and mail["ttr_ms"] == 90_000
        report = rows["reports"]
        assert (report["key"], report["dialect"]) == (jid, "qless")
        assert (report["holder"]["name"], report["holder"]["dialect"]) == ("box-7", "qless")
        thumbs = rows["thumbs"]
        assert (thumbs["key"], thumbs["holder"]["dialect"]) == (wid, "workq")
        assert thumbs["holder"]["peer"] == wq_peer
        job = http.get(f"/api/v1/jobs/{held.id}").json()
        assert (job["holder"]["conn"], job["holder"]["peer"]) == (
            mail["holder"]["conn"],
            peer_of(c),
        )
        assert "reserved_by" not in job  # holder.conn says it once
        c.delete(held)
    # a qless lock and a Workq lease outlive their connections; the beanstalkd job is gone
    assert {r["tube"] for r in http.get("/api/v1/busy").json()["jobs"]} == {"reports", "thumbs"}


def test_find_a_job_by_jid_uuid_or_id(http: HttpServer) -> None:
    with Qless(port=http.server.port) as q, beanstalk(http, "plain") as c:
        jid = q.queues["emails"].put("app.Send", {"to": "a"})
        plain = c.put(b"x")
        with Workq(("127.0.0.1", http.server.workq_port()), timeout=10) as workq:
            wid = str(uuid.uuid4())
            workq.add(wid, "thumbs", 30_000, 60_000, b"img")
        by_jid = http.get(f"/api/v1/find?q={jid}").json()["matches"]
        assert [(m["by"], m["tube"], m["key"], m["dialect"]) for m in by_jid] == [
            ("jid", "emails", jid, "qless")]  # fmt: skip
        assert http.get(f"/api/v1/jobs/{by_jid[0]['id']}").json()["qless"]["jid"] == jid
        by_uuid = http.get(f"/api/v1/find?q={wid.upper()}").json()["matches"]
        assert [(m["by"], m["tube"], m["key"]) for m in by_uuid] == [("uuid", "thumbs", wid)]
        by_id = http.get(f"/api/v1/find?q={plain}").json()["matches"]
        assert [(m["id"], m["by"], m["dialect"]) for m in by_id] == [(plain, "id", "beanstalkd")]
        missing = http.get("/api/v1/find?q=no-such-jid")
        assert missing.status == 404 and "no-such-jid" in missing.json()["error"]
        assert http.get("/api/v1/find?q=").status == 400
        assert http.get("/api/v1/find?q=" + "x" * 201).status == 400


def test_ready_jobs_page_in_reserve_order(http: HttpServer) -> None:
    with beanstalk(http, "work") as c:
        ids = [(5000, c.put(b"bulk %d" % n, priority=5000)) for n in range(300)]
        ids += [(10, c.put(b"urgent %d" % n, priority=10)) for n in range(137)]
        ids += [(7, c.put(b"first", priority=7))]
        expected = [job_id for _, job_id in sorted(ids)]
        first = http.get("/api/v1/tubes/work/jobs?limit=50").json()
        assert first["order"] == "reserve"
        assert [j["pri"] for j in first["jobs"][:2]] == [7, 10]
        seen, cursor = [j["id"] for j in first["jobs"]], first["next_cursor"]
        while cursor is not None:
            page = http.get(f"/api/v1/tubes/work/jobs?limit=50&cursor={cursor}").json()
            seen += [j["id"] for j in page["jobs"]]
            cursor = page["next_cursor"]
        assert seen == expected
        assert c.reserve(timeout=5).id == expected[0]  # what the listing said runs next
        urgent = http.get("/api/v1/tubes/work/jobs?contains=urgent%2013&limit=5").json()
        wanted = {ids[300 + n][1] for n in (13, *range(130, 137))}  # bodies holding "urgent 13"
        assert [j["id"] for j in urgent["jobs"]] == [i for i in expected if i in wanted][:5]
        by_id = http.get("/api/v1/tubes/work/jobs?order=oldest&limit=3").json()
        assert [j["id"] for j in by_id["jobs"]] == sorted(expected[1:])[:3]
        bad = http.get("/api/v1/tubes/work/jobs?state=buried&order=reserve")
        assert bad.status == 400 and "reserve" in bad.json()["error"]
        assert http.get("/api/v1/tubes/work/jobs?cursor=12x").status == 400


def test_a_failed_qless_job_is_listed_once(http: HttpServer) -> None:
    with Qless(port=http.server.port, worker_name="w1") as q, beanstalk(http, "emails") as c:
        queue = q.queues["emails"]
        jid = queue.put("app.Send", {})
        (job,) = queue.pop(1)
        job.fail("Send:Timeout", "Traceback (most recent call last):\n  ...\nTimeout: smtp")
        c.put(b"plain")
        plain = c.reserve(timeout=5)
        c.bury(plain)
        failures = http.get("/api/v1/qless/failures").json()
        assert failures["by_queue"] == {"emails": 1}
        buried = http.get("/api/v1/tubes/emails/jobs?state=buried").json()["jobs"]
        assert {j["key"] for j in buried} == {jid, ""}  # both buried, in the beanstalkd view
        listed = http.get("/api/v1/tubes/emails/jobs?state=buried&exclude=qless").json()
        assert [j["id"] for j in listed["jobs"]] == [plain.id]
        assert http.get("/api/v1/tubes/emails/jobs?exclude=workq").status == 400
        assert http.get("/api/v1/tubes/emails").json()["buried"] == 2
        assert http.get("/api/v1/buried").json() == {"tubes": [{"name": "emails", "buried": 1}]}
        c.kick_job(plain.id)  # the only buried job outside qless
        assert http.get("/api/v1/buried").json() == {"tubes": []}


def post(http: HttpServer, path: str, doc: dict[str, Any] | None = None) -> Any:
    body = b"" if doc is None else json.dumps(doc).encode()
    return http.request("POST", path, body, {"Content-Type": "application/json"})


def test_retry_one_failed_qless_job_puts_it_back_in_its_queue(http: HttpServer) -> None:
    with Qless(port=http.server.port, worker_name="w1") as q:
        queue = q.queues["emails"]
        jid = queue.put("app.Send", {"to": "a"}, priority=5, retries=2, tags=["vip"])
        other = queue.put("app.Send", {"to": "b"})
        queue.pop(1)[0].fail("Send:Timeout", "smtp timed out")
        waiting = post(http, f"/api/v1/qless/jobs/{other}/retry")
        assert waiting.status == 409 and "waiting, not failed" in waiting.json()["error"]
        assert post(http, "/api/v1/qless/jobs/nope/retry").status == 404
        bad = post(http, f"/api/v1/qless/jobs/{jid}/retry", {"queue": ""})
        assert bad.status == 400 and q.jobs[jid].state == "failed"
        done = post(http, f"/api/v1/qless/jobs/{jid}/retry")
        assert done.status == 200
        assert (done.json()["state"], done.json()["queue"]) == ("waiting", "emails")
        job = q.jobs[jid]  # as qless-py sees it: priority, tags and retries kept
        kept = (job.state, job.priority_value, job.tags, job.retries_left)
        assert kept == ("waiting", 5, ["vip"], 2)
        assert http.get("/api/v1/qless/failures").json()["groups"] == []
        assert [j.jid for j in queue.pop(2)] == [jid, other]


def workq(http: HttpServer) -> Workq:
    return Workq(("127.0.0.1", http.server.workq_port()), timeout=10)


def busy(http: HttpServer) -> dict[str, Any]:
    doc: dict[str, Any] = http.get("/api/v1/busy").json()
    return doc


def held(http: HttpServer) -> dict[str, str]:
    """tube -> the dialect of its holder, for every job Busy lists."""
    return {row["tube"]: row["holder"]["dialect"] for row in busy(http)["jobs"]}


def test_busy_follows_holders_of_every_dialect_as_clients_come_and_go(http: HttpServer) -> None:
    with beanstalk(http, "mail") as c:
        for i in range(5):
            c.put(b"m%d" % i)
    for _ in range(3):  # each reserves and leaves: its job goes back to ready
        with beanstalk(http, "mail") as gone:
            gone.reserve(timeout=5)
            assert held(http) == {"mail": "beanstalkd"}
    assert busy(http)["count"] == 0
    for _ in range(3):  # Workq clients that lease nothing leave nothing behind
        with workq(http) as idle:
            idle.inspect_server()
    assert busy(http)["count"] == 0

    keep = beanstalk(http, "mail")
    keep.reserve(timeout=5)
    ids = [str(uuid.uuid4()) for _ in range(2)]
    with workq(http) as w:
        for wid in ids:
            w.add(wid, "thumbs", 30_000, 60_000, b"img")
        w.lease(["thumbs"], 1000)
        w.lease(["thumbs"], 1000)
    with Qless(port=http.server.port, worker_name="box-1") as q:
        jid = q.queues["reports"].put("app.Report", {})
        assert [j.jid for j in q.queues["reports"].pop(1)] == [jid]
    # the leases and the lock outlive their connections; the beanstalkd client stays
    doc = busy(http)
    assert (doc["count"], doc["connections"]) == (4, 3)
    assert held(http) == {"mail": "beanstalkd", "thumbs": "workq", "reports": "qless"}

    with workq(http) as w:  # another connection finishes both leases
        for wid in ids:
            w.complete(wid, b"ok")
    with Qless(port=http.server.port, worker_name="box-1") as q:
        job = q.jobs[jid]
        assert isinstance(job, QlessJob)
        job.complete()
    assert held(http) == {"mail": "beanstalkd"}
    keep.close()
    assert busy(http) == {"count": 0, "connections": 0, "jobs": []}
