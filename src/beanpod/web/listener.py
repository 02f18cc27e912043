"""The HTTP listener on the server's own event loop (aiohttp's AppRunner + TCPSite)."""

from __future__ import annotations

import logging

from aiohttp import web

from beanpod.web.app import build_app
from beanpod.web.context import WebContext

log = logging.getLogger("beanpod.web")
SHUTDOWN_GRACE = 1.0  # seconds an in-flight HTTP request may take to finish at stop


class HttpListener:
    def __init__(self, ctx: WebContext, host: str, port: int) -> None:
        self.ctx = ctx
        self.host = host
        self.port = port
        self.runner: web.AppRunner | None = None
        self.address = f"{host}:{port}"  # the real one (port 0 resolved) after start()

    async def start(self) -> str:
        """Bind and serve; raises OSError when the address cannot be used."""
        runner = web.AppRunner(
            build_app(self.ctx), access_log=None, handle_signals=False,
            shutdown_timeout=SHUTDOWN_GRACE,
        )  # fmt: skip
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, reuse_address=True)
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        self.runner = runner
        self.address = _bound_address(runner)
        return self.address

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None


def _bound_address(runner: web.AppRunner) -> str:
    for name in runner.addresses:  # (host, port[, flow, scope]) of each bound socket
        host, port = name[0], name[1]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return ""
