"""One job namespace, three dialects: no dialect clobbers another's job. A qless jid
names qless jobs only (a decimal jid too); a beanstalkd-put job is `beanstalkd:<id>` to
qless, which changes it only once qless pop handed it out (docs/qless.md)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.servers import SubprocessServer
from tests.support.wire_client import RawClient
from tests.support.workq_server import WorkqServer

# Every qless function that takes a jid, called with `jid` (JSON-able arguments).
JID_CALLS: list[tuple[str, list[Any]]] = [
    ("get", ["{jid}"]), ("multiget", ["{jid}"]), ("priority", ["{jid}", 5]),
    ("tag", ["add", "{jid}", "t"]), ("tag", ["remove", "{jid}", "t"]),
    ("track", ["track", "{jid}"]), ("track", ["untrack", "{jid}"]),
    ("log", ["{jid}", "note"]), ("depends", ["{jid}", "off", "all"]),
    ("heartbeat", ["{jid}", "w"]), ("complete", ["{jid}", "w", "q"]),
    ("fail", ["{jid}", "w", "g", "m"]), ("retry", ["{jid}", "q", "w"]),
    ("timeout", ["{jid}"]), ("recur.get", ["{jid}"]), ("recur.update", ["{jid}", "priority", 3]),
    ("recur.tag", ["{jid}", "t"]), ("unrecur", ["{jid}"]), ("cancel", ["{jid}"]),
    ("requeue", ["w", "q", "{jid}", "k", "{}", 0]), ("put", ["w", "q", "{jid}", "k", "{}", 0]),
    ("recur", ["q", "{jid}", "k", "{}", "interval", 60, 0]),
]  # fmt: skip


def qless(client: RawClient, fn: str, *args: Any) -> bytes:
    body = json.dumps({"fn": fn, "args": list(args)}).encode()
    return client.cmd(b"qless %d\r\n%s\r\n" % (len(body), body))


def result(reply: bytes) -> Any:
    head, body = reply.split(b"\r\n", 1)
    assert head.startswith(b"OK "), reply
    return json.loads(body[:-2])


def stats_job(client: RawClient, job_id: int) -> dict[str, str]:
    reply = client.cmd(b"stats-job %d\r\n" % job_id)
    assert reply.startswith(b"OK "), reply
    yaml = reply.split(b"\r\n")[1].decode()  # "---\nkey: value\n..."
    return dict(line.split(": ", 1) for line in yaml.splitlines()[1:])


@pytest.fixture
def server_with_workq() -> Iterator[WorkqServer]:
    srv = WorkqServer(workq_port=0).start()
    yield srv
    srv.stop()


@pytest.fixture
def fresh() -> Iterator[SubprocessServer]:
    srv = SubprocessServer().start()
    yield srv
    srv.stop()


def test_a_qless_put_of_jid_1_leaves_beanstalkd_job_1_alone(fresh: SubprocessServer) -> None:
    """The issue's example, on a fresh server process."""
    bs = RawClient(socket.create_connection(("127.0.0.1", fresh.port), timeout=10))
    assert bs.cmd(b"use canary\r\n") == b"USING canary\r\n"
    assert bs.cmd(b"put 1024 0 120 0\r\n\r\n") == b"INSERTED 1\r\n"
    assert result(qless(bs, "put", "w", "q", "1", "k", "{}", 0)) == "1"
    assert bs.cmd(b"peek 1\r\n") == b"FOUND 1 0\r\n\r\n"
    stats = stats_job(bs, 1)
    assert (stats["tube"], stats["state"], stats["pri"]) == ("canary", "ready", "1024")
    mine = result(qless(bs, "get", "1"))
    assert (mine["queue"], mine["data"], mine["state"]) == ("q", "{}", "waiting")
    theirs = result(qless(bs, "get", "beanstalkd:1"))
    assert (theirs["jid"], theirs["queue"], theirs["data"]) == ("beanstalkd:1", "canary", '""')
    assert bs.cmd(b"watch canary\r\n") == b"WATCHING 2\r\n"
    assert bs.cmd(b"ignore default\r\n") == b"WATCHING 1\r\n"
    assert bs.cmd(b"reserve-with-timeout 0\r\n") == b"RESERVED 1 0\r\n\r\n"
    bs.close()


def _canaries(bs: RawClient, keeper: RawClient) -> list[int]:
    """A ready beanstalkd job and one the keeper holds, both in tube `canary`."""
    assert bs.cmd(b"use canary\r\n") == keeper.cmd(b"use canary\r\n") == b"USING canary\r\n"
    assert keeper.cmd(b"watch canary\r\n") == b"WATCHING 2\r\n"
    held = int(keeper.cmd(b"put 7 0 3600 4\r\nheld\r\n").split()[1])
    assert keeper.cmd(b"reserve-with-timeout 0\r\n") == b"RESERVED %d 4\r\nheld\r\n" % held
    ready = int(bs.cmd(b"put 9 0 120 5\r\nready\r\n").split()[1])
    return [ready, held]


