"""Find a job by the id its application logs: a qless jid, a Workq UUID, or the job id."""

from __future__ import annotations

from functools import partial

from aiohttp import web

from beanpod.core import query
from beanpod.web.api import views
from beanpod.web.api.state import Api
from beanpod.web.errors import ApiError

MAX_KEY = 200  # characters of a search (jids are at most a few dozen)


def add_routes(app: web.Application, api: Api) -> None:
    app.router.add_get("/api/v1/find", partial(find, api=api))


async def find(request: web.Request, api: Api) -> web.Response:
    """?q=JID|UUID|ID: the jobs it names (a numeric jid may also be another job's id)."""
    text = request.query.get("q", "").strip()
    if not text or len(text) > MAX_KEY:
        raise ApiError(400, f"q must be a qless jid, a Workq UUID or a job id (1..{MAX_KEY} chars)")
    ctx = api.ctx
    now = ctx.now()
    matches = []
    for job_id, by in query.find_job(ctx.engine, ctx.qless, ctx.workq, text):
        view = query.job_view(ctx.engine, job_id, now)
        if view is not None:
            matches.append({**views.summary(view), "by": by})
    if not matches:
        raise ApiError(404, f"no job has the jid, UUID or id {text!r}")
    return web.json_response({"q": text, "matches": matches})
