"""A Python client with qless's shape, over beanpod's `qless` extension command.

    client = Client(port=11300, worker_name="w1")
    jid = client.queues["emails"].put("app.SendEmail", {"to": "a@b"}, tags=["x"])
    job = client.queues["emails"].pop()
    job.heartbeat(); job.complete()            # or job.fail(group, message), job.retry()

Refusals raise `QlessError` with the server's qless wording. Times are seconds.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

from beanpod.client.qless_conn import DEFAULT_PORT, Connection, QlessError
from beanpod.client.qless_events import Events, Message
from beanpod.client.qless_throttles import Throttle, Throttles
from beanpod.client.reconnect import DEFAULT, Backoff

__all__ = [
    "Backoff", "Client", "Job", "Message", "QlessError", "Queue", "RecurringJob", "Throttle",
]  # fmt: skip


class Client:
    """A connection plus qless's collections: `queues`, `jobs`, `workers`, `config`.
    `host` may name several servers, "h1:11300,h2:11300" (a cluster's nodes)."""

    def __init__(self, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 worker_name: str | None = None, timeout: float | None = 30,
                 backoff: Backoff | None = DEFAULT) -> None:  # fmt: skip
        self.host, self.port = host, port
        self.backoff = backoff  # reconnecting (beanpod.client.reconnect); None: fail fast
        self.conn = Connection(host, port, timeout, backoff)
        self.worker_name = worker_name or f"{socket.gethostname()}-{os.getpid()}"
        self.queues = Queues(self)
        self.jobs = Jobs(self)
        self.workers = Workers(self)
        self.config = Config(self)
        self.events = Events(self)  # pub/sub (qless_events.py)
        self.throttles = Throttles(self)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection to the server."""
        self.conn.close()

    def call(self, fn: str, *args: Any) -> Any:
        """Run any qless function (docs/qless.md lists them)."""
        return self.conn.call(fn, *args)

    def track(self, jid: str) -> bool:
        """Track job `jid` (its events reach `Events` subscribers); True if it exists."""
        return bool(self.call("track", "track", jid))

    def untrack(self, jid: str) -> bool:
        """Stop tracking job `jid`; True if it was tracked."""
        return bool(self.call("track", "untrack", jid))

    def tags(self, offset: int = 0, count: int = 25) -> list[str]:
        """Tags used by at least two jobs, most used first."""
        return list(self.call("tag", "top", offset, count))

    def unfail(self, group: str, queue: str, count: int = 25) -> int:
        """Move the `count` oldest jobs of failure `group` back to `queue`."""
        return int(self.call("unfail", queue, group, count))


class Job:
    """A job as the server last described it; methods act on it by jid."""

    def __init__(self, client: Client, view: dict[str, Any]) -> None:
        self.client = client
        self.view = view
        self.jid: str = view["jid"]
        self.klass: str = view["klass"]
        self.queue_name: str = view["queue"]
        self.state: str = view["state"]
        self.worker_name: str = view["worker"]
        self.priority_value: int = view["priority"]
        self.tags: list[str] = list(view["tags"])
        self.retries_left: int = view["remaining"]
        self.original_retries: int = view["retries"]
        self.expires_at: float = view["expires"]
        self.failure: dict[str, Any] = view["failure"]
        self.history: list[dict[str, Any]] = view["history"]
        self.dependencies: list[str] = view["dependencies"]
        self.dependents: list[str] = view["dependents"]
        self.tracked: bool = view["tracked"]
        self.throttles: list[str] = list(view.get("throttles", []))
        self.data: Any = json.loads(view["data"])

    def __repr__(self) -> str:
        return f"<Job {self.klass} {self.jid} {self.state}>"

    def ttl(self) -> float:
        """Seconds left on the lock."""
        return self.expires_at - time.time()

    def _worker(self) -> str:
        return self.worker_name or self.client.worker_name

    def _data(self) -> str:
        return json.dumps(self.data)

    def complete(
        self, next: str | None = None, delay: float | None = None, depends: list[str] | None = None
    ) -> str:
        """Finish the job (or advance it to queue `next`); returns the new state."""
        args: list[Any] = [self.jid, self._worker(), self.queue_name, self._data()]
        if next is not None:
            args += ["next", next]
            if delay is not None:
                args += ["delay", delay]
            if depends is not None:
                args += ["depends", depends]
        return str(self.client.call("complete", *args))

    def fail(self, group: str, message: str) -> str:
        """Fail the job into failure `group` with `message`; returns its jid."""
        return str(self.client.call("fail", self.jid, self._worker(), group, message, self._data()))

    def heartbeat(self) -> float:
        """Renew the lock (sending the current data); returns the new expiry."""
        expires = self.client.call("heartbeat", self.jid, self._worker(), self._data())
        self.expires_at = float(expires)
        return self.expires_at

    def retry(self, delay: float = 0, group: str | None = None, message: str | None = None) -> int:
        """Give the job back for another try; returns retries left (negative: failed)."""
        args: list[Any] = [self.jid, self.queue_name, self._worker(), delay]
        if group is not None and message is not None:
            args += [group, message]
        return int(self.client.call("retry", *args))

    def cancel(self) -> list[str]:
        """Cancel the job and the jobs that depend on it; returns the cancelled jids."""
        return list(self.client.call("cancel", self.jid))

    def move(self, queue: str, delay: float = 0, depends: list[str] | None = None) -> str:
        """Put the job in `queue` (after `delay` seconds, behind `depends`); returns its jid."""
        extra: list[Any] = [] if depends is None else ["depends", depends]
        return str(self.client.call("put", self.client.worker_name, queue, self.jid,
                                    self.klass, self._data(), delay, *extra))  # fmt: skip

    def track(self) -> bool:
        """Track this job; True if it exists."""
        return self.client.track(self.jid)

    def untrack(self) -> bool:
        """Stop tracking this job; True if it was tracked."""
        return self.client.untrack(self.jid)

    def tag(self, *tags: str) -> list[str]:
        """Add `tags`; returns the job's tags afterwards."""
        self.tags = list(self.client.call("tag", "add", self.jid, *tags))
        return self.tags

    def untag(self, *tags: str) -> list[str]:
        """Remove `tags`; returns the job's tags afterwards."""
        self.tags = list(self.client.call("tag", "remove", self.jid, *tags))
        return self.tags

    def set_priority(self, priority: int) -> None:
        """Change the job's priority (higher pops first)."""
        self.priority_value = int(self.client.call("priority", self.jid, priority))

    def depend(self, *jids: str) -> bool:
        """Make the job wait for `jids` as well (only while it is in state depends)."""
        return bool(self.client.call("depends", self.jid, "on", *jids))

    def undepend(self, *jids: str) -> bool:
        """Drop the dependencies on `jids` (all of them when none are given)."""
        return bool(self.client.call("depends", self.jid, "off", *(jids or ("all",))))

    def log(self, message: str, data: dict[str, Any] | None = None) -> None:
        """Append `message` (and `data`) to the job's history."""
        self.client.call("log", self.jid, message, *([] if data is None else [data]))

    def timeout(self) -> None:
        """Expire the job's lock now, as if its worker had stopped heart-beating."""
        self.client.call("timeout", self.jid)


class RecurringJob:
    """A recurring-job template."""

    def __init__(self, client: Client, view: dict[str, Any]) -> None:
        self.client = client
        self.jid: str = view["jid"]
        self.view = view

    def __getattr__(self, name: str) -> Any:
        try:
            return self.view[name]
        except KeyError:
            raise AttributeError(name) from None

    def update(self, **changes: Any) -> None:
        """Change priority, interval, retries, data, klass, queue or backlog."""
        args: list[Any] = []
        for key, value in changes.items():
            args += [key, value]
        self.client.call("recur.update", self.jid, *args)
        self.view = self.client.call("recur.get", self.jid)

    def tag(self, *tags: str) -> list[str]:
        """Add `tags` to the template (its spawned jobs carry them); returns them."""
        return list(self.client.call("recur.tag", self.jid, *tags))

    def untag(self, *tags: str) -> list[str]:
        """Remove `tags` from the template; returns its tags afterwards."""
        return list(self.client.call("recur.untag", self.jid, *tags))

    def cancel(self) -> bool:
        """Stop the recurrence (spawned jobs stay); True if it existed."""
        return bool(self.client.call("unrecur", self.jid))


class Queue:
    """One queue: put, recur, pop, peek, counts, stats, pause."""

    def __init__(self, client: Client, name: str) -> None:
        self.client = client
        self.name = name

    def put(self, klass: str, data: Any, jid: str | None = None, priority: int | None = None,
            tags: list[str] | None = None, delay: float = 0, retries: int | None = None,
            depends: list[str] | None = None,
            throttles: list[str] | None = None) -> str:  # fmt: skip
        """Enqueue (or move, for a known jid) a job; returns its jid."""
        opts = {"priority": priority, "tags": tags, "retries": retries, "depends": depends,
                "throttles": throttles}  # fmt: skip
        extra: list[Any] = []
        for key, value in opts.items():
            if value is not None:
                extra += [key, value]
        jid = jid or uuid.uuid4().hex
        return str(self.client.call("put", self.client.worker_name, self.name, jid, klass,
                                    json.dumps(data), delay, *extra))  # fmt: skip

    def recur(self, klass: str, data: Any, interval: float, offset: float = 0,
              jid: str | None = None, priority: int = 0, tags: list[str] | None = None,
              retries: int = 5, backlog: int = 0,
              throttles: list[str] | None = None) -> str:  # fmt: skip
        """Spawn a `klass` job every `interval` seconds, the first after `offset`."""
        return str(self.client.call(
            "recur", self.name, jid or uuid.uuid4().hex, klass, json.dumps(data),
            "interval", interval, offset, "priority", priority, "tags", tags or [],
            "retries", retries, "backlog", backlog, "throttles", throttles or [],
        ))  # fmt: skip

    @property
    def throttle(self) -> Throttle:
        """The queue's own throttle (`ql:q:<name>`)."""
        return Throttle(self.client, f"ql:q:{self.name}")

    def pop(self, count: int = 1) -> list[Job]:
        """Take up to `count` jobs to work on, locked to this client's worker name."""
        views = self.client.call("pop", self.name, self.client.worker_name, count)
        return [Job(self.client, view) for view in views]

    def peek(self, count: int = 1) -> list[Job]:
        """Look at up to `count` jobs that a pop would return, without taking them."""
        return [Job(self.client, view) for view in self.client.call("peek", self.name, count)]

    @property
    def counts(self) -> dict[str, Any]:
        """The queue's counts by state (waiting, running, scheduled, ...), paused."""
        return dict(self.client.call("queues", self.name))

    def stats(self, date: float | None = None) -> dict[str, Any]:
        """wait/run statistics and failure counts of the UTC day containing `date`."""
        return dict(self.client.call("stats", self.name, time.time() if date is None else date))

    def jobs(self, state: str, offset: int = 0, count: int = 25) -> list[str]:
        """Jids in `state` (running, stalled, scheduled, depends, recurring) in this queue."""
        return list(self.client.call("jobs", state, self.name, offset, count))

    def pause(self) -> None:
        """Stop handing out this queue's jobs (put still works)."""
        self.client.call("pause", self.name)

    def unpause(self) -> None:
        """Hand out this queue's jobs again."""
        self.client.call("unpause", self.name)

    def __len__(self) -> int:
        return int(self.client.call("length", self.name))


class Queues:
    def __init__(self, client: Client) -> None:
        self.client = client

    def __getitem__(self, name: str) -> Queue:
        return Queue(self.client, name)

    @property
    def counts(self) -> list[dict[str, Any]]:
        """Every queue's counts by state, as `Queue.counts` shows one."""
        return list(self.client.call("queues"))


class Jobs:
    def __init__(self, client: Client) -> None:
        self.client = client

    def __getitem__(self, jid: str) -> Job | RecurringJob | None:
        view = self.client.call("get", jid)
        if view is not None:
            return Job(self.client, view)
        recur = self.client.call("recur.get", jid)
        return None if recur is None else RecurringJob(self.client, recur)

    def get(self, *jids: str) -> list[Job | None]:
        """The jobs with these jids (None for each one that does not exist)."""
        views = self.client.call("multiget", *jids)
        return [None if v is None else Job(self.client, v) for v in views]

    def complete(self, offset: int = 0, count: int = 25) -> list[str]:
        """Jids of completed jobs, newest first."""
        return list(self.client.call("jobs", "complete", offset, count))

    def tracked(self) -> dict[str, Any]:
        """Tracked jobs (`jobs`) and the tracked jids that no longer exist (`expired`)."""
        found = self.client.call("track")
        return {"jobs": [Job(self.client, v) for v in found["jobs"]], "expired": found["expired"]}

    def tagged(self, tag: str, offset: int = 0, count: int = 25) -> dict[str, Any]:
        """Jids carrying `tag` (`jobs`) and how many there are (`total`)."""
        return dict(self.client.call("tag", "get", tag, offset, count))

    def failed(self, group: str | None = None, start: int = 0, limit: int = 25) -> Any:
        """Failure groups with their counts, or one group's failed jobs."""
        if group is None:
            return self.client.call("failed")
        return self.client.call("failed", group, start, limit)


class Workers:
    def __init__(self, client: Client) -> None:
        self.client = client

    @property
    def counts(self) -> list[dict[str, Any]]:
        """Every worker with how many jobs it holds and how many have stalled."""
        return list(self.client.call("workers"))

    def __getitem__(self, name: str) -> dict[str, list[str]]:
        return dict(self.client.call("workers", name))

    def deregister(self, *names: str) -> None:
        """Forget these workers (their jobs keep their locks)."""
        self.client.call("worker.deregister", *names)


class Config:
    """Dict-like access to the server's qless configuration."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def __getitem__(self, key: str) -> Any:
        return self.client.call("config.get", key)

    def __setitem__(self, key: str, value: Any) -> None:
        self.client.call("config.set", key, value)

    def __delitem__(self, key: str) -> None:
        self.client.call("config.unset", key)

    def all(self) -> dict[str, Any]:
        """Every setting with its value (defaults included)."""
        return dict(self.client.call("config.get"))

    def __iter__(self) -> Iterator[str]:
        return iter(self.all())
