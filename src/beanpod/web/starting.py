"""While the server replays its write-ahead log at start-up the engine is half built: the
JSON API answers 503 with Retry-After until the server serves (health checks, /metrics and
the dashboard's static pages still answer). On a cluster's follower the engine only folds
the leader's log: the API's actions (anything but GET and HEAD) answer 503 naming the
leader; reads work."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from beanpod.web.context import WebContext
from beanpod.web.errors import ApiError

API_PREFIX = "/api/"
READS = frozenset({"GET", "HEAD"})


def middleware(ctx: WebContext) -> Middleware:
    @web.middleware
    async def not_before_serving(request: web.Request, handler: Handler) -> web.StreamResponse:
        if ctx.readiness.leader is not None and request.method not in READS:
            _refuse_off_the_leader(ctx, request.path)
        if not ctx.readiness.serving and request.path.startswith(API_PREFIX):
            raise ApiError(
                503, "starting: the write-ahead log is being replayed", {"Retry-After": "1"}
            )
        return await handler(request)

    return not_before_serving


def _refuse_off_the_leader(ctx: WebContext, path: str) -> None:
    assert ctx.readiness.leader is not None
    leading, seen = ctx.readiness.leader()
    if not leading and path.startswith(API_PREFIX):
        where = seen["address"] if seen is not None else "not known yet"
        raise ApiError(503, f"not the cluster's leader (the leader: {where})", {"Retry-After": "1"})
