"""The edge as the server sees it: one object built from EdgeSettings that admits each
new connection (allow-list, connection limit, TLS handshake), sweeps the open ones
(timeouts, output limit), meters memory and audits; plus beanpod's own `stats` keys."""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable, Iterable
from typing import Any

from beanpod.core.engine import Engine
from beanpod.core.memory import MemoryMeter
from beanpod.server.edge.audit import AuditLog
from beanpod.server.edge.gate import Gate
from beanpod.server.edge.settings import EdgeSettings, TlsSettings
from beanpod.server.edge.tls import Tls
from beanpod.server.edge.watchdog import Watchdog
from beanpod.server.startup import EXIT_USAGE, StartupError, cause

log = logging.getLogger("beanpod.edge")


class Edge:
    def __init__(self, settings: EdgeSettings, engine: Engine, clock_ms: Callable[[], int]):
        self.settings = settings
        self.audit = _audit_log(settings.audit_log)
        self.gate = Gate(settings.allow, settings.max_connections, self.audit)
        self.meter: MemoryMeter | None = None
        if settings.metered:
            self.meter = MemoryMeter(settings.max_memory, settings.max_jobs_per_tube)
        self.tls = _tls(settings.tls) if settings.tls is not None else None
        self.engine = engine
        self.clock_ms = clock_ms
        self.watchdog: Watchdog | None = None

    def start(self, sessions: Callable[[], Iterable[Any]]) -> None:
        """After the WAL restored the engine: count what it holds, start the sweep."""
        if self.meter is not None:
            self.engine.keep_meter(self.meter)
        self.watchdog = Watchdog(self.settings, sessions, self.meter, self.clock_ms)
        self.watchdog.start()

    def stop(self) -> None:
        if self.watchdog is not None:
            self.watchdog.stop()
        if self.tls is not None:
            self.tls.close()
        self.audit.close()

    # ---- admission -----------------------------------------------------------------------

    def admit(self, session: Any, transport: asyncio.Transport) -> bool:
        """True: serve `session` now. False: refused and closed before any byte was read.
        A TLS listener's sessions come admitted (server/edge/tls.py)."""
        if session.admitted:
            return True
        if not self.gate.admit(transport):
            session.closed = True
            transport.abort()
            return False
        session.admitted = True
        return True

    def left(self) -> None:
        self.gate.left()

    # ---- reporting -----------------------------------------------------------------------

    def stats(self) -> list[tuple[bytes, int]]:
        """beanpod's `stats` keys for the edge: only those of options that were given (and
        refusals once any happened), so a default server prints beanstalkd's keys."""
        keys: list[tuple[bytes, int]] = []
        meter, s = self.meter, self.settings
        if meter is not None:
            keys += [(b"memory-used", meter.used), (b"max-memory", s.max_memory or 0),
                     (b"puts-refused-memory", meter.refused)]  # fmt: skip
        if s.max_connections is not None or self.gate.refused:
            keys += [
                (b"max-connections", self.gate.max_connections),
                (b"connections-refused", self.gate.refused),
            ]
        dog = self.watchdog
        if dog is not None and (dog.closed_request_timeout or dog.closed_idle or dog.closed_output):
            keys += [
                (b"closed-request-timeout", dog.closed_request_timeout),
                (b"closed-idle", dog.closed_idle),
                (b"closed-output-limit", dog.closed_output),
            ]
        if self.tls is not None:
            keys.append((b"tls-handshakes-failed", self.tls.failed_handshakes))
        return keys


def _audit_log(path: str | None) -> AuditLog:
    try:
        return AuditLog(path)
    except OSError as exc:
        raise StartupError(f"cannot open the audit log {path}", cause(exc), EXIT_USAGE) from exc


def _tls(settings: TlsSettings) -> Tls:
    try:
        return Tls(settings)
    except (OSError, ssl.SSLError) as exc:
        why = cause(exc) if not isinstance(exc, ssl.SSLError) else exc.reason or str(exc)
        raise StartupError(f"cannot load the TLS certificate {settings.cert} or key "
                           f"{settings.key}", why, EXIT_USAGE) from exc  # fmt: skip
