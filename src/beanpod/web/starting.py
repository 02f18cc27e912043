"""While the server replays its write-ahead log at start-up the engine is half built: the
JSON API answers 503 with Retry-After until the server serves (health checks, /metrics and
the dashboard's static pages still answer)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from beanpod.web.context import WebContext
from beanpod.web.errors import ApiError

API_PREFIX = "/api/"


def middleware(ctx: WebContext) -> Middleware:
    @web.middleware
    async def not_before_serving(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not ctx.readiness.serving and request.path.startswith(API_PREFIX):
            raise ApiError(503, "starting: the write-ahead log is being replayed",
                           {"Retry-After": "1"})  # fmt: skip
        return await handler(request)

    return not_before_serving
