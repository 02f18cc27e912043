"""Jobs: a tube's jobs by state (cursor pages, body search), one job with its body
preview and dialect extras, and the one-job actions (kick, bury, delete, move)."""

from __future__ import annotations

from functools import partial
from typing import Any

from aiohttp import web

from beanpod.core import admin, query
from beanpod.web.api import pages, params, views
from beanpod.web.api.state import Api
from beanpod.web.context import WebContext
from beanpod.web.errors import ApiError

DEFAULT_PAGE = 100
LISTING_PREVIEW = 120  # body bytes shown with each job of a listing
REFUSALS = {
    admin.Outcome.NOT_FOUND: (409, "job {id} is not in a state this applies to"),
    admin.Outcome.HELD: (409, "job {id} is held by a worker or by its dialect (qless/Workq)"),
    admin.Outcome.NO_ROOM: (507, "the write-ahead log's disk is full: nothing changed"),
    admin.Outcome.DRAINING: (503, "the server is draining: no new jobs (a move puts one)"),
}


def add_routes(app: web.Application, api: Api) -> None:
    ctx, r = api.ctx, app.router
    r.add_get("/api/v1/tubes/{tube}/jobs", partial(list_jobs, ctx=ctx))
    r.add_get("/api/v1/jobs/{id}", partial(one_job, ctx=ctx))
    r.add_post("/api/v1/jobs/{id}/kick", partial(act, api=api, action=kick))
    r.add_post("/api/v1/jobs/{id}/bury", partial(act, api=api, action=bury))
    r.add_post("/api/v1/jobs/{id}/delete", partial(act, api=api, action=delete))
    r.add_delete("/api/v1/jobs/{id}", partial(act, api=api, action=delete))
    r.add_post("/api/v1/jobs/{id}/move", partial(act, api=api, action=move))


async def list_jobs(request: web.Request, ctx: WebContext) -> web.Response:
    """?state=ready|delayed|reserved|buried&order=reserve|oldest|newest&cursor=C&limit=N
    &contains=S&exclude=qless"""
    tube = params.tube_name(request, ctx)
    q = request.query
    flt = params.listing_filter(tube, q)
    order = params.order(q.get("order"), flt.state)
    size = params.integer(q.get("limit", DEFAULT_PAGE), "limit", 1, params.MAX_PAGE)
    if order == "reserve":
        key = params.key_cursor(q.get("cursor"))
        found = pages.ready_page(ctx.engine, flt, ctx.now(), key, size)
    else:
        cursor, newest = params.cursor(q.get("cursor")), order == "newest"
        found = pages.job_page(ctx.engine, flt, ctx.now(), cursor, newest, size)
    page, after = await found
    jobs = [{**views.job(j), "preview": _snippet(ctx, j.id)} for j in page]
    return web.json_response({
        "tube": tube, "state": flt.state, "order": order, "jobs": jobs,
        "next_cursor": None if after is None else str(after),
    })  # fmt: skip


def _snippet(ctx: WebContext, job_id: int) -> dict[str, Any]:
    return views.body_preview(query.body(ctx.engine, job_id) or b"", LISTING_PREVIEW)


async def one_job(request: web.Request, ctx: WebContext) -> web.Response:
    """?preview=BYTES (default 4096): the job, its body preview and its extras."""
    job_id = params.job_id(request, ctx)
    cap = params.integer(
        request.query.get("preview", views.PREVIEW_BYTES), "preview", 0, views.MAX_PREVIEW
    )
    return web.json_response(job_document(ctx, job_id, cap))


def job_document(ctx: WebContext, job_id: int, cap: int = views.PREVIEW_BYTES) -> dict[str, Any]:
    now = ctx.now()
    view = query.job_view(ctx.engine, job_id, now)
    data = query.body(ctx.engine, job_id)
    if view is None or data is None:
        raise ApiError(404, f"no job {job_id}")
    doc = views.job(view)
    doc["body"] = views.body_preview(data, cap)
    workq = query.job_extras(ctx.engine, job_id)
    if workq is not None:
        workq["result"] = views.body_preview(workq["result"], cap)
    doc["workq"] = workq
    doc["qless"] = None if ctx.qless is None else query.qless_job(ctx.qless, job_id, now)
    return doc


async def act(request: web.Request, api: Api, action: Any) -> web.Response:
    """Run a one-job action, wait until the log holds it, answer the job's new state."""
    ctx = api.ctx
    job_id = params.job_id(request, ctx)
    doc = await params.body(request)
    outcome, shown = action(api, job_id, doc)
    if outcome is not admin.Outcome.DONE:
        status, message = REFUSALS[outcome]
        raise ApiError(status, message.format(id=job_id))
    await ctx.settle()
    if shown is None:
        return web.json_response({"id": job_id, "deleted": True})
    return web.json_response(job_document(ctx, shown))


def kick(api: Api, job_id: int, doc: dict[str, Any]) -> tuple[admin.Outcome, int]:
    return admin.kick_job(api.ctx.engine, None, job_id, api.ctx.now()), job_id


def bury(api: Api, job_id: int, doc: dict[str, Any]) -> tuple[admin.Outcome, int]:
    return admin.bury(api.ctx.engine, api.operator, job_id, api.ctx.now()), job_id


def delete(api: Api, job_id: int, doc: dict[str, Any]) -> tuple[admin.Outcome, None]:
    return admin.delete(api.ctx.engine, job_id, api.ctx.now()), None


def move(api: Api, job_id: int, doc: dict[str, Any]) -> tuple[admin.Outcome, int]:
    ctx = api.ctx
    target = target_tube(doc, query.job_view(ctx.engine, job_id, 0))
    outcome, copy = admin.move(ctx.engine, job_id, target, ctx.now())
    return outcome, job_id if copy is None else copy.id


def target_tube(doc: dict[str, Any], source: Any) -> str:
    """The "to" tube of a move: a valid tube name other than the source's."""
    target = doc.get("to")
    if not isinstance(target, str) or not admin.valid_tube_name(target):
        raise ApiError(400, f'"to" must be a valid tube name, not {target!r}')
    name = source if isinstance(source, str) else getattr(source, "tube", None)
    if target == name:
        raise ApiError(400, f"the job is already in {target!r}")
    return target
