"""Every error answers as JSON `{"error": MESSAGE, "status": CODE}` with the right status:
handlers raise `ApiError`; aiohttp's own (404, 405, 413) are rewritten; a bug is a logged
500, never a traceback on the wire."""

from __future__ import annotations

import logging

from aiohttp import web
from aiohttp.typedefs import Handler

log = logging.getLogger("beanpod.web")


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def json_error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": message, "status": status}, status=status, headers=headers)


@web.middleware
async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as exc:
        return json_error(exc.status, exc.message, exc.headers)
    except web.HTTPException as exc:
        if exc.status < 400 or exc.content_type == "application/json":
            raise
        return json_error(exc.status, _message(exc), _kept_headers(exc))
    except Exception:
        log.exception("HTTP %s %s failed", request.method, request.path)
        return json_error(500, "internal error (logged by the server)")


def _message(exc: web.HTTPException) -> str:
    if exc.status == 413:
        return "request body too large"
    return exc.reason.lower()


def _kept_headers(exc: web.HTTPException) -> dict[str, str]:
    """Headers that mean something on an error (Allow on 405, WWW-Authenticate on 401)."""
    return {k: v for k, v in exc.headers.items() if k in ("Allow", "WWW-Authenticate")}
