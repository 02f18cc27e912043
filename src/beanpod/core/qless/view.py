"""The job object qless returns (`get`, `pop`, `peek`, ...) and the recurring view.

Lists are JSON lists (qless-core's cjson turns empty ones into `{}`; we do not).
Times are seconds, as qless shows them; `data` is JSON text.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from beanpod.core.job import PRI_PIVOT, Job, JobState
from beanpod.core.qless.ext import QlessExt, RecurExt, qext
from beanpod.core.qless.names import plain_jid, state_name
from beanpod.core.qless.throttles import of_job, queue_throttle

if TYPE_CHECKING:
    from beanpod.core.qless.store import Qless


def seconds(ms: int) -> int | float:
    """Milliseconds as qless seconds: an int when whole."""
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


def data_text(job: Job) -> str:
    """A job's data as JSON text (a plain job's body, quoted when it is not JSON)."""
    ext = qext(job)
    if ext is not None and ext.data is not None:
        return ext.data
    try:
        text = job.body.decode()
        json.loads(text)
    except (ValueError, RecursionError):  # not JSON (or nested too deeply to check)
        return json.dumps(job.body.decode("utf-8", "replace"))
    return text


def job_view(q: Qless, job: Job, now: int) -> dict[str, Any]:
    ext = qext(job)
    if ext is None:
        return _plain_view(job)
    running = job.state is JobState.RESERVED
    state = state_name(job)
    worker = ext.worker if running else ext.timed_out_worker if state == "stalled" else ""
    return {
        "jid": ext.jid,
        "klass": ext.klass,
        "state": state,
        "queue": "" if job.state is JobState.COMPLETE else ext.queue,
        "worker": worker,
        "tracked": ext.tracked,
        "priority": ext.priority,
        "expires": seconds(ext.expires) if running and ext.worker else 0,
        "retries": ext.retries,
        "remaining": ext.remaining,
        "data": data_text(job),
        "tags": list(ext.tags),
        "history": [dict(entry) for entry in ext.history],
        "failure": dict(ext.failure) if ext.failure else {},
        "spawned_from_jid": ext.spawned_from or False,
        "dependents": list(ext.dependents),
        "dependencies": list(ext.dependencies),
        "throttles": of_job(ext),
    }


def _plain_view(job: Job) -> dict[str, Any]:
    """A beanstalkd-put job as qless sees it (jid `beanstalkd:<id>`)."""
    return {
        "jid": plain_jid(job.id), "klass": "", "state": state_name(job), "queue": job.tube.name,
        "worker": "", "tracked": False, "priority": PRI_PIVOT - job.pri, "expires": 0,
        "retries": 0, "remaining": 0, "data": data_text(job), "tags": [], "history": [],
        "failure": {}, "spawned_from_jid": False, "dependents": [], "dependencies": [],
        "throttles": [queue_throttle(job.tube.name)],
    }  # fmt: skip


def recur_view(ext: RecurExt) -> dict[str, Any]:
    return {
        "jid": ext.jid, "klass": ext.klass, "state": "recur", "queue": ext.queue,
        "priority": ext.priority, "interval": seconds(ext.interval), "retries": ext.retries,
        "count": ext.count, "data": ext.data, "tags": list(ext.tags), "backlog": ext.backlog,
        "throttles": of_job(ext),
    }  # fmt: skip


def is_qless(job: Job) -> bool:
    return isinstance(job.ext, QlessExt)
