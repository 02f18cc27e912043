"""Concurrent producers, consumers and a kicker against a server that is about to crash,
with a model of what every acknowledged reply promises about the state after restart.

Per job the model keeps the outcomes that are allowed after a restart: the outcome of the
last acknowledged mutation, plus that of a mutation still in flight (its reply never
came, so it may or may not have happened). Reserved jobs count as ready (a restart ends
every reservation). Put bodies are unique, so a job the model never heard of (its put was
in flight) is recognised by its body.
"""

from __future__ import annotations

import random
import socket
import threading
from dataclasses import dataclass, field

from tests.support.wire_client import RawClient

GONE = ("gone", -1)
Outcome = tuple[str, int]  # (state, pri)


@dataclass
class Track:
    """What a job may look like after a restart: the outcome of the latest acknowledged
    command, or of any command sent after it whose reply has not been read."""

    body: bytes
    acked: Outcome
    acked_op: int = 0
    op: int = 0  # the latest command sent for this job
    pending: dict[int, Outcome] = field(default_factory=dict)

    def allowed(self) -> set[Outcome]:
        out = {self.acked, *self.pending.values()}
        return out | {("ready", pri) for state, pri in out if state == "delayed"}

    def send(self, outcome: Outcome) -> int:
        self.op += 1
        self.pending[self.op] = outcome
        return self.op

    def ack(self, op: int, outcome: Outcome) -> None:
        """The log is in order: an acknowledged command settles every earlier one."""
        if op > self.acked_op:
            self.acked, self.acked_op = outcome, op
            for k in [k for k in self.pending if k <= op]:
                del self.pending[k]


@dataclass
class Model:
    lock: threading.Lock = field(default_factory=threading.Lock)
    jobs: dict[int, Track] = field(default_factory=dict)
    unacked_puts: dict[bytes, int] = field(default_factory=dict)  # body -> pri
    acks: int = 0

    def buried(self) -> list[int]:
        with self.lock:
            return [i for i, t in self.jobs.items() if t.acked[0] == "buried" and not t.pending]


class OutOfMemory(Exception):
    """The log refused a command (its disk failed): nothing changed; stop this worker."""


def _refused(reply: bytes) -> None:
    if reply == b"OUT_OF_MEMORY\r\n":
        raise OutOfMemory


