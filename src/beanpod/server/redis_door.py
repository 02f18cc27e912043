"""Opens the Redis-protocol door (protocols/resp) on the app's engine: its own address
and port, the same engine, WAL and limits as the other dialects."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from beanpod.protocols.resp.context import Door
from beanpod.server.redis_session import RedisSession
from beanpod.server.startup import listener_error

if TYPE_CHECKING:
    from beanpod.server.app import App


async def start_redis(app: App) -> asyncio.Server:
    config = app.config
    assert config.redis_port is not None
    testing = app.clock.manual or config.redis_allow_flush  # FLUSHDB allowed
    door = Door(app.engine, lambda: app.qless, config.redis_password, testing)
    address = config.redis_host
    loop = asyncio.get_running_loop()
    try:
        return await loop.create_server(
            lambda: RedisSession(app, door),
            address,
            config.redis_port,
            backlog=1024,
            reuse_address=True,
        )
    except OSError as exc:
        raise listener_error("Redis", f"{address}:{config.redis_port}", exc) from exc
