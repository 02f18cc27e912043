"""A qless worker loop: pop from several queues (ordered or round-robin, chosen by the
server), run each job, keep its lock alive with heartbeats, stop gracefully.

    worker = Worker(lambda: Client(port=11300, worker_name="w1"), ["high", "low"],
                    order="ordered")
    worker.run()          # until worker.stop() (or SIGTERM/SIGINT with install_signals)

A job's handler is `handler(job)` if given, else the job's klass resolved as
`module.attr` (a callable, or an object with `perform(job)`). A handler that returns
without finishing the job completes it; an exception fails it at once (qless's
`retries` count lost locks, not exceptions: docs/qless.md shows how to retry) into the
group `<klass>:<ExceptionName>`, with the message `ErrorClass: message`, a blank line
and the traceback, and logs `job <jid> (<klass>) failed: ErrorClass: message` at
WARNING on the `beanpod.client.qless_worker` logger.
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

log = logging.getLogger(__name__)  # beanpod.client.qless_worker

Handler = Callable[[Job], Any]
MAX_MESSAGE = 10_000  # qless truncates failure messages here


def resolve(klass: str) -> Handler:
    """The callable a klass names: `pkg.module.Name` -> Name (or Name.perform)."""
    module_name, _, attr = klass.rpartition(".")
    target = getattr(importlib.import_module(module_name), attr)
    perform = getattr(target, "perform", None)
    return perform if callable(perform) else target  # type: ignore[no-any-return]


def summary(exc: BaseException) -> str:
    """`ErrorClass: message` on one line, the class named as a traceback names it."""
    cls = type(exc)
    name = cls.__qualname__
    if cls.__module__ not in ("builtins", "__main__"):
        name = f"{cls.__module__}.{name}"
    text = " ".join(str(exc).split())
    return f"{name}: {text}" if text else name


class Stopped(Exception):
    """Raised by the signal handler to leave a wait (e.g. for the server to come back)."""


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
        self._busy = False  # performing a job: a first signal lets it finish
        self.processed = 0

    def stop(self, *_: object) -> None:
        """Ask the loop to end after the job it is running (safe from signal handlers)."""
        self._stop.set()

    def install_signals(self) -> None:
        """SIGTERM/SIGINT stop the loop after the job it is running (or the pop under
        way); while it waits for the server to come back, at once; a second signal at
        once in any case."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, *_: object) -> None:
        forced = self._stop.is_set()
        self._stop.set()
        if forced or (not self._busy and self.client.conn.sock is None):
            raise Stopped  # leaves the reconnect backoff's sleep

    def run(self, max_jobs: int | None = None) -> int:
        """Work until stopped (or `max_jobs` are done); returns how many ran. A server
        restart is ridden out: the client reconnects (its `backoff`), and an outage
        longer than that is logged and retried every `interval`."""
        try:
            while not self._stop.is_set():
                self._step()
                if max_jobs is not None and self.processed >= max_jobs:
                    break
        except Stopped:
            log.info("stopped by a signal")
        return self.processed

    def _step(self) -> None:
        """Reserve and perform one job, or wait `interval` when there is none."""
        try:
            job = self.reserve()
        except OSError as exc:
            log.warning("cannot reach the server (%s); retrying", exc)
            job = None
        if job is None:
            self._stop.wait(self.interval)
            return
        self._busy = True
        try:
            self.perform(job)
        finally:
            self._busy = False
        self.processed += 1

    def reserve(self) -> Job | None:
        """Pop the next job from the worker's queues (in their order), or None."""
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
        except (QlessError, OSError) as exc:  # lost the lock (or the server) meanwhile:
            log.warning("could not complete %s: %s", job.jid, exc)  # its lock expires

    def _fail(self, job: Job, exc: Exception) -> None:
        group = f"{job.klass}:{type(exc).__name__}"
        line = summary(exc)
        log.warning("job %s (%s) failed: %s", job.jid, job.klass, line)
        message = f"{line}\n\n{''.join(traceback.format_exception(exc))}"[:MAX_MESSAGE]
        try:
            job.fail(group, message)
        except (QlessError, OSError) as lost:
            log.warning("could not fail %s: %s", job.jid, lost)

    def _heartbeat(self, job: Job, done: threading.Event) -> None:
        """Renew the lock halfway to each expiry, on a connection of its own."""
        try:
            client = self.connect()
        except OSError as exc:  # the server is away longer than the client's backoff
            log.warning("no heartbeat for %s: %s", job.jid, exc)
            return
        try:
            hb = max(0.05, job.ttl() / 2)
            while not done.wait(hb):
                job.expires_at = float(client.call("heartbeat", job.jid, job._worker()))
                hb = max(0.05, job.ttl() / 2)
        except (QlessError, OSError) as exc:
            log.warning("heartbeat for %s failed: %s", job.jid, exc)
        finally:
            client.close()
