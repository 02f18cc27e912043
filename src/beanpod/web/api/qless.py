"""qless views and actions: queues, failure groups (with their jobs, and retry of a whole
group), tracked jobs, workers and what each holds, recurring templates, daily stats.
Reads are the read-only qless functions; retry is `unfail`, as the `qless` command runs
them."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from aiohttp import web

from beanpod.core import admin, admin_qless, query
from beanpod.web.api import params
from beanpod.web.api.state import Api
from beanpod.web.errors import ApiError

if TYPE_CHECKING:
    from beanpod.core.qless import Qless

UNFAIL_SLICE = 500  # jobs unfailed per loop turn
P = "/api/v1/qless"


def add_routes(app: web.Application, api: Api) -> None:
    r = app.router
    r.add_get(f"{P}/queues", partial(read, api=api, fn="queues"))
    r.add_get(f"{P}/tracked", partial(read, api=api, fn="track"))
    r.add_get(f"{P}/failures", partial(failures, api=api))
    r.add_get(f"{P}/failures/{{group}}", partial(failure_group, api=api))
    r.add_post(f"{P}/failures/{{group}}/retry", partial(retry_group, api=api))
    r.add_post(f"{P}/jobs/{{jid}}/retry", partial(retry_job, api=api))
    r.add_get(f"{P}/workers", partial(workers, api=api))
    r.add_get(f"{P}/workers/{{name}}", partial(worker, api=api))
    r.add_get(f"{P}/recurring", partial(recurring, api=api))
    r.add_get(f"{P}/stats/{{queue}}", partial(stats, api=api))


def _q(api: Api) -> Qless:
    if api.ctx.qless is None:
        raise ApiError(404, "qless is not enabled on this server")
    return api.ctx.qless


def _read(api: Api, fn: str, *args: Any) -> Any:
    return query.qless_read(_q(api), fn, list(args), api.ctx.now())


async def read(request: web.Request, api: Api, fn: str) -> web.Response:
    return web.json_response(_read(api, fn))


async def failures(request: web.Request, api: Api) -> web.Response:
    """Failure groups with their counts, largest first."""
    groups = _read(api, "failed")
    ranked = sorted(groups.items(), key=lambda item: -item[1])
    by_queue = query.qless_failed_by_queue(_q(api))  # (also buried, in the beanstalkd view)
    return web.json_response(
        {"groups": [{"group": g, "count": n} for g, n in ranked], "by_queue": by_queue}
    )


async def failure_group(request: web.Request, api: Api) -> web.Response:
    """?start=N&limit=N: the group's jobs, newest failure first."""
    group = request.match_info["group"]
    start = params.integer(request.query.get("start", 0), "start", 0, 10**9)
    limit = params.integer(request.query.get("limit", 25), "limit", 1, params.MAX_PAGE)
    found = _read(api, "failed", group, start, limit)
    if not found["total"]:
        raise ApiError(404, f"no failure group {group!r}")
    jobs = _read(api, "multiget", *found["jobs"]) if found["jobs"] else []
    return web.json_response({"group": group, "total": found["total"], "jobs": jobs})


async def retry_group(request: web.Request, api: Api) -> web.Response:
    """{"queue": optional, "confirm": token}: every job of the group back to waiting in
    its queue (`unfail`). Without "confirm": the count and a token."""
    group = request.match_info["group"]
    doc = await params.body(request)
    total, queue = _group_queue(api, group, doc.get("queue"))
    what = {"group": group, "queue": queue}
    if "confirm" not in doc:
        token = api.confirmations.issue("unfail", what)
        return web.json_response({"dry_run": True, "action": "retry", "selection": what,
                                  "count": total, "confirm": token})  # fmt: skip
    if not api.confirmations.check(doc["confirm"], "unfail", what):
        raise ApiError(400, "confirm token is wrong, expired, or for another selection")
    done = await _unfail_all(api, queue, group)
    return web.json_response({"action": "retry", "selected": total, "done": done})


async def retry_job(request: web.Request, api: Api) -> web.Response:
    """{"queue": optional}: one failed job back to waiting in its queue (or the one
    named), as qless-py's `job.requeue(queue)`: qless `requeue`, which keeps its
    priority, tags and retries and resets the retries left."""
    jid, ctx = request.match_info["jid"], api.ctx
    job = _read(api, "get", jid)
    if not job:
        raise ApiError(404, f"no qless job {jid!r}")
    if job["state"] != "failed":
        raise ApiError(409, f"job {jid} is {job['state']}, not failed")
    queue = _queue_name((await params.body(request)).get("queue", job["queue"]))
    _change(api, "requeue", ["", queue, jid, job["klass"], job["data"], 0])
    ctx.rearm()
    await ctx.settle()
    return web.json_response(_read(api, "get", jid))


def _queue_name(raw: Any) -> str:
    if not isinstance(raw, str) or not admin.valid_tube_name(raw):
        raise ApiError(400, f'"queue" must be a valid queue name, not {raw!r}')
    return raw


def _change(api: Api, name: str, args: list[Any]) -> Any:
    """A qless call that changes state; its refusal as the API's error (507: no disk)."""
    try:
        return admin_qless.qless_call(_q(api), name, args, api.ctx.now())
    except admin_qless.Refused as exc:
        raise ApiError(507 if "disk" in exc.message else 409, exc.message) from None


def _group_queue(api: Api, group: str, queue: Any) -> tuple[int, str]:
    """The group's size and the queue its jobs go back to (the one they all failed in,
    unless the request names one)."""
    found = _read(api, "failed", group, 0, params.MAX_PAGE)
    if not found["total"]:
        raise ApiError(404, f"no failure group {group!r}")
    if queue is not None:
        return found["total"], _queue_name(queue)
    names = {job["queue"] for job in _read(api, "multiget", *found["jobs"]) if job}
    if len(names) != 1 or found["total"] > params.MAX_PAGE:
        raise ApiError(400, 'jobs of this group may be in several queues: name one in "queue"')
    return found["total"], names.pop()


async def _unfail_all(api: Api, queue: str, group: str) -> int:
    ctx, done = api.ctx, 0
    while True:
        moved = _change(api, "unfail", [queue, group, UNFAIL_SLICE])
        done += int(moved)
        ctx.rearm()
        await ctx.settle()
        if moved < UNFAIL_SLICE:
            return done


async def workers(request: web.Request, api: Api) -> web.Response:
    """qless workers (most recent first) with the jids each holds and its stalled ones."""
    listing = []
    for entry in _read(api, "workers"):
        held = _read(api, "workers", entry["name"])
        listing.append({**entry, "job_ids": held["jobs"], "stalled_ids": held["stalled"]})
    return web.json_response({"workers": listing})


async def worker(request: web.Request, api: Api) -> web.Response:
    name = request.match_info["name"]
    held = _read(api, "workers", name)
    return web.json_response({"name": name, **held})


async def recurring(request: web.Request, api: Api) -> web.Response:
    return web.json_response({"recurring": query.recurring(_q(api))})


async def stats(request: web.Request, api: Api) -> web.Response:
    """?date=UNIX_SECONDS (default now): the queue's wait/run statistics of that day."""
    queue = request.match_info["queue"]
    date = params.integer(request.query.get("date", api.ctx.now() // 1000), "date", 0, 2**40)
    return web.json_response({"queue": queue, **_read(api, "stats", queue, date)})
