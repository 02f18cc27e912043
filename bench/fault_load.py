"""The fault run's load, through HAProxy: producers putting at a steady rate, recording
every acknowledged put (id, body, when); workers reserving and deleting, recording every
acknowledged delete (and the body they were handed); a Workq and a qless client
(bench/fault_doors.py). Any failure (a closed connection,
an unexpected reply) counts and the thread reconnects through the proxy: a put whose
reply was lost is not recorded (its outcome is unknown: at-least-once)."""

from __future__ import annotations

import itertools
import threading
import time

import greenstalk

from bench.cluster_proxy import Proxy
from bench.fault_doors import DoorClient, QlessLoad, WorkqLoad

RECONNECT_SECONDS = 0.02


class Producer(threading.Thread):
    def __init__(self, name: str, proxy: tuple[str, int], rate: float) -> None:
        super().__init__(daemon=True, name=name)
        self.proxy = proxy
        self.every = 1.0 / rate
        self.acked: list[tuple[float, int, bytes]] = []  # (monotonic time, id, body)
        self.failures = 0
        self.sent = 0
        self.running = True

    def run(self) -> None:
        due = time.monotonic()
        while self.running:
            try:
                with greenstalk.Client(self.proxy, encoding=None) as client:
                    while self.running:
                        due = self._pace(due)
                        body = b"%s %d" % (self.name.encode(), self.sent)
                        self.sent += 1
                        jid = client.put(body, ttr=60)
                        self.acked.append((time.monotonic(), jid, body))
            except Exception:  # any failure: reconnect through the proxy
                self.failures += 1
                time.sleep(RECONNECT_SECONDS)

    def _pace(self, due: float) -> float:
        """Wait for the next put's turn; after a stall, go on from now (no burst)."""
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
            return due + self.every
        return max(due + self.every, now - self.every)

    def ids(self) -> list[int]:
        return [jid for _, jid, _ in self.acked]


class Worker(threading.Thread):
    def __init__(self, name: str, proxy: tuple[str, int]) -> None:
        super().__init__(daemon=True, name=name)
        self.proxy = proxy
        self.deleted: list[tuple[float, int, bytes]] = []  # acknowledged deletes
        self.unknown: set[int] = set()  # deletes sent whose reply never came
        self.failures = 0
        self.running = True

    def run(self) -> None:
        while self.running:
            try:
                with greenstalk.Client(self.proxy, encoding=None) as client:
                    while self.running:
                        self._one(client)
            except Exception:  # any failure: reconnect through the proxy
                self.failures += 1
                time.sleep(RECONNECT_SECONDS)

    def _one(self, client: greenstalk.Client[bytes]) -> None:
        try:
            job = client.reserve(timeout=1)
        except greenstalk.TimedOutError:
            return
        self.unknown.add(job.id)  # until DELETED or NOT_FOUND comes back
        try:
            client.delete(job)
        except greenstalk.NotFoundError:
            self.unknown.discard(job.id)
            return  # handed out twice after a failover, deleted by the other worker
        self.unknown.discard(job.id)
        self.deleted.append((time.monotonic(), job.id, job.body))


class Load:
    """Producers and workers (beanstalkd), a Workq and a qless client, each through its
    frontend of the proxy, started and stopped together."""

    def __init__(self, proxy: Proxy, producers: int, workers: int, rate: float,
                 door_rate: float = 10.0) -> None:  # fmt: skip
        self.producers = [Producer(f"p{i}", proxy.beanstalkd, rate) for i in range(producers)]
        self.workers = [Worker(f"w{i}", proxy.beanstalkd) for i in range(workers)]
        self.doors: list[DoorClient] = [WorkqLoad("workq", proxy.workq, door_rate),
                                        QlessLoad("qless", proxy.redis, door_rate)]  # fmt: skip

    def start(self) -> Load:
        for thread in self.threads():
            thread.start()
        return self

    def stop(self) -> None:
        for thread in self.threads():
            thread.running = False
        for thread in self.threads():
            thread.join(30)

    def threads(self) -> list[Producer | Worker | DoorClient]:
        return [*self.producers, *self.workers, *self.doors]

    def failures(self) -> int:
        """Calls that had to reconnect."""
        return sum(thread.failures for thread in self.threads())

    def put_times(self) -> list[float]:
        return sorted(t for p in self.producers for t, _, _ in p.acked)

    def puts_after(self, moment: float) -> int:
        return sum(1 for p in self.producers for t, _, _ in p.acked[-50:] if t > moment)

    def gap(self, start: float, end: float) -> tuple[float, float]:
        """The longest wait between two acknowledged puts (any producer) that overlaps
        [start, end], and when it began (seconds after `start`)."""
        times = self.put_times()
        pairs = [(b - a, a - start) for a, b in itertools.pairwise(times) if b > start and a < end]
        return max(pairs, default=(end - start, 0.0))
