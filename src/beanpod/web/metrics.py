"""/metrics: Prometheus text format from a collector that reads the server's counters at
scrape time (nothing is counted per command for it beyond what the server keeps)."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder
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
        # Text format 0.0.4 by default; OpenMetrics when the scraper asks for it.
        encode, content_type = choose_encoder(request.headers.get("Accept", ""))
        return web.Response(body=encode(registry), headers={"Content-Type": content_type})

    app.router.add_get("/metrics", scrape)
