"""/login: the browser's way to give the token (a form); it sets the session cookie that
the auth middleware accepts, then returns to the page that asked."""

from __future__ import annotations

from html import escape

from aiohttp import web

from beanpod.web.auth import GUARD_KEY, SESSION_COOKIE, Guard
from beanpod.web.context import WebContext

FORM = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>beanpod: sign in</title>
<style>body{{font:16px system-ui,sans-serif;margin:15vh auto;max-width:22em}}
input{{font:inherit;width:100%;margin:.4em 0;padding:.4em}}.err{{color:#b00}}</style></head>
<body><h1>beanpod</h1><p>This server needs its access token (the file given to
<code>--http-token</code>).</p>{error}
<form method="post" action="/login"><input type="hidden" name="next" value="{next}">
<input type="password" name="token" placeholder="token" autofocus required>
<input type="submit" value="Sign in"></form></body></html>
"""


def add_routes(app: web.Application, ctx: WebContext) -> None:
    app.router.add_get("/login", show_form)
    app.router.add_post("/login", sign_in)


async def show_form(request: web.Request) -> web.Response:
    return _form(_next(request.query.get("next")), "")


async def sign_in(request: web.Request) -> web.Response:
    guard: Guard = request.app[GUARD_KEY]
    form = await request.post()
    target = _next(str(form.get("next", "/")))
    if guard.session is None:  # no token configured: nothing to sign in to
        raise web.HTTPFound(target)
    if not guard.is_token(str(form.get("token", ""))):
        return _form(target, '<p class="err">Wrong token.</p>', status=401)
    response = web.HTTPFound(target)
    response.set_cookie(SESSION_COOKIE, guard.session, httponly=True, samesite="Strict",
                        secure=request.secure, path="/")  # fmt: skip
    raise response


def _form(target: str, error: str, status: int = 200) -> web.Response:
    html = FORM.format(error=error, next=escape(target, quote=True))
    return web.Response(text=html, content_type="text/html", status=status)


def _next(target: str | None) -> str:
    """Only a path on this server (never `//evil.example` or `https://...`)."""
    if not target or not target.startswith("/") or target.startswith("//"):
        return "/"
    return target
