"""The dashboard at / (plain HTML, CSS and JavaScript shipped in the wheel; no CDN): a
single page reading the JSON API, plus the throughput history and the analytics report
it shows."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from aiohttp import web

from beanpod.core import query
from beanpod.web.context import WebContext
from beanpod.web.errors import ApiError
from beanpod.web.ui import analytics
from beanpod.web.ui.throughput import Throughput

STATIC = Path(__file__).parent / "static"
THROUGHPUT_KEY = web.AppKey("throughput", Throughput)


def add_routes(app: web.Application, ctx: WebContext) -> None:
    meter = Throughput(partial(totals, ctx))
    app[THROUGHPUT_KEY] = meter
    app.on_startup.append(lambda _: _start(meter))
    app.on_cleanup.append(lambda _: _stop(meter))
    r = app.router
    r.add_get("/", index)
    r.add_static("/static/", STATIC, append_version=False)
    r.add_get("/api/v1/throughput", partial(throughput, meter=meter))
    r.add_get("/api/v1/analytics", partial(analytics_run, ctx=ctx))
    r.add_get("/analytics/report.html", partial(analytics_report, ctx=ctx))


async def _start(meter: Throughput) -> None:
    meter.start()


async def _stop(meter: Throughput) -> None:
    meter.stop()


def totals(ctx: WebContext) -> tuple[int, int, int]:
    """(jobs put by any dialect, beanstalkd reserves, beanstalkd deletes) so far."""
    counts = ctx.facts.command_counts()
    reserves = counts.get("reserve", 0) + counts.get("reserve-with-timeout", 0)
    reserves += counts.get("reserve-job", 0)
    return query.total_jobs(ctx.engine), reserves, counts.get("delete", 0)


async def index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


async def throughput(request: web.Request, meter: Throughput) -> web.Response:
    return web.json_response(meter.as_json())


async def analytics_run(request: web.Request, ctx: WebContext) -> web.Response:
    return web.json_response(analytics.latest_run(ctx.settings.analytics_dir))


async def analytics_report(request: web.Request, ctx: WebContext) -> web.FileResponse:
    path = analytics.report_path(ctx.settings.analytics_dir)
    if path is None:
        raise ApiError(404, "no analytics report (serve --analytics DIR after beanpod analyze)")
    return web.FileResponse(path)
