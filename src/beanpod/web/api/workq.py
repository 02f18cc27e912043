"""Workq results: finished Workq jobs (completed or failed) kept until their TTL runs
out, with their outcome and result preview."""

from __future__ import annotations

from functools import partial

from aiohttp import web

from beanpod.core import query
from beanpod.web.api import params, views
from beanpod.web.api.state import Api


def add_routes(app: web.Application, api: Api) -> None:
    app.router.add_get("/api/v1/workq/results", partial(results, api=api))


async def results(request: web.Request, api: Api) -> web.Response:
    """?cursor=ID&limit=N (oldest id first)."""
    after = params.cursor(request.query.get("cursor"))
    size = params.integer(request.query.get("limit", 100), "limit", 1, params.MAX_PAGE)
    found = query.workq_results(api.ctx.engine, after, size + 1)
    for doc in found:
        doc["result"] = views.body_preview(doc["result"])
    page = found[:size]
    nxt = str(page[-1]["id"]) if len(found) > size else None
    return web.json_response({"results": page, "next_cursor": nxt})
