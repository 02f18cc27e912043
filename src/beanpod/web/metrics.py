"""/metrics: Prometheus text format from a collector that reads the server's counters at
scrape time (nothing is counted per command for it beyond what the server keeps)."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.process_collector import ProcessCollector

from beanpod.web.collector import BeanpodCollector
from beanpod.web.context import WebContext


def build_registry(ctx: WebContext) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(BeanpodCollector(ctx))
    ProcessCollector(registry=registry)  # process_cpu_seconds_total, RSS, open fds...
    return registry


def add_routes(app: web.Application, ctx: WebContext) -> None:
    registry = build_registry(ctx)

    async def scrape(request: web.Request) -> web.Response:
        body = generate_latest(registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app.router.add_get("/metrics", scrape)
