"""A cluster follower's Workq and Redis doors: they change nothing and say who leads.

A follower's engine only folds the log (its jobs are not placed), so it serves no
command of these doors: each is answered with one error line naming the leader as last
seen, at its address for that door, in the words the protocol has for it, and the
connection stays open (a client may ask again once this node leads; `lead` closes it
then, so it reconnects to a session of the leader). Workq: `-SERVER-ERROR Not the leader
(leader: n1 at 127.0.0.11:9922)`; Redis: `-READONLY Not the leader (leader: n1 at
127.0.0.11:6379)` (server/redis_door.py: it loads with the door).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from beanpod.protocols.workq import wire as workq_wire
from beanpod.protocols.workq.commands import Parser as WorkqParser
from beanpod.protocols.workq.commands import Rejected as WorkqRejected

if TYPE_CHECKING:
    from beanpod.server.edge.front import Edge

Leader = Callable[[], "dict[str, str] | None"]  # the leader as last seen, if any


def leader_words(leader: dict[str, str] | None, door: str) -> str:
    """`leader: n1 at 127.0.0.11:9922`: the leader's address for this door ("workq",
    "redis": its leader key names them). A leader that names none for it (started with
    that door on port 0, or of a version before) is named by its beanstalkd address,
    marked so."""
    if leader is None:
        return "leader: not known yet"
    node = leader.get("node", "?")
    if door in leader:
        return f"leader: {node} at {leader[door]}"
    return f"leader: {node} at {leader.get('address', '?')} (beanstalkd)"


class FollowerDoor(asyncio.Protocol):
    """Every whole request read is answered by `refuse` (its reply, and whether the
    connection closes after it); the registry lets `lead` close the door's connections.
    `edge` (server/edge/front.py) admits each connection as a leader's session is
    admitted (--allow, --max-connections) and counts it out when it closes; a TLS
    listener's accept has counted it in already (server/edge/tls.py)."""

    def __init__(self, registry: set[Any], leader: Leader, parser: Any, edge: Edge) -> None:
        self.registry = registry
        self.leader = leader
        self.parser = parser
        self.edge = edge
        self.transport: asyncio.Transport | None = None
        self.admitted = False
        self.closed = False  # set by the edge when it refuses the connection
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast("asyncio.Transport", transport)
        if self.edge.admit(self, self.transport):
            self.registry.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.registry.discard(self)
        if self.admitted:
            self.admitted = False
            self.edge.left()

    def data_received(self, data: bytes) -> None:
        self.parser.feed(data)
        out: list[bytes] = []
        close = False
        while not close and (request := self.parser.next_command()) is not None:
            reply, close = self.refuse(request)
            out.append(reply)
        if self.transport is not None:
            self.transport.write(b"".join(out))
            if close:
                self.transport.close()

    def refuse(self, request: Any) -> tuple[bytes, bool]:
        raise NotImplementedError


class FollowerWorkq(FollowerDoor):
    def __init__(self, registry: set[Any], leader: Leader, edge: Edge) -> None:
        super().__init__(registry, leader, WorkqParser(), edge)

    def refuse(self, request: Any) -> tuple[bytes, bool]:
        if isinstance(request, WorkqRejected):  # framing errors keep the reference's replies
            return request.reply, request.close
        text = f"{workq_wire.NOT_LEADER} ({leader_words(self.leader(), 'workq')})"
        return workq_wire.server_error(text), False
