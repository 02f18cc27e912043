"""What a qless client was told survives kill -9 of a real `beanpod serve -b DIR -f 0`:
per-queue statistics, and a recurring child's rank among jobs already waiting."""

from __future__ import annotations

from pathlib import Path

from beanpod.client.qless import Client
from tests.support.servers import SubprocessServer


def _serve(directory: Path) -> SubprocessServer:
    return SubprocessServer(["--workq-port", "off", "-b", str(directory), "-f", "0"]).start()


def test_queue_statistics_survive_kill_9(tmp_path: Path) -> None:
    server = _serve(tmp_path)
    try:
        with Client(port=server.port, worker_name="w") as c:
            for jid in ("a", "b", "c"):
                c.queues["q"].put("K", {}, jid=jid)
            jobs = c.queues["q"].pop(3)
            jobs[0].complete()
            jobs[1].fail("g", "m")
            before = c.queues["q"].stats()
    finally:
        server.kill()
    assert before["wait"]["count"] == 3 and before["run"]["count"] == 1
    server = _serve(tmp_path)
    try:
        with Client(port=server.port, worker_name="w") as c:
            assert c.queues["q"].stats() == before
    finally:
        server.stop()


def test_recurring_child_keeps_its_rank_across_kill_9(tmp_path: Path) -> None:
    server = _serve(tmp_path)
    try:
        with Client(port=server.port, worker_name="w") as c:
            c.queues["q"].put("K", {}, jid="waiting-before")
            c.call("recur", "q", "r", "K", "{}", "interval", 3600, 0)
    finally:
        server.kill()
    server = _serve(tmp_path)
    try:
        with Client(port=server.port, worker_name="w") as c:
            c.queues["q"].put("K", {}, jid="put-after")
            order = [job.jid for job in c.queues["q"].pop(3)]
    finally:
        server.stop()
    # the child was due when the template was made: behind the job waiting before it,
    # ahead of the job put after the restart (qless-core scores it by its due time)
    assert order == ["waiting-before", "r-1", "put-after"]


def test_known_queues_survive_kill_9_until_forgotten(tmp_path: Path) -> None:
    server = _serve(tmp_path)
    try:
        with Client(port=server.port, worker_name="w") as c:
            c.queues["emptied"].put("K", {}, jid="moved")
            c.call("put", "w", "kept", "moved", "K", "{}", 0)  # "emptied" has no job now
            c.queues["gone"].put("K", {}, jid="x")
            c.call("cancel", "x")
            c.call("queue.forget", "gone")
            before = c.call("queues")
    finally:
        server.kill()
    assert [q["name"] for q in before] == ["emptied", "kept"]
    server = _serve(tmp_path)
    try:
        with Client(port=server.port, worker_name="w") as c:
            assert c.call("queues") == before
    finally:
        server.stop()


def test_a_completed_job_forgets_its_released_dependents_across_kill_9(tmp_path: Path) -> None:
    server = _serve(tmp_path)
    try:
        with Client(port=server.port, worker_name="w") as c:
            c.call("put", "w", "q", "first", "K", "{}", 0)
            c.call("put", "w", "q", "then", "K", "{}", 0, "depends", ["first"])
            c.call("pop", "q", "w", 1)
            c.call("complete", "first", "w", "q")
            before = c.call("multiget", "first", "then")
    finally:
        server.kill()
    assert before[0]["dependents"] == [] and before[1]["state"] == "waiting"
    server = _serve(tmp_path)
    try:
        with Client(port=server.port, worker_name="w") as c:
            assert c.call("multiget", "first", "then") == before
    finally:
        server.stop()


def test_tracked_jobs_since_gone_are_still_listed_after_kill_9(tmp_path: Path) -> None:
    server = _serve(tmp_path)
    try:
        with Client(port=server.port, worker_name="w") as c:
            for jid in ("kept", "gone", "dropped"):
                c.call("put", "w", "q", jid, "K", "{}", 0)
                c.call("track", "track", jid)
            c.call("track", "untrack", "dropped")
            c.call("cancel", "gone")
            before = c.call("track")
    finally:
        server.kill()
    assert [j["jid"] for j in before["jobs"]] == ["kept"] and before["expired"] == ["gone"]
    server = _serve(tmp_path)
    try:
        with Client(port=server.port, worker_name="w") as c:
            assert c.call("track") == before
    finally:
        server.stop()
