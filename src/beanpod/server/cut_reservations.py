"""At start-up, the event log closes the reservations the last stop cut.

Reserves are not in the write-ahead log (docs/wal.md), so after a crash a job that was
reserved comes back ready with nothing in the event log after its `reserve`: the
analytics would count its next wait from its put. The restarted server reads the event
log's tail (events/reservations.py) and gives every restored job still waiting whose
latest event holds it a `timeout`, as docs/eventlog.md promises for every job a restart
returns from reserved to ready. The restore's own timeouts (jobs a snapshot or a
migrated record logged reserved) are flushed first and so read back: no job gets two.
"""

from __future__ import annotations

import logging
from operator import attrgetter
from typing import TYPE_CHECKING, Final

from beanpod.core.job import DELAYED, READY
from beanpod.events.reservations import open_reservations
from beanpod.events.schema import TIMEOUT

if TYPE_CHECKING:
    from beanpod.core.engine import Engine
    from beanpod.events.writer import EventWriter

log = logging.getLogger("beanpod")

# Beyond the longest TTR: a reservation older than TTR + this was closed by its expiry
# (a `timeout` in the log) unless the server was stalled that long.
MARGIN_MS: Final = 60_000
_TTR = attrgetter("ttr")


def close_cut_reservations(engine: Engine, events: EventWriter, now: int) -> int:
    """Emit a `timeout` at `now` for each restored job the event log shows reserved and
    the engine holds ready or delayed; return how many."""
    jobs = engine.jobs
    if not jobs:
        return 0
    events.flush()  # the restore's timeouts, so the scan sees them
    window = max(map(_TTR, jobs.values())) + MARGIN_MS
    closed = 0
    for jid in open_reservations(events.directory, jobs, window):
        job = jobs[jid]
        if job.state is READY or job.state is DELAYED:
            events.emit(now, TIMEOUT, jid, job.tube.name, None)
            closed += 1
    if closed:
        log.info("event log: %d reservations cut by the last stop closed (timeout)", closed)
    return closed
