"""The engine's extensions with their dialect parts: qless (the beanstalkd `qless`
command's state) and Workq (its dialect and sessions). About 40 modules that a plain
beanstalkd client never needs, so the App builds them on first use: after its beanstalkd
listener serves, before a WAL replay (the log may hold their jobs), or when a qless
request, a Workq connection or the HTTP listener asks for them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beanpod.core import ext_codecs
from beanpod.core.qless import Qless
from beanpod.core.workq import Workq
from beanpod.protocols.beanstalkd import qless as qless_command
from beanpod.protocols.workq.context import Dialect as WorkqDialect
from beanpod.server.workq_session import WorkqSession

if TYPE_CHECKING:
    from beanpod.server.app import App

# Loaded with the extension, so the first `qless` request imports nothing.
# `ext_codecs`: the same decoders `beanpod wal` registers, before a replay needs them.
__all__ = ["Extensions", "WorkqSession", "ext_codecs", "qless_command"]


class Extensions:
    def __init__(self, app: App) -> None:
        self.qless = Qless(app.engine)
        self.workq = Workq(app.engine)
        self.workq_dialect = WorkqDialect(app.engine, self.workq, app.started_at)
        self.workq_dialect.output_limit = app.config.edge.output_hard_limit
        if app.edge.audit.enabled:  # admin acts of the Workq dialect go to --audit-log
            self.workq_dialect.audit = app.edge.audit.record
