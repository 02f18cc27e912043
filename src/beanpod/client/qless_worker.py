"""A qless worker loop: pop from several queues (ordered or round-robin, chosen by the
server), run each job, keep its lock alive with heartbeats, stop gracefully.

    worker = Worker(lambda: Client(port=11300, worker_name="w1"), ["high", "low"],
                    order="ordered")
    worker.run()          # until worker.stop() (or SIGTERM/SIGINT with install_signals)

A job's handler is `handler(job)` if given, else the job's klass resolved as
`module.attr` (a callable, or an object with `perform(job)`). A handler that returns
without finishing the job completes it; an exception fails it into the group
`<klass>:<ExceptionName>` with the traceback as message.
"""

from __future__ import annotations

import importlib
import logging
import signal
import threading
import traceback
from collections.abc import Callable
from typing import Any

from beanpod.client.qless import Client, Job, QlessError

log = logging.getLogger("beanpod.qless.worker")

Handler = Callable[[Job], Any]
MAX_MESSAGE = 10_000  # qless truncates failure messages here


def resolve(klass: str) -> Handler:
    """The callable a klass names: `pkg.module.Name` -> Name (or Name.perform)."""
    module_name, _, attr = klass.rpartition(".")
    target = getattr(importlib.import_module(module_name), attr)
    perform = getattr(target, "perform", None)
    return perform if callable(perform) else target  # type: ignore[no-any-return]


class Worker:
    """Runs jobs one at a time; `stop()` lets the current job finish, then returns."""

    def __init__(
        self, connect: Callable[[], Client], queues: list[str], handler: Handler | None = None,
        order: str = "ordered", interval: float = 1.0,
    ) -> None:  # fmt: skip
        self.connect = connect
        self.client = connect()
        self.queues = queues
        self.handler = handler
        self.order = order
        self.interval = interval
        self._stop = threading.Event()
        self.processed = 0

    def stop(self, *_: object) -> None:
        """Ask the loop to end after the job it is running (safe from signal handlers)."""
        self._stop.set()

    def install_signals(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self.stop)

    def run(self, max_jobs: int | None = None) -> int:
        """Work until stopped (or `max_jobs` are done); returns how many ran."""
        while not self._stop.is_set():
            job = self.reserve()
            if job is None:
                self._stop.wait(self.interval)
                continue
            self.perform(job)
            self.processed += 1
            if max_jobs is not None and self.processed >= max_jobs:
                break
        return self.processed

    def reserve(self) -> Job | None:
        views = self.client.call("pop", self.queues, self.client.worker_name, 1, self.order)
        return Job(self.client, views[0]) if views else None

    def perform(self, job: Job) -> None:
        """Run one job with a heartbeat thread beside it, then complete or fail it."""
        done = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(job, done), daemon=True)
        beat.start()
        try:
            (self.handler or resolve(job.klass))(job)
        except Exception as exc:
            done.set()
            self._fail(job, exc)
        else:
            done.set()
            self._finish(job)
        finally:
            beat.join()

    def _finish(self, job: Job) -> None:
        try:
            current = self.client.call("get", job.jid)
            if current is not None and current["state"] == "running":
                job.complete()
        except QlessError as exc:  # lost the lock meanwhile: someone else has it
            log.warning("could not complete %s: %s", job.jid, exc)

    def _fail(self, job: Job, exc: Exception) -> None:
        group = f"{job.klass}:{type(exc).__name__}"
        message = "".join(traceback.format_exception(exc))[:MAX_MESSAGE]
        try:
            job.fail(group, message)
        except QlessError as lost:
            log.warning("could not fail %s: %s", job.jid, lost)

    def _heartbeat(self, job: Job, done: threading.Event) -> None:
        """Renew the lock halfway to each expiry, on a connection of its own."""
        client = self.connect()
        try:
            hb = max(0.05, job.ttl() / 2)
            while not done.wait(hb):
                job.expires_at = float(client.call("heartbeat", job.jid, job._worker()))
                hb = max(0.05, job.ttl() / 2)
        except QlessError as exc:
            log.warning("heartbeat for %s failed: %s", job.jid, exc)
        finally:
            client.close()
