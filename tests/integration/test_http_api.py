"""The JSON admin API over a real socket against a `beanpod serve` process: listings,
one job, actions (each seen over the beanstalkd protocol), bulk actions with dry run and
confirmation, bad input (never a change), and kill -9 after an acknowledged action."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import greenstalk
import pytest

from tests.support.http import HttpServer, Reply


def post(http: HttpServer, path: str, doc: dict[str, Any] | None = None) -> Reply:
    body = json.dumps(doc or {}).encode()
    return http.request("POST", path, body, {"Content-Type": "application/json"})


@pytest.fixture
def http() -> Iterator[HttpServer]:
    server = HttpServer().start()
    yield server
    server.stop()


def client(http: HttpServer, tube: str = "work") -> greenstalk.Client:
    return greenstalk.Client(("127.0.0.1", http.server.port), encoding=None, use=tube, watch=tube)


def bury_some(c: greenstalk.Client, bodies: list[bytes]) -> list[int]:
    ids = []
    for body in bodies:
        c.put(body)
        job = c.reserve(timeout=5)
        c.bury(job)
        ids.append(job.id)
    return ids


def test_tubes_jobs_pages_and_one_job(http: HttpServer) -> None:
    with client(http) as c:
        ids = bury_some(c, [b"alpha %d" % i for i in range(5)] + [b"\xff\x00bin"])
        c.put(b"ready one", delay=0)
        tubes = {t["name"]: t for t in http.get("/api/v1/tubes").json()["tubes"]}
        assert (tubes["work"]["buried"], tubes["work"]["ready"]) == (6, 1)
        first = http.get("/api/v1/tubes/work/jobs?state=buried&limit=4").json()
        assert [j["id"] for j in first["jobs"]] == ids[:4]
        rest = http.get(f"/api/v1/tubes/work/jobs?state=buried&cursor={first['next_cursor']}")
        assert [j["id"] for j in rest.json()["jobs"]] == ids[4:]
        assert rest.json()["next_cursor"] is None
        newest = http.get("/api/v1/tubes/work/jobs?state=buried&order=newest&limit=2").json()
        assert [j["id"] for j in newest["jobs"]] == ids[:-3:-1]
        found = http.get("/api/v1/tubes/work/jobs?state=buried&contains=alpha%203").json()
        assert [j["id"] for j in found["jobs"]] == [ids[3]]
        job = http.get(f"/api/v1/jobs/{ids[0]}").json()
        stats = c.stats_job(ids[0])
        assert (job["state"], job["buries"], job["pri"]) == (
            "buried",
            stats["buries"],
            stats["pri"],
        )
        assert job["body"] == {
            "size": 7,
            "truncated": False,
            "encoding": "utf-8",
            "data": "alpha 0",
        }
        binary = http.get(f"/api/v1/jobs/{ids[5]}?preview=2").json()["body"]
        assert binary == {"size": 5, "truncated": True, "encoding": "base64", "data": "/wA="}
        summary = http.get("/api/v1/summary").json()
        assert summary["jobs"]["buried"] == 6 and summary["jobs"]["ready"] == 1


def test_one_job_actions_are_seen_over_the_protocol(http: HttpServer) -> None:
    with client(http) as c:
        a, b, d = bury_some(c, [b"a", b"b", b"d"])
        assert post(http, f"/api/v1/jobs/{a}/kick").json()["state"] == "ready"
        assert c.stats_job(a)["state"] == "ready"
        assert post(http, f"/api/v1/jobs/{a}/bury").json()["state"] == "buried"
        assert c.stats_job(a)["state"] == "buried"
        assert http.request("DELETE", f"/api/v1/jobs/{b}").json() == {"id": b, "deleted": True}
        with pytest.raises(greenstalk.NotFoundError):
            c.stats_job(b)
        moved = post(http, f"/api/v1/jobs/{d}/move", {"to": "other"}).json()
        assert moved["tube"] == "other" and moved["state"] == "ready"
        assert c.stats_job(moved["id"])["tube"] == "other"
        paused = post(http, "/api/v1/tubes/work/pause", {"seconds": 60}).json()
        assert paused["paused"] and c.stats_tube("work")["pause"] == 60
        assert not post(http, "/api/v1/tubes/work/unpause").json()["paused"]


def test_bulk_kick_needs_the_dry_runs_token(http: HttpServer) -> None:
    with client(http) as c:
        ids = bury_some(c, [b"x-%d" % i for i in range(6)] + [b"keep"])
        flt = {"state": "buried", "contains": "x-"}
        dry = post(http, "/api/v1/tubes/work/kick", flt).json()
        assert dry["dry_run"] and dry["count"] == 6
        assert c.stats_tube("work")["current-jobs-buried"] == 7  # a dry run changes nothing
        wrong = post(
            http, "/api/v1/tubes/work/kick", {**flt, "contains": "x", "confirm": dry["confirm"]}
        )
        assert wrong.status == 400
        done = post(http, "/api/v1/tubes/work/kick", {**flt, "confirm": dry["confirm"]}).json()
        assert done["done"] == 6
        assert c.peek_buried().id == ids[-1]
        assert c.stats_tube("work")["current-jobs-ready"] == 6
        dry = post(http, "/api/v1/tubes/work/delete", {"state": "ready", "limit": 2}).json()
        post(
            http,
            "/api/v1/tubes/work/delete",
            {"state": "ready", "limit": 2, "confirm": dry["confirm"]},
        )
        assert c.stats_tube("work")["current-jobs-ready"] == 4


BAD = [
    ("GET", "/api/v1/tubes/nope", None, 404),
    ("GET", "/api/v1/tubes/nope/jobs", None, 404),
    ("GET", "/api/v1/jobs/999999", None, 404),
    ("GET", "/api/v1/jobs/abc", None, 400),
    ("GET", "/api/v1/tubes/work/jobs?state=lost", None, 400),
    ("GET", "/api/v1/tubes/work/jobs?cursor=xyz", None, 400),
    ("GET", "/api/v1/tubes/work/jobs?limit=0", None, 400),
    ("GET", "/api/v1/tubes/work/jobs?order=random", None, 400),
    ("GET", "/api/v1/tubes/work/jobs?contains=" + "a" * 2000, None, 413),
    ("POST", "/api/v1/tubes/work/kick", b"{not json", 400),
    ("POST", "/api/v1/tubes/work/kick", b"[1]", 400),
    ("POST", "/api/v1/tubes/work/kick", b'{"state": "ready"}', 400),
    ("POST", "/api/v1/tubes/work/kick", b'{"frobnicate": 1}', 400),
    ("POST", "/api/v1/tubes/work/kick", b'{"limit": -1}', 400),
    ("POST", "/api/v1/tubes/work/kick", b'{"confirm": "1.abc"}', 400),
    ("POST", "/api/v1/tubes/work/move", b'{"to": "-bad"}', 400),
    ("POST", "/api/v1/tubes/work/pause", b'{"seconds": "soon"}', 400),
    ("POST", "/api/v1/tubes/work/pause", b"{}", 400),
    ("POST", "/api/v1/tubes/work/kick", b"x" * (2 << 20), 413),
    ("POST", "/api/v1/qless/failures/none/retry", b"{}", 404),
]


def test_bad_input_is_a_json_error_and_changes_nothing(http: HttpServer) -> None:
    with client(http) as c:
        bury_some(c, [b"a", b"b"])
        before = c.stats_tube("work")
        for method, path, body, status in BAD:
            reply = http.request(method, path, body, {"Content-Type": "application/json"})
            assert reply.status == status, (method, path, reply.body[:200])
            assert reply.json()["status"] == status and reply.json()["error"]
        assert c.stats_tube("work") == before


def test_acknowledged_actions_survive_kill_9(tmp_path: Path) -> None:
    http = HttpServer(["-b", str(tmp_path), "-f", "0"]).start()
    try:
        with client(http) as c:
            ids = bury_some(c, [b"job %d" % i for i in range(50)])
            dry = post(http, "/api/v1/tubes/work/kick", {"state": "buried", "limit": 30}).json()
            done = post(http, "/api/v1/tubes/work/kick",
                        {"state": "buried", "limit": 30, "confirm": dry["confirm"]})  # fmt: skip
            assert done.json()["done"] == 30
            assert post(http, f"/api/v1/jobs/{ids[40]}/delete").status == 200
            assert post(http, "/api/v1/tubes/work/pause", {"seconds": 3600}).status == 200
    finally:
        http.server.kill()
    again = HttpServer(["-b", str(tmp_path)]).start()
    try:
        with client(again) as c:
            stats = c.stats_tube("work")
            assert (stats["current-jobs-ready"], stats["current-jobs-buried"]) == (30, 19)
            assert stats["pause"] == 3600
            assert c.stats_job(ids[0])["kicks"] == 1
            with pytest.raises(greenstalk.NotFoundError):
                c.stats_job(ids[40])
    finally:
        again.stop()


def test_qless_views_and_retry_of_a_failure_group(http: HttpServer) -> None:
    from beanpod.client.qless import Client

    with Client(port=http.server.port, worker_name="w1") as q:
        queue = q.queues["emails"]
        jids = [queue.put("app.Send", {"n": n}, tags=["t"]) for n in range(3)]
        q.track(jids[0])
        queue.recur("app.Tick", {}, interval=60)
        for job in queue.pop(2):
            job.fail("Send:Timeout", "smtp timed out")
        groups = http.get("/api/v1/qless/failures").json()["groups"]
        assert groups == [{"group": "Send:Timeout", "count": 2}]
        group = http.get("/api/v1/qless/failures/Send:Timeout").json()
        assert group["total"] == 2
        assert {j["failure"]["message"] for j in group["jobs"]} == {"smtp timed out"}
        job_id = http.get("/api/v1/tubes/emails/jobs?state=buried").json()["jobs"][0]["id"]
        one = http.get(f"/api/v1/jobs/{job_id}").json()
        assert one["qless"]["failure"]["group"] == "Send:Timeout" and one["qless"]["history"]
        workers = http.get("/api/v1/qless/workers").json()["workers"]
        assert workers[0]["name"] == "w1"
        tracked = http.get("/api/v1/qless/tracked").json()
        assert [j["jid"] for j in tracked["jobs"]] == [jids[0]]
        assert http.get("/api/v1/qless/recurring").json()["recurring"][0]["klass"] == "app.Tick"
        stats = http.get("/api/v1/qless/stats/emails").json()
        assert stats["failed"] == 2 and stats["queue"] == "emails"
        dry = post(http, "/api/v1/qless/failures/Send:Timeout/retry").json()
        assert dry["count"] == 2 and dry["selection"]["queue"] == "emails"
        done = post(http, "/api/v1/qless/failures/Send:Timeout/retry",
                    {"confirm": dry["confirm"]}).json()  # fmt: skip
        assert done["done"] == 2
        assert q.jobs.failed() == {}
        assert sorted(j.jid for j in queue.peek(9) if j.klass == "app.Send") == sorted(jids)


def test_bulk_move_and_the_event_log_records_api_actions(tmp_path: Path) -> None:
    events = tmp_path / "events"
    http = HttpServer(["--events", str(events)]).start()
    try:
        with client(http) as c:
            a, b = bury_some(c, [b"one", b"two"])
            c.put(b"three")
            post(http, f"/api/v1/jobs/{a}/kick")
            dry = post(http, "/api/v1/tubes/work/move", {"state": "ready", "to": "elsewhere"})
            assert dry.json()["count"] == 2
            token = dry.json()["confirm"]
            moved = post(http, "/api/v1/tubes/work/move",
                         {"state": "ready", "to": "elsewhere", "confirm": token})  # fmt: skip
            assert moved.json()["done"] == 2
            assert c.stats_tube("elsewhere")["current-jobs-ready"] == 2
            assert c.stats_tube("work")["current-jobs-ready"] == 0
            post(http, "/api/v1/tubes/work/pause", {"seconds": 5})
    finally:
        http.stop()  # a clean stop writes the buffered events
    lines = [json.loads(line) for path in sorted(events.glob("date=*/*.jsonl"))
             for line in path.read_text().splitlines()]  # fmt: skip
    kick = [e for e in lines if e["event"] == "kick"]
    assert [(e["job"], e["from"], e["conn"]) for e in kick] == [(a, "buried", None)]
    deleted = {e["job"] for e in lines if e["event"] == "delete"}
    assert a in deleted and b not in deleted  # moved: a copy put, the original deleted
    assert sum(e["event"] == "put" and e["queue"] == "elsewhere" for e in lines) == 2
    assert any(e["event"] == "pause" and e["queue"] == "work" for e in lines)


def test_a_bulk_kick_lets_other_connections_in(http: HttpServer) -> None:
    """While 30,000 jobs are kicked, another connection's commands are answered (the
    kick runs in slices across loop turns, not in one go)."""
    with socket.create_connection(("127.0.0.1", http.server.port)) as sock:
        sock.sendall(b"use work\r\n" + b"put 0 0 60 1\r\nx\r\n" * 30_000)
        _read_lines(sock, 30_001)
        sock.sendall(
            b"".join(b"reserve-job %d\r\nbury %d 0\r\n" % (i, i) for i in range(1, 30_001))
        )
        _read_lines(sock, 90_000)  # per job: RESERVED and its body, then BURIED
    dry = post(http, "/api/v1/tubes/work/kick").json()
    answered = []
    stop = threading.Event()

    def probe() -> None:
        with socket.create_connection(("127.0.0.1", http.server.port)) as probe_sock:
            while not stop.is_set():
                probe_sock.sendall(b"list-tube-used\r\n")
                _read_lines(probe_sock, 1)
                answered.append(time.monotonic())

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    while not answered:
        time.sleep(0.001)
    started = time.monotonic()
    done = post(http, "/api/v1/tubes/work/kick", {"confirm": dry["confirm"]}).json()
    ended = time.monotonic()
    stop.set()
    thread.join(timeout=5)
    assert done["done"] == 30_000
    assert sum(started < t < ended for t in answered) >= 2


def _read_lines(sock: socket.socket, count: int) -> None:
    data = b""
    while data.count(b"\r\n") < count:
        chunk = sock.recv(1 << 16)
        assert chunk, "server closed the connection"
        data += chunk


def test_workq_results_and_a_workq_jobs_extras(http: HttpServer) -> None:
    import re

    from beanpod.client.workq import Client as WorkqClient

    line = next(x for x in http.server.log if "(Workq protocol)" in x)
    port = int(re.search(r":(\d+) \(Workq protocol\)", line).group(1))  # type: ignore[union-attr]
    uuid = "6ba7b810-9dad-41d1-80b4-00c04fd430c8"
    with WorkqClient(("127.0.0.1", port)) as w:
        w.add(uuid, "ping", 60_000, 60_000, b"payload")
        leased = w.lease(["ping"], 1000)
        w.complete(leased.id, b"pong")
    results = http.get("/api/v1/workq/results").json()
    [result] = results["results"]
    assert (result["uuid"], result["outcome"], result["tube"]) == (uuid, "completed", "ping")
    assert result["result"]["data"] == "pong" and results["next_cursor"] is None
    job = http.get(f"/api/v1/jobs/{result['id']}").json()
    assert job["workq"]["uuid"] == uuid and job["workq"]["attempts"] == 1
    assert job["body"]["data"] == "payload"


JUNK = ["", "0", "-1", "99999999999999999999999", "abc", "%00", "%FF%FE", "null", "[]", "{}",
        "a" * 300, "1.5", "true", "%2F..%2F"]  # fmt: skip
GETS = ["/api/v1/tubes/{x}", "/api/v1/tubes/work/jobs?state={x}", "/api/v1/jobs/{x}",
        "/api/v1/tubes/work/jobs?cursor={x}&order={x}&limit={x}&contains={x}",
        "/api/v1/jobs/1?preview={x}", "/api/v1/qless/failures/{x}?start={x}&limit={x}",
        "/api/v1/qless/stats/{x}?date={x}", "/api/v1/qless/workers/{x}",
        "/api/v1/workq/results?cursor={x}&limit={x}"]  # fmt: skip
POSTS = ["/api/v1/tubes/work/kick", "/api/v1/tubes/work/delete", "/api/v1/tubes/work/move",
         "/api/v1/tubes/work/pause", "/api/v1/jobs/1/move", "/api/v1/jobs/1/bury",
         "/api/v1/qless/failures/g/retry"]  # fmt: skip
BODIES = [b"", b"null", b"1", b'"x"', b"[]", b'{"state": 1}', b'{"limit": "x"}',
          b'{"to": 5}', b'{"seconds": -1}', b'{"confirm": null}', b'{"contains": []}',
          b'{"queue": 7}', b"\xff\xfe", b'{"confirm": "9999999999.00"}']  # fmt: skip


def test_junk_never_answers_500_nor_changes_anything(http: HttpServer) -> None:
    with client(http) as c:
        bury_some(c, [b"a", b"b"])
        before = (c.stats_tube("work"), c.stats()["total-jobs"])
        for path in GETS:
            for junk in JUNK:
                reply = http.get(path.replace("{x}", junk))
                assert reply.status < 500 and reply.json(), (path, junk, reply.body[:200])
        for path in POSTS:
            for body in BODIES:
                reply = http.request("POST", path, body, {"Content-Type": "application/json"})
                assert reply.status < 500, (path, body, reply.status, reply.body[:200])
                assert reply.status >= 400 or reply.json()["dry_run"], (path, body)
        assert (c.stats_tube("work"), c.stats()["total-jobs"]) == before


def test_api_changes_go_to_the_audit_log(tmp_path: Path) -> None:
    """--audit-log: each change the API made is one JSON line (reads are not)."""
    log = tmp_path / "audit.jsonl"
    server = HttpServer(args=["--audit-log", str(log)]).start()
    try:
        with client(server) as c:
            [job] = bury_some(c, [b"x"])
            assert server.get("/api/v1/tubes").status == 200
            assert post(server, f"/api/v1/jobs/{job}/kick").status == 200
    finally:
        server.stop()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    http = [line for line in lines if line["action"] == "http"]
    assert [(h["method"], h["path"], h["status"]) for h in http] == [
        ("POST", f"/api/v1/jobs/{job}/kick", 200)
    ]
    assert http[0]["peer"] == "127.0.0.1" and isinstance(http[0]["ts"], float)
