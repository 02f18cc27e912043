"""The HTTP listener on the server's own event loop (aiohttp's AppRunner + TCPSite)."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable

from aiohttp import web

from beanpod.web.app import build_app
from beanpod.web.context import WebContext

SHUTDOWN_GRACE = 1.0  # seconds an in-flight HTTP request may take to finish at stop


class HttpListener:
    def __init__(
        self, ctx: WebContext, host: str, port: int, ssl_context: ssl.SSLContext | None = None
    ) -> None:
        self.ctx = ctx
        self.host = host
        self.port = port
        self.ssl_context = ssl_context  # HTTPS (--http-tls)
        self.runner: web.AppRunner | None = None
        self._timers: list[asyncio.TimerHandle] = []
        self.address = f"{host}:{port}"  # the real one (port 0 resolved) after start()

    async def start(self, sock: socket.socket | None = None) -> str:
        """Serve on `sock` (already listening), else bind host:port; raises OSError when
        the address cannot be used."""
        runner = web.AppRunner(
            build_app(self.ctx),
            access_log=None,
            handle_signals=False,
            shutdown_timeout=SHUTDOWN_GRACE,
        )
        await runner.setup()
        site: web.BaseSite
        if sock is not None:
            site = web.SockSite(runner, sock, ssl_context=self.ssl_context)
        else:
            site = web.TCPSite(
                runner, self.host, self.port, reuse_address=True, ssl_context=self.ssl_context
            )
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        self.runner = runner
        self.address = _bound_address(runner)
        return self.address

    def every(self, seconds: float, work: Callable[[], None]) -> None:
        """Run `work` on the loop every `seconds` while the listener is up."""
        loop = asyncio.get_running_loop()

        def tick() -> None:
            work()
            self._timers[index] = loop.call_later(seconds, tick)

        index = len(self._timers)
        self._timers.append(loop.call_later(seconds, tick))

    async def stop(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers = []
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None


def _bound_address(runner: web.AppRunner) -> str:
    for name in runner.addresses:  # (host, port[, flow, scope]) of each bound socket
        host, port = name[0], name[1]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return ""
