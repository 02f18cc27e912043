"""A long randomized run over sockets: valid, mutated and truncated commands of all
three dialects (beanstalkd, Workq, qless JSON over `qless`), checking after every step
that a keeper connection is still answered and that its acknowledged jobs are intact.

CI runs a short, seeded variant; BEANPOD_FUZZ_STEPS=200000 (and BEANPOD_FUZZ_SEED)
runs a long one."""

from __future__ import annotations

import json
import os
import random
import socket
import uuid
from collections.abc import Callable, Iterator

import pytest

from beanpod.client.workq import Client
from tests.support.wire_client import RawClient
from tests.support.workq_server import WorkqServer

STEPS = int(os.environ.get("BEANPOD_FUZZ_STEPS", "400"))
SEED = int(os.environ.get("BEANPOD_FUZZ_SEED", "1515"))
QLESS_FNS = ["put", "requeue", "pop", "get", "complete", "fail", "retry", "cancel",
             "heartbeat", "tag", "track", "recur", "jobs", "queues", "config.set",
             "throttle.set", "stats", "depends", "priority", "timeout", "unfail", "length",
             "log", "recur.update", "unrecur", "nope"]  # fmt: skip
# Functions whose first argument is a jid.
JID_FIRST = {"get", "complete", "fail", "retry", "cancel", "heartbeat", "depends",
             "priority", "timeout", "log", "recur.update", "unrecur"}  # fmt: skip
BIG = ["0", "1", "-1", "4294967295", "4294967296", "18446744073709551616", "1e9", "x", ""]


def _n(r: random.Random) -> str:
    return r.choice(BIG) if r.random() < 0.2 else str(r.randint(0, 40))


def _body(r: random.Random) -> bytes:
    return r.randbytes(r.choice([0, 1, 5, 100, 3000]))


def beanstalkd_command(r: random.Random) -> bytes:
    n, t = (lambda: _n(r)), r.choice(["default", "a", "b-1", "x" * 200])
    verbs: list[Callable[[], str]] = [
        lambda: f"reserve-with-timeout {r.choice(['0', '1'])}", lambda: f"delete {n()}",
        lambda: f"release {n()} {n()} {n()}", lambda: f"bury {n()} {n()}",
        lambda: f"touch {n()}", lambda: f"kick {n()}", lambda: f"kick-job {n()}",
        lambda: f"peek {n()}", lambda: "peek-ready", lambda: "peek-delayed",
        lambda: "peek-buried", lambda: "stats", lambda: f"stats-job {n()}",
        lambda: f"stats-tube {t}", lambda: "list-tubes", lambda: "list-tube-used",
        lambda: "list-tubes-watched", lambda: f"use {t}", lambda: f"watch {t}",
        lambda: f"ignore {t}", lambda: f"pause-tube {t} {r.choice(['0', '1'])}",
        lambda: f"reserve-job {n()}", lambda: "quit",
    ]  # fmt: skip
    if r.random() < 0.35:
        body = _body(r)
        return b"put %s %s %s %d\r\n%s\r\n" % (n().encode(), r.choice([b"0", b"1"]),
                                              n().encode(), len(body), body)  # fmt: skip
    return r.choice(verbs)().encode() + b"\r\n"


# Workq ids: a few client-chosen ones, and synthetic ones naming plain jobs by id (above
# the keeper's, which a Workq delete could otherwise remove: it deletes in any state).
NOISE_IDS = [str(uuid.UUID(int=random.Random(i).getrandbits(128), version=4)).encode()
             for i in range(6)]  # fmt: skip
NOISE_IDS += [str(uuid.UUID(int=job_id, version=4)).encode() for job_id in range(10, 40)]


