"""/healthz (the process answers) and /readyz (the WAL is replayed, the listeners serve,
and the server is not draining). With `--http-token`, a probe without the token (a
container HEALTHCHECK, a Kubernetes probe) is answered too, but /readyz then says only
`ready` or `not ready`: no replay progress, no drain."""

from __future__ import annotations

from aiohttp import web

from beanpod.core import query
from beanpod.web.auth import GUARD_KEY
from beanpod.web.context import WebContext


def add_routes(app: web.Application, ctx: WebContext) -> None:
    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def readyz(request: web.Request) -> web.Response:
        state = readiness_state(ctx)
        status = 200 if state == "ready" else 503
        if not request.app[GUARD_KEY].knows(request):
            return web.json_response(
                {"status": "ready" if status == 200 else "not ready"}, status=status
            )
        body: dict[str, object] = {"status": state}
        done, total = ctx.readiness.progress()
        if state == "replaying" and total:
            body["replayed"], body["total"] = done, total
        return web.json_response(body, status=status)

    async def leader(request: web.Request) -> web.Response:
        """A cluster's leader: 200 on it (HAProxy's check), 503 elsewhere."""
        if ctx.readiness.leader is None:
            return web.json_response({"error": "not a cluster node"}, status=404)
        leading, seen = ctx.readiness.leader()
        if leading and seen is not None:
            return web.json_response(seen)
        return web.json_response({"leader": seen}, status=503)

    async def checkpoint(request: web.Request) -> web.StreamResponse:
        """A cluster node's latest checkpoint, for a peer behind the log's trim point
        (it holds every job: the token is needed when one is set, as for the API)."""
        path = None if ctx.readiness.checkpoint is None else ctx.readiness.checkpoint()
        if path is None:
            return web.json_response({"error": "no checkpoint here"}, status=404)
        return web.FileResponse(path, headers={"Content-Type": "application/octet-stream"})

    app.router.add_get("/leader", leader)
    app.router.add_get("/cluster/checkpoint", checkpoint)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)


def readiness_state(ctx: WebContext) -> str:
    """ "ready", "replaying" (start-up: WAL replay) or "draining" (SIGUSR1)."""
    if not ctx.readiness.serving:
        return "replaying"
    if query.is_draining(ctx.engine):
        return "draining"
    return "ready"
