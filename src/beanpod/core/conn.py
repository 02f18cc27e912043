"""The engine's view of a client connection: used tube, watch list, reservations."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from beanpod.core.job import Job
    from beanpod.core.tube import Tube
    from beanpod.core.waiters import Waiter

UNKNOWN: Final[Any] = object()  # Conn.soonest: not known, find it on demand
_deadline: Final = attrgetter("deadline")


class Conn:
    __slots__ = (
        "dialect",
        "id",
        "latest",
        "name",
        "ordered",
        "peer",
        "producer",
        "reserved",
        "since",
        "soonest",
        "use",
        "waiter",
        "watch",
        "worker",
    )

    def __init__(
        self, conn_id: int, default: Tube, peer: str = "", since: int = 0, name: str = "",
        dialect: str = "beanstalkd",
    ) -> None:  # fmt: skip
        self.id = conn_id
        # Who this is, for the console's Busy view (set once here, never on a command):
        # the client's address (`host:port`, `unix`; "" for one no socket carries), when
        # it connected (ms, engine clock), the qless worker name, and its dialect.
        self.peer = peer
        self.since = since
        self.name = name
        self.dialect = dialect
        self.use = default
        # Watch list in beanstalkd's order: removal moves the last tube into the hole.
        self.watch: list[Tube] = [default]
        self.reserved: dict[int, Job] = {}
        # The reservation that runs out first (for the DEADLINE_SOON margin): None when
        # there is none, UNKNOWN after it left or its deadline moved. Kept like beanstalkd's
        # cached soonest job: cheaper than a heap per connection for the usual one or two
        # reservations, found again by one scan when needed.
        self.soonest: Any = None
        # Whether `reserved` (in reservation order) is also in deadline order, as when
        # every reservation has the same TTR and none was touched: then the soonest is
        # the first one, found in O(1) instead of a scan. `latest`: the last deadline.
        # Engine.make_reserved keeps both (and `soonest`) up to date.
        self.ordered = True
        self.latest = 0
        self.waiter: Waiter | None = None
        self.producer = False
        self.worker = False

    def soonest_deadline(self) -> int | None:
        soonest = self.soonest
        if soonest is UNKNOWN:
            reserved = self.reserved
            if not reserved:
                soonest = None
                self.emptied()
            elif self.ordered:
                soonest = next(iter(reserved.values()))
            else:
                soonest = min(reserved.values(), key=_deadline)
            self.soonest = soonest
        return None if soonest is None else int(soonest.deadline)

    def emptied(self) -> None:
        """No reservation is left: deadline order holds again, trivially."""
        self.ordered = True
        self.latest = 0

    def deadline_moved(self, job: Job) -> None:
        """A reservation's deadline changed (touch, a qless lock renewal)."""
        self.ordered = False
        if self.soonest is not None:
            self.soonest = UNKNOWN

    def __repr__(self) -> str:
        return f"<Conn {self.id}>"
