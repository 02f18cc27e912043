"""--max-memory and --max-jobs-per-tube over real sockets: puts are refused with each
dialect's out-of-memory error near the cap, before anything changes, while reserve,
delete, peek, stats, kick and release keep working; nothing acknowledged is lost."""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator

import pytest

from beanpod.server.edge.settings import EdgeSettings
from tests.support.wire_client import RawClient
from tests.support.workq_server import RawWorkq, WorkqServer

CAP = 2_000_000
BODY = b"x" * 1000


@pytest.fixture
def capped() -> Iterator[WorkqServer]:
    srv = WorkqServer(workq_port=0, edge=EdgeSettings(max_memory=CAP))
    srv.start()
    yield srv
    srv.stop()


def stats(client: RawClient) -> dict[str, str]:
    reply = client.cmd(b"stats\r\n")
    body = reply.split(b"\r\n", 1)[1].rsplit(b"\r\n", 1)[0].decode()
    return dict(line.split(": ", 1) for line in body.splitlines()[1:])


def put(client: RawClient, body: bytes = BODY) -> bytes:
    return client.cmd(b"put 0 0 60 %d\r\n%s\r\n" % (len(body), body))


def fill(client: RawClient) -> list[int]:
    """Put until the first refusal; the ids acknowledged."""
    ids = []
    while (reply := put(client)).startswith(b"INSERTED"):
        ids.append(int(reply.split()[1]))
        assert len(ids) < 100_000, "never refused"
    assert reply == b"OUT_OF_MEMORY\r\n"
    return ids


def assert_intact(client: RawClient, ids: list[int]) -> None:
    for job_id in ids:
        assert client.cmd(b"peek %d\r\n" % job_id) == b"FOUND %d %d\r\n%s\r\n" % (
            job_id, len(BODY), BODY)  # fmt: skip


def test_first_refusal_near_the_cap_and_draining_works(capped: WorkqServer) -> None:
    c = RawClient(capped.connect())
    ids = fill(c)
    used = int(stats(c)["memory-used"])
    assert abs(used - CAP) <= CAP * 0.05, used
    assert stats(c)["max-memory"] == str(CAP)
    assert int(stats(c)["puts-refused-memory"]) == 1
    next_id = ids[-1] + 1
    # The refusal changed nothing: no job, no id spent, and the rest keeps working.
    assert c.cmd(b"peek %d\r\n" % next_id) == b"NOT_FOUND\r\n"
    assert c.cmd(b"reserve-with-timeout 0\r\n").startswith(b"RESERVED %d " % ids[0])
    assert c.cmd(b"release %d 0 0\r\n" % ids[0]) == b"RELEASED\r\n"
    assert c.cmd(b"reserve-with-timeout 0\r\n").startswith(b"RESERVED %d " % ids[0])
    assert c.cmd(b"bury %d 0\r\n" % ids[0]) == b"BURIED\r\n"
    assert c.cmd(b"kick 10\r\n") == b"KICKED 1\r\n"
    assert c.cmd(b"peek-ready\r\n").startswith(b"FOUND")
    assert_intact(c, ids)
    # Deleting drains it: puts are taken again, then refused again near the cap.
    for job_id in ids[:100]:
        assert c.cmd(b"delete %d\r\n" % job_id) == b"DELETED\r\n"
    more = fill(c)
    assert 90 <= len(more) <= 100
    assert more[0] == next_id
    assert_intact(c, ids[100:] + more)
    c.close()


def test_workq_and_qless_get_their_own_errors(capped: WorkqServer) -> None:
    c = RawClient(capped.connect())
    fill(c)
    wq = RawWorkq(socket.create_connection(("127.0.0.1", capped.workq_port), timeout=10))
    job = str(uuid.uuid4()).encode()
    add = b"add %s q 1000 60000 %d\r\n%s\r\n" % (job, len(BODY), BODY)
    wq.expect(add, b"-SERVER-ERROR Out of memory\r\n")
    wq.expect(b"delete %s\r\n" % job, b"-NOT-FOUND\r\n")
    args = ["w", "q", "jid-1", "Klass", json.dumps({"x": "y" * 1000}), 0]
    request = json.dumps({"fn": "put", "args": args}).encode()
    reply = c.cmd(b"qless %d\r\n%s\r\n" % (len(request), request))
    assert reply == b"QLESS_ERROR OOM command not allowed when used memory > 'maxmemory'.\r\n"
    get = json.dumps({"fn": "get", "args": ["jid-1"]}).encode()
    assert c.cmd(b"qless %d\r\n%s\r\n" % (len(get), get)) == b"OK 4\r\nnull\r\n"
    wq.close()
    c.close()


def test_per_tube_cap() -> None:
    srv = WorkqServer(edge=EdgeSettings(max_jobs_per_tube=3)).start()
    try:
        c = RawClient(srv.connect())
        assert [put(c)[:8] for _ in range(4)] == [b"INSERTED"] * 3 + [b"OUT_OF_M"]
        assert c.cmd(b"use other\r\n") == b"USING other\r\n"
        assert put(c).startswith(b"INSERTED 4")
        assert c.cmd(b"delete 1\r\n") == b"DELETED\r\n"
        assert c.cmd(b"use default\r\n") == b"USING default\r\n"
        assert put(c).startswith(b"INSERTED 5")
        c.close()
    finally:
        srv.stop()


def test_no_extra_stats_keys_without_the_options() -> None:
    srv = WorkqServer().start()
    try:
        c = RawClient(srv.connect())
        keys = stats(c)
        assert "memory-used" not in keys and "max-connections" not in keys
        assert list(keys)[-1] == "platform"  # beanstalkd 1.12 ends here
        c.close()
    finally:
        srv.stop()
