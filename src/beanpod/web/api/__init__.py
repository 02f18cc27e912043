"""The JSON admin API under /api/v1/ (docs/http-api.md): reads through beanpod.core.query,
changes through the engine's operations (beanpod.core.admin, the qless functions), each
acknowledged once the write-ahead log holds it."""

from __future__ import annotations

from aiohttp import web

from beanpod.core import admin
from beanpod.web.api import bulk, busy, find, jobs, qless, summary, tubes, workq
from beanpod.web.api.state import Api
from beanpod.web.context import WebContext


def add_routes(app: web.Application, ctx: WebContext) -> None:
    api = Api(ctx, admin.operator_conn(ctx.engine))
    for group in (summary, tubes, jobs, bulk, busy, find, qless, workq):
        group.add_routes(app, api)
