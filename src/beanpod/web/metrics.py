"""/metrics: beanpod's families (web/collector.py) in Prometheus' text format, written by
the fast writer (web/families.py), then the process metrics from prometheus-client."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest
from prometheus_client.process_collector import ProcessCollector

from beanpod.web.collector import families
from beanpod.web.context import WebContext
from beanpod.web.families import render

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def scrape_text(ctx: WebContext, process: CollectorRegistry) -> bytes:
    return render(families(ctx)).encode() + generate_latest(process)


def add_routes(app: web.Application, ctx: WebContext) -> None:
    process = CollectorRegistry(auto_describe=False)
    ProcessCollector(registry=process)  # process_cpu_seconds_total, RSS, open fds...

    async def scrape(request: web.Request) -> web.Response:
        return web.Response(body=scrape_text(ctx, process), headers={"Content-Type": CONTENT_TYPE})

    app.router.add_get("/metrics", scrape)