class Load:
    """Runs worker threads until the server goes away (or stop() is called)."""

    def __init__(self, port: int, model: Model, seed: int, producers: int = 3,
                 consumers: int = 3) -> None:  # fmt: skip
        self.port = port
        self.model = model
        self.rng = random.Random(seed)
        self.stopping = threading.Event()
        roles = ["producer"] * producers + ["consumer"] * consumers + ["kicker"]
        self.threads = [
            threading.Thread(target=self._run, args=(role, n, self.rng.random()), daemon=True)
            for n, role in enumerate(roles)
        ]

    def start(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.join()

    def join(self) -> None:
        for t in self.threads:
            t.join(timeout=20)

    def _run(self, role: str, n: int, seed: float) -> None:
        rng = random.Random(seed)
        try:
            client = RawClient(socket.create_connection(("127.0.0.1", self.port), timeout=10))
        except OSError:
            return
        try:
            step = getattr(self, "_" + role)
            i = 0
            while not self.stopping.is_set():
                step(client, rng, f"{n}-{i}-{rng.random()}".encode())
                i += 1
        except (OSError, ConnectionError, OutOfMemory):
            pass  # the server went away mid-command: that command stays in flight
        finally:
            client.close()

    def _producer(self, c: RawClient, rng: random.Random, body: bytes) -> None:
        pri = rng.randrange(0, 2000)
        m = self.model
        with m.lock:
            m.unacked_puts[body] = pri
        reply = c.cmd(b"put %d 0 60 %d\r\n%s\r\n" % (pri, len(body), body))
        _refused(reply)
        assert reply.startswith(b"INSERTED "), reply
        job_id = int(reply.split()[1])
        with m.lock:
            del m.unacked_puts[body]
            m.jobs[job_id] = Track(body, ("ready", pri))
            m.acks += 1

    def _consumer(self, c: RawClient, rng: random.Random, _: bytes) -> None:
        reply = c.cmd(b"reserve-with-timeout 0\r\n")
        if not reply.startswith(b"RESERVED "):
            return
        job_id = int(reply.split()[1])
        m = self.model
        with m.lock:
            track = m.jobs.get(job_id)
        if track is None:  # its put's reply is not read yet: keep it reserved (= ready)
            return
        roll = rng.random()
        pri = rng.randrange(0, 2000)
        if roll < 0.5:
            cmd, want, outcome = b"delete %d\r\n" % job_id, b"DELETED\r\n", GONE
        elif roll < 0.75:
            cmd, want = b"release %d %d 0\r\n" % (job_id, pri), b"RELEASED\r\n"
            outcome = ("ready", pri)
        elif roll < 0.8:
            cmd, want = b"release %d %d 30\r\n" % (job_id, pri), b"RELEASED\r\n"
            outcome = ("delayed", pri)
        else:
            cmd, want, outcome = b"bury %d %d\r\n" % (job_id, pri), b"BURIED\r\n", ("buried", pri)
        self._mutate(c, job_id, cmd, want, outcome)

    def _kicker(self, c: RawClient, rng: random.Random, _: bytes) -> None:
        buried = self.model.buried()
        if not buried:
            c.cmd(b"stats-tube default\r\n")  # a read, to keep the loop busy
            return
        job_id = rng.choice(buried)
        with self.model.lock:
            pri = self.model.jobs[job_id].acked[1]
        self._mutate(c, job_id, b"kick-job %d\r\n" % job_id, b"KICKED\r\n", ("ready", pri))

    def _mutate(self, c: RawClient, job_id: int, cmd: bytes, want: bytes, outcome: Outcome) -> None:
        m = self.model
        with m.lock:
            track = m.jobs[job_id]
            mine = track.send(outcome)
        reply = c.cmd(cmd)
        _refused(reply)
        assert reply == want, (cmd, reply)
        with m.lock:
            track.ack(mine, outcome)
            m.acks += 1


def check_restart(port: int, model: Model) -> int:
    """Compare a restarted server with the model; then make the model match it.
    Returns the number of jobs checked."""
    c = RawClient(socket.create_connection(("127.0.0.1", port), timeout=10))
    probe = c.cmd(b"put 0 0 60 5\r\nprobe\r\n")
    assert probe.startswith(b"INSERTED "), probe
    probe_id = int(probe.split()[1])
    assert all(i < probe_id for i in model.jobs), "ids must continue above every id issued"
    ids = list(range(1, probe_id))
    c.send(b"".join(b"peek %d\r\nstats-job %d\r\n" % (i, i) for i in ids))
    seen: dict[int, tuple[bytes, Outcome]] = {}
    for i in ids:
        found, stats = c.reply(), c.reply()
        if found == b"NOT_FOUND\r\n":
            continue
        body = found.split(b"\r\n", 1)[1][:-2]
        fields = dict(
            line.split(": ", 1) for line in stats.decode().split("\n")[1:] if ": " in line
        )
        state = "ready" if fields["state"] == "reserved" else fields["state"]
        seen[i] = (body, (state, int(fields["pri"])))
    c.cmd(b"delete %d\r\n" % probe_id)
    c.close()
    for job_id, track in model.jobs.items():
        got = seen.get(job_id)
        outcome = GONE if got is None else got[1]
        assert outcome in track.allowed(), (job_id, outcome, track)
        if got is not None:
            assert got[0] == track.body, (job_id, got[0], track.body)
    for job_id, (body, _) in seen.items():
        if job_id not in model.jobs:
            assert body in model.unacked_puts, f"unknown job {job_id} {body!r}"
    model.jobs = {i: Track(b, o) for i, (b, o) in seen.items()}
    model.unacked_puts.clear()
    return len(seen)
