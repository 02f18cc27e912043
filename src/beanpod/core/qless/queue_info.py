"""A known qless queue (QueueInfo): the tube reference that keeps it, and its qless-only
sets of jobs."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from beanpod.core.engine import Engine
    from beanpod.core.job import Job


class QueueInfo:
    """A known qless queue: holds a reference on its tube so the tube (and a pause)
    outlives its jobs, plus the qless-only sets of the queue."""

    __slots__ = ("depends", "name", "recurring", "running", "since", "stalled", "throttled", "tube")

    def __init__(self, name: str, engine: Engine, since: int = 0) -> None:
        self.name = name
        self.since = since  # first seen (ms), the order `queues` lists them in
        self.tube = engine.keep_tube(name)
        self.running: dict[int, Job] = {}  # held by qless workers
        self.stalled: OrderedDict[int, Job] = OrderedDict()  # expired locks, expiry order
        self.depends: dict[str, Job] = {}
        self.recurring: dict[str, Job] = {}
        self.throttled: dict[str, Job] = {}  # waiting for a throttle lock (throttles.py)
