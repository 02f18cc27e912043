"""Operator moves shared by the beanstalkd admin verbs and the HTTP admin API.

Each one is what a protocol command does (the same engine operations, so the write-ahead
log and the event log record it), including the disk-space check made before changing
anything. Results are plain values; the protocol handler and the API word them. The
qless operator move is in core/admin_qless.py: the beanstalkd verbs import this module,
and a plain beanstalkd server does not load the qless extension.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from beanpod.core.conn import Conn
from beanpod.core.job import JobState, owner
from beanpod.core.tube import MAX_TUBE_NAME

if TYPE_CHECKING:
    from beanpod.core.engine import Engine
    from beanpod.core.job import Job
    from beanpod.core.tube import Tube

KICK_RECORD = 64  # room asked per kicked job (an update record)
ROOM_CHUNK = 4096  # room is asked for at most this many jobs at a time
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-+/;.$_()")


class Outcome(Enum):
    DONE = "done"
    NOT_FOUND = "not_found"  # no such job, or not in a state the move applies to
    NO_ROOM = "no_room"  # the WAL's disk is full: nothing changed
    HELD = "held"  # a worker or an extension (qless, Workq) holds the job
    DRAINING = "draining"  # drain mode (SIGUSR1): no new job, as put answers DRAINING


def valid_tube_name(name: str) -> bool:
    """beanstalkd's tube-name rule (1-200 of its characters, not starting with '-')."""
    return 0 < len(name) <= MAX_TUBE_NAME and name[0] != "-" and set(name) <= _NAME_CHARS


def kick(engine: Engine, conn: Conn | None, tube: Tube, bound: int, now: int) -> int:
    """`kick <bound>` on `tube`: kick only what the log has room for (as beanstalkd)."""
    if bound and engine.refuses(min(bound, ROOM_CHUNK) * KICK_RECORD):
        bound = 0
    return engine.kick(conn, tube, bound, now)


def kick_job(engine: Engine, conn: Conn | None, job_id: int, now: int) -> Outcome:
    """`kick-job <id>`: a buried or delayed job goes to ready."""
    if job_id in engine.jobs and engine.refuses():
        return Outcome.NO_ROOM
    return Outcome.DONE if engine.kick_job(conn, job_id, now) else Outcome.NOT_FOUND


def pause(engine: Engine, conn: Conn | None, name: str, delay_ms: int, now: int) -> Outcome:
    """`pause-tube <name> <delay>` (0 unpauses)."""
    if name in engine.tubes and engine.refuses():
        return Outcome.NO_ROOM
    return Outcome.DONE if engine.pause_tube(conn, name, delay_ms, now) else Outcome.NOT_FOUND


def delete(engine: Engine, job_id: int, now: int) -> Outcome:
    """`delete <id>` from no connection: ready, delayed, buried or held jobs; a job a
    worker holds is left alone (HELD)."""
    job = engine.jobs.get(job_id)
    if job is None:
        return Outcome.NOT_FOUND
    if job.state is JobState.RESERVED:
        return Outcome.HELD
    engine.delete(None, job_id, now)
    return Outcome.DONE


def bury(engine: Engine, conn: Conn, job_id: int, now: int) -> Outcome:
    """`reserve-job <id>` then `bury <id> <pri>` on `conn` (an operator's connection): a
    plain ready or delayed job is buried, its priority kept."""
    job = engine.jobs.get(job_id)
    if job is None or job.state not in (JobState.READY, JobState.DELAYED):
        return Outcome.NOT_FOUND
    if owner(job)[0] != "beanstalkd":
        return Outcome.HELD  # qless and Workq jobs fail through their own dialect
    if engine.refuses():
        return Outcome.NO_ROOM
    engine.take_out(job)
    engine.make_reserved(conn, job, now)
    engine.bury(conn, job_id, job.pri, now)
    return Outcome.DONE


def move(engine: Engine, job_id: int, target: str, now: int) -> tuple[Outcome, Job | None]:
    """Put a copy of a plain ready, delayed or buried job into tube `target` (ready, or
    delayed for the time it had left), then delete the original: what an operator does
    with `peek`, `put` and `delete`. The copy has a new id."""
    job = engine.jobs.get(job_id)
    if job is None or job.state not in (JobState.READY, JobState.DELAYED, JobState.BURIED):
        return Outcome.NOT_FOUND, None
    if owner(job)[0] != "beanstalkd":
        return Outcome.HELD, None
    if engine.draining:
        return Outcome.DRAINING, None
    if engine.refuses(len(job.body)):
        return Outcome.NO_ROOM, None
    delay = max(0, job.deadline - now) if job.state is JobState.DELAYED else 0
    copy = engine.put(None, engine.tube(target), job.pri, delay, job.ttr, job.body, now)
    engine.delete(None, job_id, now)
    return Outcome.DONE, copy


def operator_conn(engine: Engine) -> Conn:
    """A connection for the operator's moves that need one (bury): it watches nothing and
    is not counted among clients, like the connection qless keeps per worker."""
    return engine.detached_conn("operator")
