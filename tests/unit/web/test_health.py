"""/readyz follows the server's readiness: 503 while replaying (with progress), 200 when
serving, 503 while draining; every route group gets the JSON errors."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from beanpod.server.app import App
from beanpod.server.config import ServerConfig
from beanpod.server.web_facts import AppFacts
from beanpod.web.app import build_app
from beanpod.web.context import WebContext
from beanpod.web.errors import ApiError


def context() -> WebContext:
    app = App(ServerConfig(check_moves=True))
    return WebContext(engine=app.engine, clock=app.clock.now, info=app.info,
                      facts=AppFacts(app), readiness=app.readiness)  # fmt: skip


async def get(client: TestClient[Any, Any], path: str) -> tuple[int, Any]:
    response = await client.get(path)
    return response.status, await response.json()


def test_readyz_follows_readiness() -> None:
    ctx = context()

    async def run() -> None:
        async with TestClient(TestServer(build_app(ctx))) as client:
            assert await get(client, "/readyz") == (503, {"status": "replaying"})
            ctx.readiness.progress = lambda: (40, 100)
            assert await get(client, "/readyz") == (
                503, {"status": "replaying", "replayed": 40, "total": 100}
            )  # fmt: skip
            ctx.readiness.serving = True
            assert await get(client, "/readyz") == (200, {"status": "ready"})
            ctx.engine.draining = True
            assert await get(client, "/readyz") == (503, {"status": "draining"})
            assert await get(client, "/healthz") == (200, {"status": "ok"})

    asyncio.run(run())


def test_route_groups_get_json_errors() -> None:
    def add_routes(app: web.Application, ctx: WebContext) -> None:
        async def teapot(request: web.Request) -> web.Response:
            raise ApiError(418, "short and stout")

        async def broken(request: web.Request) -> web.Response:
            raise RuntimeError("a bug")

        app.router.add_get("/teapot", teapot)
        app.router.add_get("/broken", broken)

    async def run() -> None:
        async with TestClient(TestServer(build_app(context(), [add_routes]))) as client:
            assert await get(client, "/teapot") == (
                418,
                {"error": "short and stout", "status": 418},
            )
            status, body = await get(client, "/broken")
            assert (status, body["status"]) == (500, 500) and "a bug" not in body["error"]

    asyncio.run(run())


def test_the_api_waits_for_the_replay() -> None:
    """While the log replays the engine is half built: the API answers 503, /readyz shows
    how far the replay got."""
    ctx = context()
    ctx.readiness.progress = lambda: (300, 1000)

    async def run() -> None:
        async with TestClient(TestServer(build_app(ctx))) as client:
            response = await client.get("/api/v1/summary")
            assert response.status == 503 and response.headers["Retry-After"] == "1"
            assert (await response.json())["error"].startswith("starting")
            assert await get(client, "/readyz") == (
                503, {"status": "replaying", "replayed": 300, "total": 1000}
            )  # fmt: skip
            ctx.readiness.serving = True
            assert (await client.get("/api/v1/summary")).status == 200

    asyncio.run(run())
