"""The Redis-protocol door (protocols/resp) on the app's engine: the same engine, WAL and
limits as the other dialects; its socket is bound with the others (server/ports.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from beanpod.protocols.resp.context import Door
from beanpod.server.redis_session import RedisSession

if TYPE_CHECKING:
    from beanpod.server.app import App


def redis_sessions(app: App) -> Callable[[], RedisSession]:
    """A factory of the door's sessions, all sharing one Door onto the app's engine."""
    config = app.config
    testing = app.clock.manual or config.redis_allow_flush  # FLUSHDB allowed
    door = Door(app.engine, lambda: app.qless, config.redis_password, testing)
    return lambda: RedisSession(app, door)
