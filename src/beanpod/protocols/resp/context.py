"""What a RESP handler sees: the door's shared state and one connection's session."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from beanpod.protocols.resp.script_registry import Scripts

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.engine import Engine
    from beanpod.core.qless import Qless

VERSION = "7.0.15"  # the Redis version qless's clients were checked against (INFO, HELLO)


class Door:
    """State shared by every RESP connection of one server."""

    def __init__(
        self, engine: Engine, qless: Callable[[], Qless], password: str | None = None,
        testing: bool = False,
    ) -> None:  # fmt: skip
        self.engine = engine
        self._qless = qless
        self.password = password  # AUTH required when set
        self.testing = testing  # FLUSHDB allowed (a server started for tests)
        self.scripts: Scripts = Scripts()
        self.subscribers: dict[bytes, dict[int, Session]] = {}  # channel -> sessions
        self.lists: dict[bytes, deque[bytes]] = {}  # the scratch keyspace (RPUSH/BRPOP)
        self.list_waiters: dict[bytes, dict[int, Session]] = {}  # parked BRPOPs by key
        self.next_id = 0
        self.bridged = False  # the qless channels feed `subscribers` (pubsub.py)

    @property
    def qless(self) -> Qless:
        return self._qless()

    def client_id(self) -> int:
        self.next_id += 1
        return self.next_id


class Session(Protocol):
    """One connection as handlers use it."""

    door: Door
    conn: Conn
    now: int
    proto: int  # 2 or 3 (HELLO)
    authed: bool
    client_id: int
    channels: set[bytes]  # subscribed to
    listening: bool  # subscribed to any: the edge's idle timeout spares it
    multi: list[list[bytes]] | None  # commands queued since MULTI
    waiting_on: list[bytes] | None  # the keys of a parked BRPOP

    def push(self, reply: bytes) -> None:
        """Send an out-of-band message (pub/sub) now."""
        ...

    def answer(self, reply: bytes) -> None:
        """Answer the parked command (BRPOP) and resume."""
        ...

    def client_time(self, now: int) -> None:
        """A call's client time (ms): moves a manual clock there (never backwards)."""
        ...
