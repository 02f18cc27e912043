"""The qless names of engine things: qless state names of engine job states, the qless
timer kinds, and the keys of qless's named WAL states. A leaf: every qless module may
import it."""

from __future__ import annotations

from beanpod.core.job import Job, JobState
from beanpod.core.qless.ext import qext

LOCK_DUE = 20  # timer kind: a qless lock expired (target: the job)
# 21 was RECUR_DUE (recurring children are now spawned lazily by pop and peek)
SCHED_DUE = 22  # timer kind: a scheduled qless job is due to wait (target: the job)

# Named WAL states (STATE records, docs/wal.md): one per config override and per worker.
CONFIG_STATE = "qless.config/"  # + key; value: the override as JSON
WORKER_STATE = "qless.worker/"  # + name; value: last-seen engine ms as JSON
WORKER_SAVE_MS = 60_000  # a worker's last-seen is journalled at most once a minute
STATS_STATE = "qless.stats/"  # + day (days since the epoch) + "/" + queue; value: the bin
REGISTRY_STATE = "qless.registry"  # written with the first worker: the log has a registry
QUEUE_STATE = "qless.queue/"  # + name; value: first-seen engine ms (until queue.forget)
TRACK_STATE = "qless.tracked/"  # + jid; value: engine ms when tracked (kept once it is gone)

# A job put by beanstalkd is named in qless by this prefix + its decimal id (as Workq names
# it by a synthetic UUID); qless-put jids never take this form, so the two cannot meet.
BEANSTALKD_JID = "beanstalkd:"


def plain_jid(job_id: int) -> str:
    """The qless jid of the beanstalkd-put job `job_id`."""
    return f"{BEANSTALKD_JID}{job_id}"


def plain_id(jid: str) -> int | None:
    """The beanstalkd job id a jid of the form `beanstalkd:<id>` names, else None."""
    if not jid.startswith(BEANSTALKD_JID):
        return None
    digits = jid[len(BEANSTALKD_JID) :]
    if not (digits.isascii() and digits.isdigit()) or digits[0] == "0":
        return None  # one spelling per job, as ids are written
    return int(digits)


def jid_of(job: Job) -> str:
    """A job's qless name: its own jid, or the name of a beanstalkd-put job."""
    return getattr(job.ext, "jid", None) or plain_jid(job.id)


# qless state names of engine states (docs/qless.md has the mapping).
QLESS_STATE = {
    JobState.READY: "waiting",
    JobState.DELAYED: "scheduled",
    JobState.RESERVED: "running",
    JobState.BURIED: "failed",
    JobState.DEPENDS: "depends",
    JobState.COMPLETE: "complete",
    JobState.RECUR: "recur",
}


def worker_of(job: Job) -> str:
    ext = qext(job)
    return "" if ext is None else ext.worker


def state_name(job: Job) -> str:
    """The qless name of `job`'s state: a job put back by `timeout` and not handed out
    since is 'stalled' (waiting first in its queue), as in qless; a job waiting for a
    throttle lock is 'throttled' (held by the engine like a depends job)."""
    if job.state is JobState.READY:
        ext = qext(job)
        if ext is not None and 0 < ext.timed_out == job.reserves:
            return "stalled"
    elif job.state is JobState.DEPENDS:
        ext = qext(job)
        if ext is not None and ext.throttled_on:
            return "throttled"
    return QLESS_STATE[job.state]
