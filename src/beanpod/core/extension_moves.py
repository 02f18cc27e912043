"""The moves qless and Workq need beyond the queue moves (core/ledger.py tells the
engine's layers)."""

from __future__ import annotations

from beanpod.core.conn import Conn
from beanpod.core.job import Job, JobExt
from beanpod.core.moves import Moves
from beanpod.core.timers import TTR_EXPIRY
from beanpod.core.tube import Tube


class ExtensionMoves(Moves):
    # ---- the extensions' moves ------------------------------------------------------------
    # What qless and Workq need beyond the queue moves (core/moves.py), so that no field
    # the engine owns is written and no timer armed outside it (tests/unit/test_architecture.py).

    def detached_conn(self, dialect: str, peer: str = "", since: int = 0, name: str = "") -> Conn:
        """A connection for work no client holds (a qless worker's locks, a Workq lease, an
        operator's bury): it watches nothing, is not counted among clients (nor kept in
        `clients`: its owner keeps it) and is never disconnected. `dialect`, `peer`,
        `since` and `name` tell the console who it is."""
        conn = Conn(self.next_conn_id, self.default_tube, peer, since, name, dialect)
        conn.watch = []
        self.next_conn_id += 1
        return conn

    def retube(self, job: Job, tube: Tube, counted: bool = False) -> bool:
        """Move a job that is in no queue to `tube` (its reference moves with it; an old
        tube left unused goes); False if it is there already. `counted`: the job counts
        as put into `tube` (stats-tube total-jobs), as a qless move does."""
        old = job.tube
        if old is tube:
            return False
        old.jobs -= 1
        job.tube = tube
        tube.jobs += 1
        tube.refs += 1
        if counted:
            tube.total_jobs += 1
        self.unref(old)
        return True

    def amend(
        self,
        job: Job,
        pri: int | None = None,
        delay: int | None = None,
        ttr: int | None = None,
        body: bytes | None = None,
    ) -> None:
        """Change what a job carries. `pri` only while it is in no queue (the heaps and
        the urgent counts read it when it is placed); `delay`, `ttr` and `body` any time
        (the next reservation reads the TTR; the memory cap counts the new body)."""
        if pri is not None:
            job.pri = pri
        if delay is not None:
            job.delay = delay
        if ttr is not None:
            job.ttr = ttr
        if body is not None:
            meter = self.meter
            if meter is not None:
                meter.removed(job)
            job.body = body
            if meter is not None:
                meter.added(job)

    def attach(self, job: Job, ext: JobExt) -> None:
        """Give a plain job an extension's extras (qless pop adopting a beanstalkd job)."""
        job.ext = ext

    def move_deadline(self, job: Job, deadline: int, kind: int = TTR_EXPIRY) -> None:
        """A reserved job's reservation now ends at `deadline` (touch, a qless lock
        renewal): its connection's soonest deadline is found again, and the timer of
        `kind` (the TTR expiry, or an extension's) armed for then."""
        job.deadline = deadline
        conn = job.reserver
        assert conn is not None
        conn.deadline_moved(job)
        self.timers.arm(deadline, kind, job)

    def count_delete(self, job: Job) -> None:
        """A delete command of another dialect removes `job` (stats-tube cmd-delete)."""
        job.tube.cmd_delete += 1

    def time_out(self, job: Job, now: int) -> None:
        """A reservation ran out of time: it ends, counted as a timeout (job, tube and
        engine) with a timeout event. The job is then in no queue: `expire` makes it
        ready, an extension's expire hook may finish it instead."""
        self.unreserve(job)
        job.timeouts += 1
        job.tube.timeouts += 1
        self.counts.job_timeouts += 1
        if self.events is not None:
            self.events.emit(now, "timeout", job.id, job.tube.name, None)

    def expire(self, job: Job, now: int) -> None:
        """A reservation ran out of time (the TTR_EXPIRY handler): it ends, counted as a
        timeout; an extension's expire hook (`expire_hooks`) may then place the job
        itself (a Workq job out of attempts fails), else it goes back to ready."""
        self.time_out(job, now)
        if job.ext is not None:
            for hook in self.expire_hooks:
                if hook(job, now):
                    return
        self.make_ready(job, now)
