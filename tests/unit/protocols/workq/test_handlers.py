"""One test group per Workq verb, through the parser and handlers with a fake session."""

from __future__ import annotations

from beanpod.core.conn import Conn
from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.core.workq import Wait, Workq
from beanpod.protocols.workq import wire as w
from beanpod.protocols.workq.commands import Parser
from beanpod.protocols.workq.context import Dialect
from beanpod.protocols.workq.handlers import handle

U1 = b"6ba7b810-9dad-41d1-80b4-00c04fd430c1"
U2 = b"6ba7b810-9dad-41d1-80b4-00c04fd430c2"
T0 = 1_465_886_806_000  # 2016-06-14T06:46:46Z


class FakeSession:
    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.conn: Conn = dialect.workq.connect()
        self.now = T0
        self.wait: Wait | None = None
        self.batch_bytes = 0  # the output limit's count (server/batch_session.py)
        self.parser = Parser()
        self.delivered: list[bytes] = []

    def deliver(self, reply: bytes) -> None:
        self.delivered.append(reply)

    def send(self, data: bytes) -> list[bytes | None]:
        self.parser.feed(data)
        out = []
        while (cmd := self.parser.next_command()) is not None:
            out.append(handle(self, cmd))
        return out

    def one(self, data: bytes) -> bytes | None:
        [reply] = self.send(data)
        return reply


def make() -> tuple[Engine, FakeSession, FakeSession]:
    engine = Engine(MoveCheck())
    dialect = Dialect(engine, Workq(engine), T0)
    return engine, FakeSession(dialect), FakeSession(dialect)


def err(text: str) -> bytes:
    return w.client_error(text)


def test_add() -> None:
    engine, s, _ = make()
    assert s.one(b"add %s ping 1000 60000 4 -priority=10\r\npong\r\n" % U1) == w.OK
    assert s.one(b"add %s ping 1000 60000 4\r\npong\r\n" % U1) == err(w.DUPLICATE_JOB)
    assert s.one(b"add nope ping 1000 60000 0\r\n\r\n") == err(w.INVALID_ID)
    assert s.one(b"add %s p/q 1000 60000 0\r\n\r\n" % U2) == err(w.INVALID_NAME)
    assert s.one(b"add %s q 0 60000 0\r\n\r\n" % U2) == err(w.INVALID_TTR)
    assert s.one(b"add %s q 1 2592000001 0\r\n\r\n" % U2) == err(w.INVALID_TTL)
    assert s.one(b"add %s q 1 1 0 -priority=x\r\n\r\n" % U2) == err(w.INVALID_PRIORITY)
    assert s.one(b"add %s q 1 1 0 -a=1 -b=2 -c=3 -d=4\r\n\r\n" % U2) == err(w.INVALID_ARGS)
    assert s.one(b"add %s q 1 1 0 -unknown=1\r\n\r\n" % U2) == w.OK  # ignored, as reference
    assert engine.tubes["ping"].jobs == 1


def test_add_while_draining_is_a_server_error() -> None:
    engine, s, _ = make()
    engine.draining = True
    assert s.one(b"add %s q 1 1 0\r\n\r\n" % U1) == w.server_error("Server is draining")


def test_schedule() -> None:
    engine, s, _ = make()
    line = b"schedule %s q 1000 60000 2016-06-14T06:47:46Z 1\r\nx\r\n" % U1
    assert s.one(line) == w.OK
    assert engine.tubes["q"].delayed and not engine.tubes["q"].ready
    past = b"schedule %s q 1000 1000 2016-06-14T06:40:00Z 0\r\n\r\n" % U2
    assert s.one(past) == err(w.INVALID_TIME)  # time + ttl already over
    assert s.one(b"schedule %s q 1 1 yesterday 0\r\n\r\n" % U2) == err(w.INVALID_TIME)
    reply = s.one(b"inspect job %s\r\n" % U1)
    assert reply is not None and reply.startswith(b"+OK 1\r\n%s 13\r\n" % U1)
    assert reply.endswith(b"time 2016-06-14T06:47:46Z\r\n")


def test_lease_complete_result() -> None:
    _, s, worker = make()
    s.send(b"add %s ping 1000 60000 4\r\nping\r\n" % U1)
    assert worker.one(b"lease ping 0\r\n") == w.lease_reply(U1, b"ping", 1000, b"ping")
    assert worker.one(b"lease ping 0\r\n") == w.TIMEOUT
    assert worker.one(b"lease ping/x 0\r\n") == err(w.INVALID_NAME)
    assert worker.one(b"lease ping x\r\n") == err(w.INVALID_WAIT)
    assert worker.one(b"complete %s 4\r\npong\r\n" % U1) == w.OK
    assert worker.one(b"complete %s 0\r\n\r\n" % U1) == err(w.DUPLICATE_RESULT)
    assert s.one(b"result %s 0\r\n" % U1) == w.result_reply(U1, 1, b"pong")
    assert s.one(b"result %s 0\r\n" % U2) == w.NOT_FOUND


