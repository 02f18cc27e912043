"""The server's counters as the web layer reads them (web.context.ServerFacts), so web/
never imports the server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from beanpod.protocols.beanstalkd import wire as w
from beanpod.protocols.beanstalkd.context import COUNTED

if TYPE_CHECKING:
    from beanpod.server.app import App
    from beanpod.web.context import WalFacts

# beanstalkd verb bytes -> the `command` label (the cmd-* stats name without "cmd-").
VERB_NAMES: dict[bytes, str] = {
    **{verb: name.decode()[4:] for verb, name in COUNTED},
    w.RESERVE_JOB: "reserve-job",
    w.KICK_JOB: "kick-job",
    w.QUIT: "quit",
}


class AppFacts:
    def __init__(self, app: App) -> None:
        self.app = app

    def command_counts(self) -> Mapping[str, int]:
        counts = self.app.dialect.cmd_counts
        return {VERB_NAMES[verb]: count for verb, count in counts.items() if verb in VERB_NAMES}

    def command_errors(self) -> Mapping[tuple[str, str], int]:
        return {}

    def connections(self) -> Mapping[str, int]:
        return {}

    def connections_accepted(self) -> int:
        return 0

    def connections_rejected(self) -> int:
        return 0

    def events_dropped(self) -> int | None:
        events = self.app.events
        return None if events is None else events.dropped

    def wal(self) -> WalFacts | None:
        return None
