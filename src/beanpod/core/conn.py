"""The engine's view of a client connection: used tube, watch list, reservations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beanpod.core.pqueue import LazyHeap

if TYPE_CHECKING:
    from beanpod.core.job import Job
    from beanpod.core.tube import Tube
    from beanpod.core.waiters import Waiter


class Conn:
    __slots__ = ("deadlines", "id", "producer", "reserved", "use", "waiter", "watch", "worker")

    def __init__(self, conn_id: int, default: Tube) -> None:
        self.id = conn_id
        self.use = default
        # Watch list in beanstalkd's order: removal moves the last tube into the hole.
        self.watch: list[Tube] = [default]
        self.reserved: dict[int, Job] = {}
        # Reserved jobs by TTR deadline, to find the DEADLINE_SOON margin in O(log n).
        self.deadlines = LazyHeap()
        self.waiter: Waiter | None = None
        self.producer = False
        self.worker = False

    def soonest_deadline(self) -> int | None:
        entry = self.deadlines.peek_entry()
        return None if entry is None else entry[0]

    def __repr__(self) -> str:
        return f"<Conn {self.id}>"
