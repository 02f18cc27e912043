"""The server's counters as the web layer reads them (web.context.ServerFacts), so web/
never imports the server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from beanpod.protocols.beanstalkd import commands as c
from beanpod.protocols.beanstalkd import wire as w
from beanpod.protocols.beanstalkd.context import COUNTED
from beanpod.web.context import HistogramSnapshot, WalStats

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.server.app import App

# beanstalkd verb bytes -> the `command` label (the cmd-* stats name without "cmd-").
VERB_NAMES: dict[bytes, str] = {
    **{verb: name.decode()[4:] for verb, name in COUNTED},
    w.RESERVE_JOB: "reserve-job",
    w.KICK_JOB: "kick-job",
    w.QUIT: "quit",
    c.ERROR: "unparsed",  # a line the parser refused (BAD_FORMAT, UNKNOWN_COMMAND)
}


def role_of(conn: Conn) -> str:
    """A beanstalkd connection's role, as stats counts them (put: producer; reserve:
    worker), made exclusive so the roles add up to the open connections."""
    if conn.producer:
        return "producer+worker" if conn.worker else "producer"
    return "worker" if conn.worker else "idle"


class AppFacts:
    def __init__(self, app: App) -> None:
        self.app = app

    def command_counts(self) -> Mapping[str, int]:
        counts = self.app.dialect.command_counts()
        return {VERB_NAMES[verb]: count for verb, count in counts.items() if verb in VERB_NAMES}

    def command_errors(self) -> Mapping[tuple[str, str], int]:
        return {
            (VERB_NAMES.get(verb, "unparsed"), reply.decode().strip()): count
            for (verb, reply), count in self.app.dialect.errors.items()
        }

    def connections(self) -> Mapping[tuple[str, str], int]:
        roles: dict[tuple[str, str], int] = {}
        for session in self.app.sessions:
            key = ("beanstalkd", role_of(session.conn))
            roles[key] = roles.get(key, 0) + 1
        roles["workq", "client"] = len(self.app.workq_sessions)
        return roles

    def connections_accepted(self) -> Mapping[str, int]:
        return {"beanstalkd": self.app.engine.counts.total_connections}

    def connections_rejected(self) -> int | None:
        """Closed at accept (allow-list, --max-connections) or at a failed TLS handshake."""
        edge = self.app.edge
        failed = edge.tls.failed_handshakes if edge.tls is not None else 0
        return edge.gate.refused + failed

    def events_dropped(self) -> int | None:
        events = self.app.events
        return None if events is None else events.dropped

    def wal(self) -> WalStats | None:
        wal = self.app.wal
        if wal is None:
            return None
        m = wal.metrics()
        return WalStats(
            segments=m.segments,
            size_bytes=m.size_bytes,
            written_bytes=m.written_bytes,
            records_written=m.records_written,
            fsync=HistogramSnapshot(m.sync_bounds, m.sync_buckets, m.sync_sum),
        )
