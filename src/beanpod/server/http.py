"""Start and stop the HTTP listener (web/) for the App: its settings are checked before
anything else starts, and a bind failure names the listener like the others do."""

from __future__ import annotations

import socket
from functools import partial
from typing import TYPE_CHECKING

from beanpod.server.background import off_the_loop
from beanpod.server.startup import EXIT_USAGE, StartupError, cause
from beanpod.web.address import is_loopback
from beanpod.web.readiness import WebSettings

FOLD_EVERY = 1.0  # seconds between folds of pending job times into the histograms

if TYPE_CHECKING:
    from beanpod.server.app import App
    from beanpod.server.ports import ListenSockets
    from beanpod.web.listener import HttpListener


def read_token(path: str | None) -> str | None:
    """The token in `path` (surrounding whitespace dropped); it must not be empty."""
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            token = handle.read().strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = cause(exc) if isinstance(exc, OSError) else "not UTF-8 text"
        raise StartupError(f"cannot read the HTTP token file {path}", reason, EXIT_USAGE) from exc
    if not token:
        raise StartupError(f"cannot use the HTTP token file {path}", "it is empty", EXIT_USAGE)
    return token


async def settle(app: App) -> None:
    """How an HTTP action is acknowledged like a protocol command: after engine work the
    ticker is rearmed and the turn's events flushed (`App.rearm`), and the answer waits,
    as a held protocol reply does, until the write-ahead log holds the turn's records
    (and, with `-f 0`, has fsynced them)."""
    app.rearm()
    if app.wal is not None:
        await app.wal.settled()


def web_settings(app: App) -> WebSettings | None:
    """Checked before anything starts: a non-loopback address needs a token."""
    config = app.config
    if config.http is None:
        return None
    host = config.http[0]
    token = read_token(config.http_token_file)
    if token is None and not is_loopback(host):
        raise StartupError(
            f"refusing --http {host}:{config.http[1]}",
            "a non-loopback address needs --http-token FILE",
            EXIT_USAGE,
        )
    return WebSettings(
        metrics_max_tubes=config.metrics_max_tubes, token=token, analytics_dir=config.analytics_dir
    )


def _listener_class() -> type[HttpListener]:
    from beanpod.web.listener import HttpListener  # aiohttp loads only when HTTP is on

    return HttpListener


async def start_http(
    app: App, settings: WebSettings, ports: ListenSockets, sock: socket.socket | None
) -> HttpListener | None:
    """Serve HTTP on `sock` (bound by server/ports.py; None: by name); None when the
    listener stays off (its default port is taken)."""
    assert app.config.http is not None
    host, port = app.config.http
    if "HTTP" in ports.off:
        return None
    # Imported on a worker thread: the loop keeps answering beanstalkd meanwhile.
    listener_class = await off_the_loop(_listener_class)
    from beanpod.core.timings import JobTimings
    from beanpod.server.web_facts import AppFacts
    from beanpod.web.context import WebContext

    ctx = WebContext(
        engine=app.engine, clock=app.clock.now, info=app.info, facts=AppFacts(app),
        qless=app.qless, workq=app.workq, readiness=app.readiness, settings=settings,
        rearm=app.rearm, settle=partial(settle, app), audit=app.edge.audit.record,
    )  # fmt: skip
    # /metrics' wait/run histograms: kept only while someone can look at them.
    timings = JobTimings(settings.metrics_max_tubes)
    app.engine.keep_timings(timings)
    tls = app.edge.tls  # --http-tls: the same live context (SIGHUP reloads it for HTTPS too)
    with_tls = tls is not None and tls.settings.http
    listener = listener_class(ctx, host, port, tls.context if with_tls and tls else None)
    try:
        await listener.start(sock)
    except OSError as exc:
        ports.refused("HTTP", (host, port), exc)
        return None
    listener.every(FOLD_EVERY, timings.fold)  # keeps the engine's pending times short
    return listener
