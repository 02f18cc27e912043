"""Every Workq command and error over a real socket."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from beanpod.client.workq import Client, ClientError, NotFound, TimedOut
from beanpod.protocols.workq import wire as w
from tests.support.workq_server import WorkqServer, new_id, wq, wq_server

__all__ = ["wq", "wq_server"]
Make = Callable[[], Client]


def test_add_lease_complete_result_inspect(wq: Make) -> None:
    c = wq()
    jid = new_id()
    c.add(jid, "ping", 1000, 60_000, b"p\r\ning", priority=3, max_attempts=2, max_fails=1)
    info = c.inspect_job(jid)
    assert info["payload"] == b"p\r\ning" and info["priority"] == b"3"
    assert info["state"] == b"0" and info["max-attempts"] == b"2"
    assert c.inspect_queue("ping") == {"ready-len": 1, "scheduled-len": 0}
    job = c.lease(["other", "ping"], 1000)
    assert (job.id, job.name, job.ttr, job.payload) == (jid, "ping", 1000, b"p\r\ning")
    assert c.inspect_job(jid)["state"] == b"4"
    c.complete(jid, b"result")
    r = c.result(jid, 0)
    assert (r.id, r.success, r.result) == (jid, True, b"result")
    with pytest.raises(ClientError, match=w.DUPLICATE_RESULT):
        c.fail(jid, b"")
    c.delete(jid)
    with pytest.raises(NotFound):
        c.result(jid, 0)


def test_schedule_and_scheduled_jobs(wq: Make) -> None:
    c = wq()
    jid = new_id()
    when = datetime.now(UTC) + timedelta(hours=1)
    c.schedule(jid, "later", 1000, 60_000, when, b"x")
    [record] = c.inspect_scheduled_jobs("later")
    assert (
        record["id"] == jid.encode()
        and record["time"] == when.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    )
    assert c.inspect_jobs("later") == []
    assert c.inspect_queue("later") == {"ready-len": 0, "scheduled-len": 1}
    with pytest.raises(TimedOut):
        c.lease(["later"], 0)
    with pytest.raises(ClientError, match=w.INVALID_TIME):
        c.schedule(new_id(), "later", 1000, 1000, "2001-01-01T00:00:00Z", b"")


def test_fail_with_max_fails_retries(wq: Make) -> None:
    c = wq()
    jid = new_id()
    c.add(jid, "f", 1000, 60_000, b"", max_fails=2)
    c.fail(c.lease("f", 100).id, b"once")
    assert c.inspect_job(jid)["state"] == b"3"
    c.fail(c.lease("f", 100).id, b"twice")
    r = c.result(jid, 0)
    assert (r.success, r.result) == (False, b"twice")


def test_inspect_queues_and_server(wq: Make) -> None:
    c = wq()
    for name in ("b", "a", "c"):
        c.add(new_id(), name, 1000, 60_000, b"")
    assert list(c.inspect_queues(1, 2)) == ["b", "c"]
    server = c.inspect_server()
    assert server["evicted-jobs"] == "0" and int(server["active-clients"]) >= 1
    datetime.strptime(server["started"], "%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b"nope\r\n", w.client_error(w.UNKNOWN_COMMAND)),
        (b"add x\r\n", w.client_error(w.INVALID_ARGS)),
        (b"delete 1 -a=\r\n", w.client_error(w.INVALID_FLAGS)),
        (b"complete 1 x\r\n", w.client_error(w.INVALID_PAYLOAD_SIZE)),
        (b"fail 1 x\r\n", w.client_error(w.INVALID_RESULT_SIZE)),
        (b"delete 1\r\n", w.client_error(w.INVALID_ID)),
        (b"lease a# 1\r\n", w.client_error(w.INVALID_NAME)),
        (b"lease a 86400001\r\n", w.client_error(w.INVALID_WAIT)),
        (b"inspect jobs a x 1\r\n", w.client_error(w.INVALID_CURSOR)),
        (b"inspect jobs a 0 0\r\n", w.client_error(w.INVALID_LIMIT)),
        (b"inspect queue nope\r\n", w.NOT_FOUND),
        (b"result 6ba7b810-9dad-41d1-80b4-00c04fd430c4 0\r\n", w.NOT_FOUND),
    ],
)
def test_errors(wq_server: WorkqServer, line: bytes, error: bytes) -> None:
    raw = wq_server.raw()
    raw.expect(line, error)
    raw.expect(b"inspect queues 0 0\r\n", w.client_error(w.INVALID_LIMIT))  # still in step
    raw.close()


def test_job_errors_with_payload_keep_the_connection_in_step(wq_server: WorkqServer) -> None:
    raw = wq_server.raw()
    jid = new_id().encode()
    bad = [
        (b"add %s q 0 1000 3\r\nabc\r\n" % jid, w.INVALID_TTR),
        (b"add %s q 1 0 3\r\nabc\r\n" % jid, w.INVALID_TTL),
        (b"add %s q 1 1 3 -priority=2147483648\r\nabc\r\n" % jid, w.INVALID_PRIORITY),
        (b"add %s q 1 1 3 -max-attempts=256\r\nabc\r\n" % jid, w.INVALID_MAX_ATTEMPTS),
        (b"add %s q 1 1 3 -max-fails=256\r\nabc\r\n" % jid, w.INVALID_MAX_FAILS),
        (b"add %s q 1 1 3\r\nabcde\r\n" % jid, w.INVALID_PAYLOAD_SIZE),
    ]
    for data, _text in bad:
        raw.send(data)
    expected = b"".join(w.client_error(text) for _, text in bad)
    # the last one leaves "e\r\n" behind: answered as an unknown command
    assert raw.read(len(expected)) == expected
    raw.expect(b"", w.client_error(w.UNKNOWN_COMMAND))
    raw.expect(b"add %s q 1000 1000 0\r\n\r\n" % jid, w.OK)
    raw.expect(b"add %s q 1000 1000 0\r\n\r\n" % jid, w.client_error(w.DUPLICATE_JOB))
    too_big = w.MAX_PAYLOAD + 1
    raw.send(b"complete %s %d\r\n" % (jid, too_big))  # refused before any payload
    raw.expect(b"delete %s\r\n" % jid, w.client_error(w.INVALID_PAYLOAD_SIZE) + w.OK)
    raw.close()


def test_max_size_payload(wq: Make) -> None:
    c = wq()
    jid = new_id()
    body = bytes(range(256)) * (w.MAX_PAYLOAD // 256)
    c.add(jid, "big", 1000, 60_000, body)
    assert c.lease("big", 0).payload == body
    c.complete(jid, body)
    assert c.result(jid, 0).result == body


def test_bare_lf_closes_the_connection(wq_server: WorkqServer) -> None:
    raw = wq_server.raw()
    raw.send(b"inspect server\n")
    assert raw.closed_by_server()  # as the reference: a read error, no reply
    raw.close()
