"""The Redis-protocol door (protocols/resp) on the app's engine: the same engine, WAL and
limits as the other dialects; its socket is bound with the others (server/ports.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from beanpod.protocols.resp import wire as w
from beanpod.protocols.resp.commands import NOAUTH, dispatch
from beanpod.protocols.resp.context import Door
from beanpod.protocols.resp.reader import Rejected, RequestReader
from beanpod.server.follower_doors import FollowerDoor, Leader, leader_words
from beanpod.server.redis_session import RedisSession

if TYPE_CHECKING:
    from beanpod.protocols.resp.context import Session
    from beanpod.server.app import App
    from beanpod.server.edge.front import Edge


def redis_sessions(app: App) -> Callable[[], asyncio.Protocol]:
    """A factory of the door's sessions, all sharing one Door onto the app's engine (a
    cluster's follower serves its handshake only: FollowerRedis below)."""
    config = app.config
    testing = app.clock.manual or config.redis_allow_flush  # FLUSHDB allowed
    door = Door(app.engine, lambda: app.qless, config.redis_password, testing)

    def session() -> asyncio.Protocol:
        cluster = app.cluster
        if cluster is not None and not cluster.leading:
            return FollowerRedis(cluster.followers, cluster.leader_seen, door, app.edge)
        return RedisSession(app, door)

    return session


# what a follower's door still serves: the handshake redis-py sends on connect (HELLO 3,
# CLIENT SETINFO, AUTH, SELECT) and PING, ECHO, QUIT
HANDSHAKE = frozenset({b"hello", b"auth", b"client", b"select", b"ping", b"echo", b"quit"})


class FollowerRedis(FollowerDoor):
    """A cluster follower's Redis connection: the handshake is served; any other command
    is `-READONLY Not the leader (...)`, which redis-py raises as `ReadOnlyError`, as for a
    write to a Redis replica (qless-py wraps it: `QlessException: Not the leader (...)`)."""

    def __init__(self, registry: set[Any], leader: Leader, door: Door, edge: Edge) -> None:
        super().__init__(registry, leader, RequestReader(), edge)
        self.door = door  # the handshake's Session: its password, and the fields below
        self.proto = 2
        self.authed = False
        self.client_id = door.client_id()
        self.channels: set[bytes] = set()
        self.multi: list[list[bytes]] | None = None

    def refuse(self, request: Any) -> tuple[bytes, bool]:
        if isinstance(request, Rejected):
            return w.error(request.message), True
        verb = request[0].lower()
        if verb in HANDSHAKE:
            return dispatch(cast("Session", self), request) or b"", verb == b"quit"
        if self.door.password is not None and not self.authed:
            return NOAUTH, False
        return w.error(f"READONLY Not the leader ({leader_words(self.leader(), 'redis')})"), False
