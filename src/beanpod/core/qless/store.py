"""The qless state on one engine: jid index, known queues, workers, failure groups, tags,
tracked and completed jobs, configuration and statistics.

Feature modules (put, pop, complete, fail, locks, cancel, deps, tags, track, recurring,
workers, config, stats, history, expiry) are functions over this object, as qless-core
has one Lua file per feature. Every operation takes `now` in engine milliseconds and
first fires the engine timers due by then, so lazily-evaluated qless rules (scheduled
jobs, lock expiry) are observed exactly at `now`; recurring children are spawned by pop
and peek, as in qless.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from beanpod.core.conn import Conn
from beanpod.core.job import Job, JobState
from beanpod.core.journal import MAX_STATE_KEY
from beanpod.core.qless import cancel, channels, locks, moves, restore
from beanpod.core.qless.channels import Channels
from beanpod.core.qless.config import Config
from beanpod.core.qless.errors import QlessError, foreign, missing
from beanpod.core.qless.ext import QlessExt, qext
from beanpod.core.qless.history import append as append_history
from beanpod.core.qless.names import (
    CONFIG_STATE,
    LOCK_DUE,
    QUEUE_STATE,
    REGISTRY_STATE,
    SCHED_DUE,
    STATS_STATE,
    WORKER_SAVE_MS,
    WORKER_STATE,
    plain_id,
)
from beanpod.core.qless.queue_info import QueueInfo
from beanpod.core.qless.stats import Stats
from beanpod.core.qless.throttles import Throttle
from beanpod.core.qless.timeline import Timeline
from beanpod.core.tube import MAX_TUBE_NAME

if TYPE_CHECKING:
    from beanpod.core.engine import Engine

_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-+/;.$_()")


class Qless:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.jobs: dict[str, Job] = {}  # jid -> job (qless jobs and recurring templates)
        self.queues: dict[str, QueueInfo] = {}  # first-seen order
        self.workers: OrderedDict[str, int] = OrderedDict()  # name -> last seen, oldest first
        self.worker_saved: dict[str, int] = {}  # name -> last-seen time journalled last
        self.conns: dict[str, Conn] = {}  # the engine connection holding a worker's locks
        self.groups: dict[str, OrderedDict[str, Job]] = {}  # failed jids, oldest first
        self.tags: dict[str, dict[str, int]] = {}  # tag -> {jid: when tagged (ms)}
        self.tracked: dict[str, None] = {}
        self.completed: OrderedDict[str, Job] = OrderedDict()  # oldest completion first
        self.config = Config()
        self.channels = Channels()  # pub/sub (events)
        self.throttles: dict[str, Throttle] = {}  # with settings, locks or waiters
        self.stats = Stats()
        self.rotation: dict[str, int] = {}  # worker -> next starting queue (round-robin pop)
        self.restoring = False  # reattaching after a WAL restore: nothing new to journal
        self.registry_logged = False  # the log holds REGISTRY_STATE
        self.timeline = Timeline()  # ready keys of past instants (recurring children)
        self._install()

    def _install(self) -> None:
        engine = self.engine
        engine.timer_handlers[LOCK_DUE] = lambda job, now: locks.lock_due(self, job, now)
        engine.timer_handlers[SCHED_DUE] = lambda job, now: moves.scheduled_due(self, job, now)
        engine.destroy_hooks.append(lambda job, now: cancel.forget(self, job, now))
        engine.kick_hooks.append(lambda job, now: cancel.kicked(self, job, now))

    # ---- time and lookups --------------------------------------------------------------

    def at(self, now: int) -> None:
        """Fire every engine timer due by `now` (scheduled jobs, locks, recurring)."""
        self.timeline.advance(now, self.engine.next_id)
        self.engine.tick(now)

    def find(self, jid: str) -> Job | None:
        """The job named `jid`: a qless job, or a beanstalkd-put job named
        `beanstalkd:<id>` (a decimal jid is a qless name like any other)."""
        job = self.jobs.get(jid)
        if job is None and (job_id := plain_id(jid)) is not None:
            job = self.engine.jobs.get(job_id)
            if job is not None and job.ext is not None:
                return None  # jobs with extras are named by their own id (jid, uuid)
        return job

    def require(self, fn: str, jid: str) -> Job:
        """The qless job `jid`; a beanstalkd-put job only once qless pop adopted it."""
        job = self.find(jid)
        if job is None or job.state is JobState.RECUR:
            raise missing(fn, jid)
        if job.ext is None:
            raise foreign(fn, jid)
        return job

    def queue(self, name: str, now: int) -> QueueInfo:
        """The known queue `name`, registered on first use, first seen at `now` (a valid
        tube name)."""
        info = self.queues.get(name)
        if info is None:
            check_queue_name(name)
            info = self.queues[name] = QueueInfo(name, self.engine, now)
            if not self.restoring:  # known until queue.forget, as in qless-core
                self.save_state(QUEUE_STATE + name, now)
        return info

    def conn_for(self, worker: str, now: int) -> Conn:
        """The engine connection that holds `worker`'s locks (never disconnected), made
        at `now` when the worker first takes one."""
        conn = self.conns.get(worker)
        if conn is None:
            conn = self.engine.detached_conn("qless", since=now, name=worker)
            self.conns[worker] = conn
        return conn

    def reattach(self, now: int) -> int:
        """After a WAL restore: rebuild the qless indexes (see qless/restore.py)."""
        return restore.reattach(self, now)

    def touch_worker(self, worker: str, now: int) -> None:
        self.workers[worker] = now
        self.workers.move_to_end(worker)
        if self.engine.journal is not None:
            saved = self.worker_saved.get(worker)
            if saved is None or now - saved >= WORKER_SAVE_MS:
                self.worker_saved[worker] = now
                self.save_state(WORKER_STATE + worker, now)
                if not self.registry_logged:  # a restore then trusts the registry
                    self.registry_logged = True
                    self.save_state(REGISTRY_STATE, 1)

    def forget_worker(self, worker: str) -> None:
        """Drop `worker` from the registry (deregistered, or not seen for too long)."""
        self.workers.pop(worker, None)
        if self.worker_saved.pop(worker, None) is not None:
            self.save_state(WORKER_STATE + worker, None)

    def set_config(self, key: str, value: Any) -> None:
        """config.set (`value` not None) / config.unset (None), journalled."""
        if value is None:
            self.config.unset(key)
            channels.log(self, event="config_unset", option=key)
        else:
            self.config.set(key, value)
            channels.log(self, option=key, event="config_set", value=value)
        self.stats.history_days = int(self.config.number("stats-history", 30))
        self.save_state(CONFIG_STATE + key, value)

    def flush_stats(self) -> None:
        """Journal the statistics bins changed since the last flush (end of each call)."""
        dirty, dropped = self.stats.take_changes()
        if self.engine.journal is None:
            return
        for queue, day in dropped:
            self.save_state(f"{STATS_STATE}{day}/{queue}", None)
        for queue, day, bin_ in dirty:
            self.save_state(f"{STATS_STATE}{day}/{queue}", bin_.to_state())

    # ---- effects -----------------------------------------------------------------------

    def save(self, job: Job) -> None:
        """Journal `job`'s current image (state and extras) when the WAL is on."""
        journal = self.engine.journal
        if journal is not None and job.id in self.engine.jobs:
            journal.record_update(job)

    def save_state(self, key: str, value: Any) -> None:
        """Journal a named state (JSON `value`; None removes it) when the WAL is on."""
        journal = self.engine.journal
        if journal is not None and len(key.encode()) <= MAX_STATE_KEY:  # else: not kept
            raw = b"" if value is None else json.dumps(value, separators=(",", ":")).encode()
            journal.record_state(key, raw)

    def emit(self, caller: Conn | None, now: int, event: str, job: Job, **extra: Any) -> None:
        """An event of `job` for the event log, naming the connection `caller`."""
        events = self.engine.events
        if events is not None:
            cid = None if caller is None else caller.id
            events.emit(now, event, job.id, job.tube.name, cid, **extra)

    def history(self, job: Job, now: int, what: str, **extra: Any) -> None:
        ext = qext(job)
        if ext is not None:
            self.history_of(ext, now, what, **extra)

    def history_of(self, ext: QlessExt, now: int, what: str, **extra: Any) -> None:
        append_history(self, ext, now, what, extra)


def check_queue_name(name: str) -> None:
    """qless queues are beanstalkd tubes, so they follow tube-name rules."""
    ok = 0 < len(name) <= MAX_TUBE_NAME and name[0] != "-" and set(name) <= _NAME_CHARS
    if not ok:
        raise QlessError(f"Put(): queue name {name!r} is not a valid tube name")
