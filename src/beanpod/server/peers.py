"""Connections' peer addresses for the event log, so the analytics report can name a
worker that gives no name of its own (a plain beanstalkd client) by where it connects from."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the event log's modules load only with --events
    from beanpod.events.writer import EventWriter


def peer_name(transport: asyncio.BaseTransport) -> str:
    """`host:port` of a TCP peer (`[v6]:port` for IPv6), `unix` for a UNIX socket."""
    peer = transport.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        host, port = peer[0], peer[1]
        return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"
    return "unix"


def note_peer(events: EventWriter | None, conn: int, transport: asyncio.BaseTransport) -> None:
    if events is not None:
        events.connection_opened(conn, peer_name(transport))


def forget_peer(events: EventWriter | None, conn: int) -> None:
    if events is not None:
        events.connection_closed(conn)
