"""Bulk actions on a tube's jobs by filter: kick, delete, move.

A request without "confirm" is a dry run: it answers how many jobs the filter selects
now and a token. The same request with {"confirm": token} runs the action, in slices
across loop turns (a 100,000-job kick never stalls other connections), each job through
the same engine operation as its protocol command; the answer comes once the
write-ahead log holds every change. Jobs that left the selection meanwhile are skipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from aiohttp import web

from beanpod.core import admin, query
from beanpod.web.api import chunks, params
from beanpod.web.api.jobs import target_tube
from beanpod.web.api.state import Api
from beanpod.web.errors import ApiError

KICKABLE = ("buried", "delayed")
REMOVABLE = ("buried", "ready", "delayed")


def add_routes(app: web.Application, api: Api) -> None:
    r = app.router
    r.add_post("/api/v1/tubes/{tube}/kick", partial(bulk, api=api, action="kick"))
    r.add_post("/api/v1/tubes/{tube}/delete", partial(bulk, api=api, action="delete"))
    r.add_post("/api/v1/tubes/{tube}/move", partial(bulk, api=api, action="move"))


async def bulk(request: web.Request, api: Api, action: str) -> web.Response:
    """{"state", "contains", "limit", ["to"], ["confirm"]}"""
    tube = params.tube_name(request, api.ctx)
    doc = await params.body(request)
    flt = params.job_filter(tube, doc, KICKABLE if action == "kick" else REMOVABLE)
    target = target_tube(doc, tube) if action == "move" else None
    what = {"tube": tube, "state": flt.state, "limit": flt.limit, "to": target,
            "contains": None if flt.contains is None else flt.contains.decode(),
            "exclude": "qless" if flt.skip_qless else None}  # fmt: skip
    if "confirm" not in doc:
        count = await _count(api, flt)
        token = api.confirmations.issue(action, what)
        return web.json_response(
            {"dry_run": True, "action": action, "selection": what, "count": count, "confirm": token}
        )
    if not api.confirmations.check(doc["confirm"], action, what):
        raise ApiError(400, "confirm token is wrong, expired, or for another selection")
    return await _run(api, action, flt, target)


async def _count(api: Api, flt: query.JobFilter) -> int:
    """How many jobs the filter selects now (tested in slices: bodies are searched)."""
    ids = query.candidate_ids(api.ctx.engine, flt)
    found = await chunks.run_sliced(ids, partial(query.matches, api.ctx.engine, flt), _nothing)
    return found if flt.limit is None else min(found, flt.limit)


def _nothing() -> None:
    pass


async def _run(api: Api, action: str, flt: query.JobFilter, target: str | None) -> web.Response:
    ctx = api.ctx
    started = time.perf_counter()
    ids = query.candidate_ids(ctx.engine, flt)
    step = _step(api, action, flt, target)
    done = await chunks.run_sliced(ids, step, ctx.rearm)
    await ctx.settle()
    doc: dict[str, Any] = {"action": action, "done": done,
                           "seconds": round(time.perf_counter() - started, 3)}  # fmt: skip
    if ctx.engine.refuses():
        doc.update(error="the write-ahead log's disk is full: stopped early", status=507)
        return web.json_response(doc, status=507)
    if action == "move" and query.is_draining(ctx.engine):
        doc.update(error="the server is draining: no new jobs (a move puts one)", status=503)
        return web.json_response(doc, status=503)
    return web.json_response(doc)


def _step(
    api: Api, action: str, flt: query.JobFilter, target: str | None
) -> Callable[[int], bool | None]:
    """One job's move: True done, False skipped (not selected, or it left the selection
    meanwhile), None: stop (the limit is reached, or the disk is full)."""
    engine, now = api.ctx.engine, api.ctx.now
    left = [flt.limit]

    def one(job_id: int) -> bool | None:
        if left[0] is not None and left[0] <= 0:
            return None
        if not query.matches(engine, flt, job_id):
            return False
        if left[0] is not None:
            left[0] -= 1
        if action == "kick":
            outcome = admin.kick_job(engine, None, job_id, now())
        elif action == "delete":
            outcome = admin.delete(engine, job_id, now())
        else:
            assert target is not None
            outcome = admin.move(engine, job_id, target, now())[0]
        if outcome in (admin.Outcome.NO_ROOM, admin.Outcome.DRAINING):
            return None
        return outcome is admin.Outcome.DONE

    return one