def _unchanged(bs: RawClient, ids: list[int]) -> None:
    expected = [(b"ready", "ready", "9"), (b"held", "reserved", "7")]
    for job_id, (body, state, pri) in zip(ids, expected, strict=True):
        assert bs.cmd(b"peek %d\r\n" % job_id) == b"FOUND %d %d\r\n%s\r\n" % (
            job_id, len(body), body)  # fmt: skip
        stats = stats_job(bs, job_id)
        assert (stats["tube"], stats["state"], stats["pri"]) == ("canary", state, pri)


def _call_all(bs: RawClient, jid: str) -> list[bytes]:
    replies = []
    for fn, args in JID_CALLS:
        filled = [jid if a == "{jid}" else a for a in args]
        replies.append(qless(bs, fn, *filled))
    return replies


def test_no_qless_function_changes_a_beanstalkd_job(server_with_workq: WorkqServer) -> None:
    """Every jid-taking function, by decimal jid (before and after a qless job of that
    name exists) and by the job's `beanstalkd:<id>` name: the jobs stay as put."""
    bs, keeper = RawClient(server_with_workq.connect()), RawClient(server_with_workq.connect())
    ids = _canaries(bs, keeper)
    for job_id in ids:
        for jid in (str(job_id), str(job_id), f"beanstalkd:{job_id}"):
            replies = _call_all(bs, jid)
            _unchanged(bs, ids)
            assert not any(b"INTERNAL" in r for r in replies), replies
    named = f"beanstalkd:{ids[0]}"
    refused = _call_all(bs, named)
    assert refused[0].startswith(b"OK ")  # get reads it
    for reply in refused[2:8]:  # priority, tag, track, log: not popped by qless
        assert reply.startswith(b"QLESS_ERROR ") and b"not popped by qless" in reply, reply
    assert refused[-2] == (
        b"QLESS_ERROR Put(): jid %s is reserved: jids starting with beanstalkd: name jobs "
        b"put by beanstalkd, which a qless put never replaces; choose another jid\r\n"
        % named.encode()
    )
    assert refused[-1].startswith(b"QLESS_ERROR Recur(): jid %s is reserved" % named.encode())
    bs.close()
    keeper.close()


def test_qless_pop_still_runs_a_beanstalkd_job(server_with_workq: WorkqServer) -> None:
    """The interoperation kept: pop hands a beanstalkd job out as `beanstalkd:<id>`, and
    its worker completes it; a qless job `<id>` put meanwhile is a different job."""
    bs = RawClient(server_with_workq.connect())
    assert bs.cmd(b"use q\r\n") == b"USING q\r\n"
    job_id = int(bs.cmd(b'put 0 0 60 7\r\n{"a":1}\r\n').split()[1])
    assert result(qless(bs, "put", "w", "other", str(job_id), "k", "{}", 0)) == str(job_id)
    [popped] = result(qless(bs, "pop", "q", "w", 1))
    assert (popped["jid"], popped["data"]) == (f"beanstalkd:{job_id}", '{"a":1}')
    assert result(qless(bs, "complete", popped["jid"], "w", "q")) == "complete"
    assert stats_job(bs, job_id)["state"] == "complete"
    assert result(qless(bs, "get", str(job_id)))["queue"] == "other"
    bs.close()


def test_workq_and_qless_ids_never_meet(server_with_workq: WorkqServer) -> None:
    """A Workq add under a beanstalkd job's synthetic UUID is a duplicate; under a qless
    job's, it is a new Workq job; a qless put named by a Workq UUID is a new qless job."""
    bs, wq = RawClient(server_with_workq.connect()), server_with_workq.client()
    raw = server_with_workq.raw()
    plain = int(bs.cmd(b"put 0 0 60 5\r\nplain\r\n").split()[1])
    assert result(qless(bs, "put", "w", "q", "x", "k", '"qless"', 0)) == "x"
    qless_id = plain + 1  # the next engine id
    synthetic = b"00000000-0000-4000-8000-%012x" % plain
    raw.expect(b"add %s q 1000 60000 1\r\nw\r\n" % synthetic, b"-CLIENT-ERROR Duplicate job\r\n")
    own = b"00000000-0000-4000-8000-%012x" % qless_id
    raw.expect(b"add %s q 1000 60000 1\r\nw\r\n" % own, b"+OK\r\n")
    uuid = "6ba7b810-9dad-41d1-80b4-00c04fd430c4"
    raw.expect(b"add %s wq 1000 60000 4\r\nwork\r\n" % uuid.encode(), b"+OK\r\n")
    assert result(qless(bs, "put", "w", "q", uuid, "k", "{}", 0)) == uuid
    assert wq.inspect_job(uuid)["payload"] == b"work"
    assert wq.inspect_job(own)["payload"] == b"w"
    assert bs.cmd(b"peek %d\r\n" % plain) == b"FOUND %d 5\r\nplain\r\n" % plain
    assert bs.cmd(b"peek %d\r\n" % qless_id) == b'FOUND %d 7\r\n"qless"\r\n' % qless_id
    assert result(qless(bs, "get", "x"))["data"] == '"qless"'
    for raw_client in (bs, raw):
        raw_client.close()
    wq.close()
