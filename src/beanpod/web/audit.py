"""--audit-log for the HTTP admin API: every change the API made (a POST, PUT, PATCH or
DELETE under /api/ that succeeded) is one JSON line, with the peer's address."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from beanpod.web.context import WebContext

CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def middleware(ctx: WebContext) -> Middleware:
    @web.middleware
    async def audited(request: web.Request, handler: Handler) -> web.StreamResponse:
        response = await handler(request)
        if (
            request.method in CHANGING
            and request.path.startswith("/api/")
            and (response.status < 400)
        ):
            ctx.audit("http", method=request.method, path=request.path_qs,
                      status=response.status, peer=request.remote)  # fmt: skip
        return response

    return audited
