"""Throttles in the Python client: `client.throttles["db"]`, `queue.throttle`.

    client.throttles["db"].maximum = 2  # at most 2 jobs naming "db" run at once
    client.queues["q"].put("K", {}, throttles=["db"])
    client.queues["q"].throttle.maximum = 5  # the queue's own throttle, ql:q:q

Every read asks the server; nothing is cached.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from beanpod.client.qless import Client


class Throttle:
    """One throttle by id; every attribute read asks the server."""

    def __init__(self, client: Client, tid: str) -> None:
        self.client = client
        self.id = tid

    @property
    def maximum(self) -> int:
        """Jobs holding it that may run at once (0: unlimited)."""
        return int(self.client.call("throttle.get", self.id)["maximum"])

    @maximum.setter
    def maximum(self, value: int) -> None:
        """Set how many of its jobs may run at once (0: no limit)."""
        self.client.call("throttle.set", self.id, value)

    def set(self, maximum: int, expiration: float = 0) -> None:
        """Set the maximum; with `expiration` (seconds) the setting lapses after it."""
        self.client.call("throttle.set", self.id, maximum, expiration)

    def ttl(self) -> int:
        """Seconds until the setting lapses (-1: never, -2: no setting)."""
        return int(self.client.call("throttle.ttl", self.id))

    def delete(self) -> None:
        """Remove the throttle; jobs waiting for it may run."""
        self.client.call("throttle.delete", self.id)

    def locks(self) -> list[str]:
        """Jids running under it."""
        return list(self.client.call("throttle.locks", self.id))

    def pending(self) -> list[str]:
        """Jids throttled on it, first in line first."""
        return list(self.client.call("throttle.pending", self.id))

    def release(self, *jids: str) -> None:
        """Take back the jobs' locks (they run on) or their places in line (they wait
        again); the line then moves as on any release."""
        self.client.call("throttle.release", self.id, *jids)


class Throttles:
    def __init__(self, client: Client) -> None:
        self.client = client

    def __getitem__(self, tid: str) -> Throttle:
        return Throttle(self.client, tid)
