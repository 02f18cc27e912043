"""A parked reserve (or lease): a connection waiting for a job from its watched tubes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.tube import Tube

# What a parked reserve can be answered with besides a job.
TIMED_OUT = "TIMED_OUT"
DEADLINE_SOON = "DEADLINE_SOON"

ReserveOutcome = Any  # a Job, TIMED_OUT or DEADLINE_SOON
Deliver = Callable[[ReserveOutcome], None]


class Waiter:
    """Sits in the wait queue of every tube its connection watches, served first come first
    served; `active` goes False once it is answered (its other queue entries go stale)."""

    __slots__ = ("active", "conn", "deliver", "named", "timeout_at", "timer", "tubes")

    def __init__(
        self, conn: Conn, timeout_at: int | None, deliver: Deliver, tubes: list[Tube]
    ) -> None:
        self.conn = conn
        self.timeout_at = timeout_at
        self.deliver = deliver
        self.tubes = tubes  # the watch list (reserve) or the named tubes (Workq lease)
        self.named = False  # named tubes: pinned by refs, no DEADLINE_SOON
        self.active = True
        self.timer: Any = None