def workq_command(r: random.Random) -> bytes:
    job = r.choice(NOISE_IDS)
    q = r.choice([b"q", b"p", b"x" * 300])
    payload = _body(r)
    verbs = [
        b"add %s %s 1000 60000 %d\r\n%s\r\n" % (job, q, len(payload), payload),
        b"run %s %s 1000 10 %d\r\n%s\r\n" % (job, q, len(payload), payload),
        b"schedule %s %s 1000 60000 2030-01-01T00:00:00Z %d\r\n%s\r\n" % (
            job, q, len(payload), payload),
        b"result %s 10\r\n" % job, b"lease %s 10\r\n" % q,
        b"complete %s %d\r\n%s\r\n" % (job, len(payload), payload),
        b"fail %s %d\r\n%s\r\n" % (job, len(payload), payload), b"delete %s\r\n" % job,
        b"inspect job %s\r\n" % job, b"inspect jobs %s 0 10\r\n" % q, b"inspect queues\r\n",
        b"inspect server\r\n", b"add %s %s -1 x 5\r\n12345\r\n" % (job, q),
    ]  # fmt: skip
    return r.choice(verbs)


# The keeper's Workq job (its UUID is known to qless noise only: a Workq delete removes
# a job in any state).
KEEP_UUID = "c0ffee00-0000-4000-8000-00000000cafe"


def _jid(r: random.Random) -> str:
    """A qless name: its own, or one naming a keeper job in another dialect's terms (a
    decimal id, `beanstalkd:<id>`, the Workq UUID), which qless must leave alone."""
    return r.choice([f"j{r.randint(0, 5)}", str(r.randint(0, 6)),
                     f"beanstalkd:{r.randint(0, 6)}", KEEP_UUID])  # fmt: skip


def qless_command(r: random.Random) -> bytes:
    fn = r.choice(QLESS_FNS)
    leaf: list[object] = ["w", "q", _jid(r), "K", "{}", 0, -1, 1.5, None, [], {}]
    args = [r.choice(leaf) for _ in range(r.randint(0, 8))]
    if fn in ("put", "requeue") and r.random() < 0.7:
        args = ["w", "q", _jid(r), "K", json.dumps({"a": 1}), r.randint(0, 2)]
    elif fn in JID_FIRST and r.random() < 0.7:
        args = [_jid(r), *args[1:]]
    body = json.dumps({"fn": fn, "args": args}).encode()
    if r.random() < 0.1:
        body = r.choice([b"[" * 50 + b"]" * 50, b"{", b"null", b'{"fn": 1}', r.randbytes(20)])
    return b"qless %d\r\n%s\r\n" % (len(body), body)


def mutate(r: random.Random, data: bytes) -> bytes:
    """One of: unchanged, a flipped byte, bytes inserted or deleted, a truncation."""
    kind = r.random()
    if kind < 0.5 or not data:
        return data
    at = r.randrange(len(data))
    if kind < 0.65:
        return data[:at] + bytes([r.randrange(256)]) + data[at + 1 :]
    if kind < 0.75:
        return data[:at] + r.randbytes(r.randint(1, 8)) + data[at:]
    if kind < 0.85:
        return data[:at] + data[at + r.randint(1, 8) :]
    return data[:at]  # truncated: what follows continues mid-command


