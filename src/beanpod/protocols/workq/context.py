"""What a Workq handler sees: the engine's Workq state, the connection, server facts."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.engine import Engine
    from beanpod.core.workq import Wait, Workq


class Dialect:
    """State shared by every Workq connection of one server."""

    def __init__(self, engine: Engine, workq: Workq, started_at: int) -> None:
        self.engine = engine
        self.workq = workq
        self.started_at = started_at  # epoch ms, for `inspect server` started
        self.output_limit = 1 << 62  # bytes of inspect replies one batch may produce
        self.audit: Callable[..., None] | None = None  # --audit-log: admin acts are told


class Context(Protocol):
    """One connection's session as handlers use it."""

    dialect: Dialect
    conn: Conn
    now: int
    batch_bytes: int  # bytes of inspect replies in the current batch (reset by the session)
    wait: Wait | None  # the parked run/result, cancelled if the connection closes

    def deliver(self, reply: bytes) -> None:
        """Answer this session's parked command (lease, run, result) and resume it."""
        ...
