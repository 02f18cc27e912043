"""Tubes: every tube's counts by state and pause state; one tube; pause and unpause."""

from __future__ import annotations

from functools import partial

from aiohttp import web

from beanpod.core import admin, query
from beanpod.web.api import params, views
from beanpod.web.api.jobs import REFUSALS
from beanpod.web.api.state import Api
from beanpod.web.errors import ApiError

MAX_PAUSE_SECONDS = 2**32 - 1  # beanstalkd's pause-tube bound


def add_routes(app: web.Application, api: Api) -> None:
    r = app.router
    r.add_get("/api/v1/tubes", partial(all_tubes, api=api))
    r.add_get("/api/v1/buried", partial(buried, api=api))
    r.add_get("/api/v1/tubes/{tube}", partial(one_tube, api=api))
    r.add_post("/api/v1/tubes/{tube}/pause", partial(pause, api=api))
    r.add_post("/api/v1/tubes/{tube}/unpause", partial(unpause, api=api))


async def all_tubes(request: web.Request, api: Api) -> web.Response:
    views_ = query.tube_views(api.ctx.engine, api.ctx.now())
    return web.json_response({"tubes": [views.tube(v) for v in views_]})


async def buried(request: web.Request, api: Api) -> web.Response:
    """The tubes holding buried jobs outside qless, with their count: a failed qless job,
    also buried, is counted once, in its failure group (/api/v1/qless/failures)."""
    ctx = api.ctx
    failed = {} if ctx.qless is None else query.qless_failed_by_queue(ctx.qless)
    tubes = query.tube_views(ctx.engine, ctx.now())
    counts = {v.name: v.buried - failed.get(v.name, 0) for v in tubes}
    return web.json_response(
        {"tubes": [{"name": n, "buried": c} for n, c in counts.items() if c > 0]}
    )


async def one_tube(request: web.Request, api: Api) -> web.Response:
    name = params.tube_name(request, api.ctx)
    return web.json_response(_tube(api, name))


async def pause(request: web.Request, api: Api) -> web.Response:
    """{"seconds": N}: no reservations from the tube for N seconds (0 unpauses)."""
    name = params.tube_name(request, api.ctx)
    doc = await params.body(request)
    seconds = params.integer(doc.get("seconds"), "seconds", 0, MAX_PAUSE_SECONDS)
    return await _pause(api, name, seconds)


async def unpause(request: web.Request, api: Api) -> web.Response:
    return await _pause(api, params.tube_name(request, api.ctx), 0)


async def _pause(api: Api, name: str, seconds: int) -> web.Response:
    ctx = api.ctx
    outcome = admin.pause(ctx.engine, None, name, seconds * 1000, ctx.now())
    if outcome is not admin.Outcome.DONE:
        status, message = REFUSALS[outcome]
        raise ApiError(status, message.format(id=name))
    await ctx.settle()
    return web.json_response(_tube(api, name))


def _tube(api: Api, name: str) -> dict[str, object]:
    view = query.tube_view(api.ctx.engine, name, api.ctx.now())
    if view is None:
        raise ApiError(404, f"no tube {name!r}")
    return views.tube(view)
