"""`flush`: every qless job, queue, worker, throttle, statistic and setting forgotten, as
Redis's FLUSHDB leaves qless (the Redis door's FLUSHDB on a server started for tests).
Made of qless's own moves, so the write-ahead log records each removal."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beanpod.core.qless import cancel, queues, recurring, throttles, workers
from beanpod.core.qless.ext import rext
from beanpod.core.qless.names import TRACK_STATE

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.qless.store import Qless


def flush(q: Qless, now: int, caller: Conn | None) -> None:
    """`caller`: the connection the cancellations' events name."""
    q.at(now)
    for jid in [jid for jid, job in q.jobs.items() if rext(job) is not None]:
        recurring.unrecur(q, now, jid)
    if q.jobs:
        cancel.cancel(q, now, list(q.jobs), caller=caller)  # leaves complete jobs
    while q.completed:
        _, job = q.completed.popitem(last=False)
        cancel.remove(q, job, now, event=None, caller=caller)
    for jid in list(q.tracked):  # the jobs are gone; forget that they were tracked
        q.tracked.pop(jid)
        q.save_state(TRACK_STATE + jid, None)
    queues.forget(q, list(q.queues))
    workers.deregister(q, list(q.workers))
    for key in list(q.config.overrides):
        q.set_config(key, None)
    for tid in list(q.throttles):
        throttles.delete(q, now, tid)
    q.stats.forget_all()
    q.flush_stats()