class Noisy:
    """One dialect's noisy connection: send, discard replies, reconnect when closed."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock: socket.socket | None = None
        self.replies = b""

    def send(self, data: bytes, close_after: bool) -> None:
        if self.sock is None:
            self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        try:
            self.sock.sendall(data)
            self._drain()
        except OSError:  # closed by the server (quit, a fatal error): start over
            close_after = True
        if close_after:
            self.sock.close()
            self.sock = None

    def _drain(self) -> None:
        assert self.sock is not None
        self.sock.setblocking(False)
        try:
            while chunk := self.sock.recv(1 << 16):
                self.replies = (self.replies + chunk)[-4096:]
            raise ConnectionError("closed")
        except BlockingIOError:
            pass
        finally:
            self.sock.setblocking(True)
            self.sock.settimeout(5)

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()


class Keeper:
    """Canary jobs that no noise may change: beanstalkd jobs reserved (long TTR) by the
    keeper in its own tube (ids 1-3, which qless noise names by decimal jid and by
    `beanstalkd:<id>`), and a Workq job (id 4) under a UUID only qless noise knows."""

    def __init__(self, srv: WorkqServer) -> None:
        self.bs = RawClient(srv.connect())
        assert self.bs.cmd(b"use keep-tube\r\n") == b"USING keep-tube\r\n"
        assert self.bs.cmd(b"watch keep-tube\r\n") == b"WATCHING 2\r\n"
        assert self.bs.cmd(b"ignore default\r\n") == b"WATCHING 1\r\n"
        self.ids: list[int] = []
        for i in range(3):
            reply = self.bs.cmd(b"put 0 0 4294967295 6\r\nkeep-%d\r\n" % i)
            self.ids.append(int(reply.split()[1]))
            assert self.bs.cmd(b"reserve-with-timeout 0\r\n").startswith(b"RESERVED")
        assert self.ids == [1, 2, 3]  # the ids qless noise names
        self.wq = Client(("127.0.0.1", srv.workq_port), timeout=10)
        self.wq_id = KEEP_UUID
        self.wq.add(self.wq_id, "keep-q", ttr=3600000, ttl=3600000, payload=b"keep")
        assert self.wq.lease("keep-q", 1000).id == self.wq_id  # held: no other may move it

    def check(self) -> None:
        assert self.bs.cmd(b"list-tube-used\r\n") == b"USING keep-tube\r\n"
        for i, job_id in enumerate(self.ids):
            found = b"FOUND %d 6\r\nkeep-%d\r\n" % (job_id, i)
            assert self.bs.cmd(b"peek %d\r\n" % job_id) == found
            stats = self.bs.cmd(b"stats-job %d\r\n" % job_id)
            assert b"\ntube: keep-tube\nstate: reserved\npri: 0\n" in stats, stats
        job = self.wq.inspect_job(self.wq_id)
        assert (job["payload"], job["name"], job["state"]) == (b"keep", b"keep-q", b"4")

    def close(self) -> None:
        self.bs.close()
        self.wq.close()


@pytest.fixture
def fuzz_server() -> Iterator[WorkqServer]:
    srv = WorkqServer(workq_port=0, max_job_size=1 << 20).start()  # room for deep nesting
    yield srv
    srv.stop()


@pytest.mark.timeout(120 + STEPS // 100)  # the long variant runs for minutes
def test_random_traffic_on_all_dialects(fuzz_server: WorkqServer) -> None:
    r = random.Random(SEED)
    keeper = Keeper(fuzz_server)
    noisy = {"beanstalkd": Noisy(fuzz_server.port), "workq": Noisy(fuzz_server.workq_port)}
    makers = [("beanstalkd", beanstalkd_command), ("workq", workq_command),
              ("beanstalkd", qless_command)]  # fmt: skip
    for step in range(STEPS):
        dialect, make = r.choice(makers)
        data = b"".join(mutate(r, make(r)) for _ in range(r.randint(1, 4)))
        data = data.replace(b"keep", b"kept")
        noisy[dialect].send(data, close_after=r.random() < 0.05)
        try:
            keeper.check()
        except Exception as exc:
            raise AssertionError(f"step {step} (seed {SEED}) after {data[:200]!r}") from exc
    for conn in noisy.values():
        assert b"INTERNAL_ERROR" not in conn.replies and b"Internal error" not in conn.replies
        conn.close()
    keeper.close()


def test_deeply_nested_qless_request_is_a_qless_error(fuzz_server: WorkqServer) -> None:
    """100,000 levels of JSON nesting: refused as a request, never an internal error."""
    keeper = Keeper(fuzz_server)
    client = RawClient(fuzz_server.connect())
    body = b"[" * 100_000 + b"]" * 100_000
    reply = client.cmd(b"qless %d\r\n%s\r\n" % (len(body), body))
    keeper.check()
    client.close()
    keeper.close()
    assert reply.startswith(b"QLESS_ERROR malformed request"), reply
