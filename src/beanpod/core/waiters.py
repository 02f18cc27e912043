"""A parked reserve (or lease): a connection waiting for a job from its watched tubes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from beanpod.core.conn import Conn

# What a parked reserve can be answered with besides a job.
TIMED_OUT = "TIMED_OUT"
DEADLINE_SOON = "DEADLINE_SOON"

ReserveOutcome = Any  # a Job, TIMED_OUT or DEADLINE_SOON
Deliver = Callable[[ReserveOutcome], None]


class Waiter:
    """Sits in the wait queue of every tube its connection watches, served first come first
    served; `active` goes False once it is answered (its other queue entries go stale)."""

    __slots__ = ("active", "conn", "deliver", "timeout_at", "timer")

    def __init__(self, conn: Conn, timeout_at: int | None, deliver: Deliver) -> None:
        self.conn = conn
        self.timeout_at = timeout_at
        self.deliver = deliver
        self.active = True
        self.timer: Any = None
