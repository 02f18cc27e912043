"""The fault run's Workq and qless clients, each through its HAProxy frontend beside the
beanstalkd producers and workers: each adds (puts) a job at a steady rate, takes one
(lease, pop) and completes it, recording every acknowledged add/put and completion,
and every job it was handed again after its completion was acknowledged (a completion
undone by a failover). Any failure counts and the client starts afresh through the
proxy; an add or put whose reply was lost is not recorded and its id is never sent
again (a qless re-put of a completed jid would make it waiting again)."""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from typing import Any

from beanpod.client.reconnect import Backoff
from beanpod.client.workq import Client as WorkqClient
from beanpod.client.workq import NotFound, TimedOut

RECONNECT_SECONDS = 0.02
CHUNK = 500  # qless jobs read per multiget
QUEUE = "faults"
TTR_MS = 60_000  # a Workq lease's time to run
TTL_MS = 86_400_000  # a Workq job (and its result) is kept a day: the run is shorter
# the Workq client's own reconnects wait out a failover, a call at most this long
PATIENT = Backoff(first=0.02, maximum=0.5, give_up_after=20.0)


class DoorClient(threading.Thread):
    """One client's loop: `cycle(n)` adds and completes job n, on a connection that
    `connect()` opens; `acked` and `completed` map ids to when they were acknowledged."""

    def __init__(self, name: str, address: tuple[str, int], rate: float) -> None:
        super().__init__(daemon=True, name=name)
        self.address = address
        self.every = 1.0 / rate
        self.acked: dict[str, float] = {}  # job id -> when its add/put was acknowledged
        self.completed: dict[str, float] = {}  # job id -> when its completion was
        self.again: list[str] = []  # jobs handed out after their completion was acknowledged
        self.failures = 0
        self.running = True
        self.numbers = itertools.count()

    def run(self) -> None:
        while self.running:
            try:
                self.connect()
                while self.running:
                    started = time.monotonic()
                    self.cycle(next(self.numbers))
                    time.sleep(max(0.0, started + self.every - time.monotonic()))
            except Exception:  # any failure (warnings made errors too): start afresh
                self.failures += 1
                self.close()
                time.sleep(RECONNECT_SECONDS)
        self.close()

    done = ""  # the state `states` shows for a completed job

    def handed(self, job_id: str) -> None:
        """A job was handed to this client: it must not be one it completed."""
        if job_id in self.completed:
            self.again.append(job_id)

    def connect(self) -> None:
        raise NotImplementedError

    def cycle(self, n: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def states(self, ids: list[str]) -> dict[str, str | None]:
        """Each job's state now, through the proxy (None: no such job)."""
        raise NotImplementedError


class WorkqLoad(DoorClient):
    """beanpod's Workq client (its resend after a lost connection is at-least-once: a
    resent add or complete answered `Duplicate job`/`Duplicate result` took effect)."""

    client: WorkqClient | None = None
    done = "1"  # COMPLETED (inspect job's state)

    def connect(self) -> None:
        self.client = WorkqClient(self.address, timeout=10, backoff=PATIENT)

    def cycle(self, n: int) -> None:
        client = self.client
        assert client is not None
        job_id = str(uuid.uuid4())
        client.add(job_id, QUEUE, TTR_MS, TTL_MS, b"workq %d" % n)
        self.acked[job_id] = time.monotonic()
        try:
            job = client.lease(QUEUE, 100)
        except TimedOut:
            return
        got = job.id if isinstance(job.id, str) else job.id.decode()
        self.handed(got)
        client.complete(got, b"done")
        self.completed[got] = time.monotonic()

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def states(self, ids: list[str]) -> dict[str, str | None]:
        found: dict[str, str | None] = {}
        with WorkqClient(self.address, timeout=30, backoff=PATIENT) as client:
            for job_id in ids:
                try:
                    found[job_id] = client.inspect_job(job_id)["state"].decode()
                except NotFound:
                    found[job_id] = None
        return found


class QlessLoad(DoorClient):
    """qless-py through the Redis door (redis-py underneath): put, pop, complete."""

    client: Any = None
    done = "complete"

    def connect(self) -> None:
        import qless

        url = f"redis://{self.address[0]}:{self.address[1]}"
        self.client = qless.Client(url, hostname=self.name, socket_timeout=10)

    def cycle(self, n: int) -> None:
        queue = self.client.queues[QUEUE]
        jid = f"{self.name}-{n}"
        queue.put("bench.fault_doors.Job", {"n": n}, jid=jid)
        self.acked[jid] = time.monotonic()
        job = queue.pop()
        if job is None:
            return
        self.handed(job.jid)
        if job.complete() == "complete":
            self.completed[job.jid] = time.monotonic()

    def close(self) -> None:
        if self.client is not None:
            self.client.redis.connection_pool.disconnect()
            self.client = None

    def states(self, ids: list[str]) -> dict[str, str | None]:
        self.connect()
        try:
            found: dict[str, str | None] = dict.fromkeys(ids)
            for start in range(0, len(ids), CHUNK):  # multiget: null for a job not there
                jobs = json.loads(self.client("multiget", *ids[start : start + CHUNK]))
                found.update((job["jid"], job["state"]) for job in jobs if job is not None)
            return found
        finally:
            self.close()
