"""The server at a glance: version, uptime, job counts by state, connections, WAL."""

from __future__ import annotations

from functools import partial

from aiohttp import web

from beanpod.core import query
from beanpod.web.api.state import Api


def add_routes(app: web.Application, api: Api) -> None:
    app.router.add_get("/api/v1/summary", partial(summary, api=api))


async def summary(request: web.Request, api: Api) -> web.Response:
    ctx = api.ctx
    now = ctx.now()
    info = ctx.info
    oldest, current, migrated, written, max_size = info.binlog_stats()
    wal, roles = ctx.facts.wal(), ctx.facts.connections()
    return web.json_response({
        "version": info.version, "pid": info.pid, "hostname": info.hostname,
        "uptime_s": info.uptime(now), "draining": query.is_draining(ctx.engine),
        "jobs": query.job_counts(ctx.engine), "tubes": len(query.tube_names(ctx.engine)),
        "clients": query.connection_counts(ctx.engine),
        "connections": {f"{proto} {role}": n for (proto, role), n in roles.items()},
        "wal": {"enabled": wal is not None, "oldest_index": oldest,
                "current_index": current, "records_written": written,
                "records_migrated": migrated, "max_segment_bytes": max_size,
                "segments": wal.segments if wal else 0, "disk_bytes": wal.size_bytes if wal else 0},
        "qless": ctx.qless is not None, "workq": ctx.workq is not None,
        "analytics": ctx.settings.analytics_dir is not None,
    })  # fmt: skip
