"""Busy: every job a client holds now, with who holds it (peer address, qless worker
name), since when, and the time left of its TTR, longest held first (as Sidekiq's and
Faktory's Busy pages). Read from the holders' reservations (`query.held`: client
connections, qless workers, Workq lease holders): O(connections + held jobs) per
request, not O(jobs)."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any

from aiohttp import web

from beanpod.core import query
from beanpod.web.api import params, views
from beanpod.web.api.state import Api


def add_routes(app: web.Application, api: Api) -> None:
    app.router.add_get("/api/v1/busy", partial(busy, api=api))


async def busy(request: web.Request, api: Api) -> web.Response:
    """?limit=N (default 1000): the held jobs, longest held first."""
    size = params.integer(request.query.get("limit", params.MAX_PAGE), "limit", 1, params.MAX_PAGE)
    ctx = api.ctx
    held = [row(view) for view in query.held(ctx.engine, ctx.now(), ctx.qless, ctx.workq)]
    held.sort(key=lambda row: (-row["holder"]["held_ms"], row["id"]))
    conns = {row["holder"]["conn"] for row in held}
    return web.json_response({"count": len(held), "connections": len(conns), "jobs": held[:size]})


def row(view: query.JobView) -> dict[str, Any]:
    holder = None if view.holder is None else asdict(view.holder)
    return {**views.summary(view), "pri": view.pri, "ttr_ms": view.ttr_ms,
            "ttr_left_ms": view.time_left_ms, "holder": holder}  # fmt: skip
