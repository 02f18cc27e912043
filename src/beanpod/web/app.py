"""The aiohttp application: middlewares (errors as JSON, token auth, CSRF) and the route
groups, each a module with `add_routes(app, ctx)`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from aiohttp import web

from beanpod.web import api, audit, auth, errors, health, login, metrics, starting, ui
from beanpod.web.context import WebContext

CONTEXT_KEY = web.AppKey("ctx", WebContext)
RouteGroup = Callable[[web.Application, WebContext], None]
# Route groups in mount order; the JSON API and the dashboard add themselves here.
ROUTE_GROUPS: list[RouteGroup] = [
    health.add_routes,
    metrics.add_routes,
    login.add_routes,
    api.add_routes,
    ui.add_routes,
]
MAX_BODY = 1 << 20  # larger requests answer 413


def build_app(ctx: WebContext, groups: Sequence[RouteGroup] | None = None) -> web.Application:
    guard = auth.Guard(ctx.settings.token)
    app = web.Application(
        middlewares=[
            errors.middleware,
            auth.middleware(guard),
            starting.middleware(ctx),
            audit.middleware(ctx),
        ],
        client_max_size=MAX_BODY,
    )
    app[CONTEXT_KEY] = ctx
    app[auth.GUARD_KEY] = guard
    for add_routes in ROUTE_GROUPS if groups is None else groups:
        add_routes(app, ctx)
    return app


def context_of(request: web.Request) -> WebContext:
    return request.app[CONTEXT_KEY]