def test_lease_parks_then_delivers() -> None:
    _, s, worker = make()
    assert worker.one(b"lease a b 1000\r\n") is None
    s.send(b"add %s b 1000 60000 1\r\nz\r\n" % U1)
    assert worker.delivered == [w.lease_reply(U1, b"b", 1000, b"z")]


def test_fail_and_max_fails() -> None:
    _, s, _ = make()
    s.send(b"add %s q 1000 60000 0 -max-fails=2\r\n\r\n" % U1)
    assert s.one(b"fail %s 1\r\nx\r\n" % U1) == w.OK
    assert b"\r\nfails 1\r\n" in (s.one(b"inspect job %s\r\n" % U1) or b"")
    assert s.one(b"fail %s 1\r\ny\r\n" % U1) == w.OK
    assert s.one(b"result %s 0\r\n" % U1) == w.result_reply(U1, 0, b"y")
    assert s.one(b"fail %s 0\r\n\r\n" % U2) == w.NOT_FOUND


def test_run_and_result_park_until_completion() -> None:
    _, client, worker = make()
    assert client.one(b"run %s q 1000 5000 2\r\nhi\r\n" % U1) is None
    watcher = FakeSession(client.dialect)
    assert watcher.one(b"result %s 5000\r\n" % U1) is None
    assert worker.one(b"lease q 0\r\n") == w.lease_reply(U1, b"q", 1000, b"hi")
    assert worker.one(b"complete %s 3\r\nbye\r\n" % U1) == w.OK
    expected = w.result_reply(U1, 1, b"bye")
    assert client.delivered == watcher.delivered == [expected]
    assert client.one(b"inspect job %s\r\n" % U1) == w.NOT_FOUND
    two_flags = b"run %s q 1000 5000 0 -priority=1 -max-fails=1\r\n\r\n" % U1
    assert client.one(two_flags) == err(w.INVALID_ARGS)


def test_delete() -> None:
    _, s, _ = make()
    s.send(b"add %s q 1000 60000 0\r\n\r\n" % U1)
    assert s.one(b"delete %s\r\n" % U1) == w.OK
    assert s.one(b"delete %s\r\n" % U1) == w.NOT_FOUND
    assert s.one(b"delete %s extra\r\n" % U1) == err(w.INVALID_ARGS)


def test_inspect_job_keys_in_reference_order() -> None:
    _, s, _ = make()
    s.send(b"add %s ping 1000 60000 4 -priority=-3 -max-attempts=2 -max-fails=1\r\nping\r\n" % U1)
    assert s.one(b"inspect job %s\r\n" % U1) == (
        b"+OK 1\r\n%s 12\r\nname ping\r\nttr 1000\r\nttl 60000\r\npayload-size 4\r\n"
        b"payload ping\r\nmax-attempts 2\r\nattempts 0\r\nmax-fails 1\r\nfails 0\r\n"
        b"priority -3\r\nstate 0\r\ncreated 2016-06-14T06:46:46Z\r\n" % U1
    )


def test_inspect_jobs_scheduled_queue_queues_server() -> None:
    _, s, _ = make()
    for uuid, pri in ((U1, 1), (U2, 5)):
        s.send(b"add %s q 1000 60000 0 -priority=%d\r\n\r\n" % (uuid, pri))
    reply = s.one(b"inspect jobs q 0 10\r\n") or b""
    assert reply.startswith(b"+OK 2\r\n%s 12\r\n" % U2) and b"\r\n%s 12\r\n" % U1 in reply
    assert (s.one(b"inspect jobs q 1 1\r\n") or b"").startswith(b"+OK 1\r\n%s 12" % U1)
    assert s.one(b"inspect jobs q 2 10\r\n") == b"+OK 0\r\n"
    assert s.one(b"inspect jobs nope 0 10\r\n") == w.NOT_FOUND
    assert s.one(b"inspect jobs q 0 101\r\n") == err(w.INVALID_LIMIT)
    assert s.one(b"inspect scheduled-jobs q 0 10\r\n") == b"+OK 0\r\n"
    queue = b"q 2\r\nready-len 2\r\nscheduled-len 0\r\n"
    assert s.one(b"inspect queue q\r\n") == b"+OK 1\r\n" + queue
    default = b"default 2\r\nready-len 0\r\nscheduled-len 0\r\n"
    assert s.one(b"inspect queues 0 10\r\n") == b"+OK 2\r\n" + default + queue
    assert s.one(b"inspect server\r\n") == (
        b"+OK 1\r\nserver 3\r\nactive-clients 2\r\nevicted-jobs 0\r\n"
        b"started 2016-06-14T06:46:46Z\r\n"
    )
    assert s.one(b"inspect nothing\r\n") == err(w.UNKNOWN_COMMAND)
    assert s.one(b"inspect queue\r\n") == err(w.INVALID_ARGS)
