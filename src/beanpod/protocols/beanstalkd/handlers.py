"""One handler per beanstalkd verb: `handler(session, command) -> reply bytes`.

A handler returns None when the connection parks (a blocking reserve) and `CLOSE` for
quit. Commands are counted after their arguments parse, as beanstalkd counts them.
Wire times are seconds; the engine works in milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beanpod.core.engine import Engine
from beanpod.core.job import Job
from beanpod.core.waiters import DEADLINE_SOON, TIMED_OUT, ReserveOutcome
from beanpod.protocols.beanstalkd import commands as c
from beanpod.protocols.beanstalkd import inspect, qless
from beanpod.protocols.beanstalkd import wire as w
from beanpod.protocols.beanstalkd.context import Context

KICK_RECORD = 64  # room asked per kicked job (an update record)
CLOSE = w.CLOSE  # sentinel reply: close the connection
Handler = Callable[[Context, tuple[Any, ...]], bytes | None]


class _Millis(dict[int, int]):
    """Seconds -> milliseconds, one shared int per distinct value: every job with TTR 60
    points at the same 60000 instead of holding its own 28-byte int."""

    def __missing__(self, seconds: int) -> int:
        millis = seconds * 1000
        if len(self) < 4096:
            self[seconds] = millis
        return millis


MILLIS = _Millis()
# Module globals: one lookup on the hottest paths.
PUT, DELETE, RESERVE, RESERVE_WITH_TIMEOUT = w.PUT, w.DELETE, w.RESERVE, w.RESERVE_WITH_TIMEOUT


def encode_outcome(outcome: ReserveOutcome) -> bytes:
    """The reply to a reserve: RESERVED with the job, TIMED_OUT or DEADLINE_SOON."""
    if outcome is TIMED_OUT:
        return w.TIMED_OUT
    if outcome is DEADLINE_SOON:
        return w.DEADLINE_SOON
    return w.reserved(outcome.id, outcome.body)


def _no_room(engine: Engine, nbytes: int = 0) -> bool:
    """With the WAL on: the disk cannot take the record, so answer OUT_OF_MEMORY before
    changing anything."""
    journal = engine.journal
    return journal is not None and not journal.room(nbytes)


def put(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """put <pri> <delay> <ttr> <bytes>\\r\\n<data>\\r\\n"""
    d = s.dialect
    d.cmd_counts[PUT] += 1
    engine, conn = d.engine, s.conn
    if not conn.producer:
        engine.set_producer(conn)
    if engine.draining:
        engine.allocate_id()  # beanstalkd has already made the job when it notices
        return w.DRAINING
    _, pri, delay, ttr, body = cmd
    journal = engine.journal
    if journal is not None and not journal.room(len(body)):
        engine.allocate_id()  # beanstalkd spends the id before it finds no room
        return w.OUT_OF_MEMORY
    if engine.meter is not None and engine.meter.refuses(len(body), conn.use.jobs):
        return w.OUT_OF_MEMORY  # as beanstalkd when it cannot allocate the job: no id spent
    job = engine.put(conn, conn.use, pri, MILLIS[delay], MILLIS[ttr or 1], body, s.now)
    return b"INSERTED %d\r\n" % job.id  # w.inserted, inlined on the hottest path


def put_too_big(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """put whose <bytes> exceeds max-job-size: the body was read and discarded."""
    s.dialect.cmd_counts[w.PUT] += 1
    return w.JOB_TOO_BIG


def put_trailing(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """put line with bytes after <bytes>: counted, then refused."""
    s.dialect.cmd_counts[w.PUT] += 1
    return w.BAD_FORMAT


def put_bad_crlf(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """put whose body is not followed by CRLF (uses up a job id, as beanstalkd does)."""
    d = s.dialect
    d.cmd_counts[w.PUT] += 1
    d.engine.set_producer(s.conn)
    d.engine.allocate_id()
    return w.EXPECTED_CRLF


def error(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """A line the parser rejected (BAD_FORMAT, UNKNOWN_COMMAND): not counted."""
    reply: bytes = cmd[1]
    return reply


def use(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """use <tube>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.USE] += 1
    return w.using(d.engine.use(s.conn, cmd[1]).name_bytes)


def reserve(s: Context, cmd: tuple[Any, ...]) -> bytes | None:
    """reserve\\r\\n"""
    d = s.dialect
    d.cmd_counts[RESERVE] += 1
    outcome = d.engine.reserve(s.conn, None, s.now, s.deliver)
    if type(outcome) is Job:  # w.reserved, inlined on the hottest path
        body = outcome.body
        return b"RESERVED %d %d\r\n%s\r\n" % (outcome.id, len(body), body)
    return None if outcome is None else encode_outcome(outcome)


def reserve_with_timeout(s: Context, cmd: tuple[Any, ...]) -> bytes | None:
    """reserve-with-timeout <seconds>\\r\\n"""
    d = s.dialect
    d.cmd_counts[RESERVE_WITH_TIMEOUT] += 1
    outcome = d.engine.reserve(s.conn, cmd[1] * 1000, s.now, s.deliver)
    if type(outcome) is Job:  # w.reserved, inlined on the hottest path
        body = outcome.body
        return b"RESERVED %d %d\r\n%s\r\n" % (outcome.id, len(body), body)
    return None if outcome is None else encode_outcome(outcome)


def reserve_job(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """reserve-job <id>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.RESERVE_JOB] += 1
    job = d.engine.reserve_job(s.conn, cmd[1], s.now)
    return w.NOT_FOUND if job is None else w.reserved(job.id, job.body)


def delete(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """delete <id>\\r\\n"""
    d = s.dialect
    d.cmd_counts[DELETE] += 1
    return w.DELETED if d.engine.delete(s.conn, cmd[1], s.now) else w.NOT_FOUND


def release(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """release <id> <pri> <delay>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.RELEASE] += 1
    _, job_id, pri, delay = cmd
    if job_id in s.conn.reserved and _no_room(d.engine):
        return w.OUT_OF_MEMORY
    return w.RELEASED if d.engine.release(s.conn, job_id, pri, delay * 1000, s.now) else w.NOT_FOUND


def bury(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """bury <id> <pri>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.BURY] += 1
    if cmd[1] in s.conn.reserved and _no_room(d.engine):
        return w.OUT_OF_MEMORY
    return w.BURIED if d.engine.bury(s.conn, cmd[1], cmd[2], s.now) else w.NOT_FOUND


def touch(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """touch <id>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.TOUCH] += 1
    return w.TOUCHED if d.engine.touch(s.conn, cmd[1], s.now) else w.NOT_FOUND


def watch(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """watch <tube>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.WATCH] += 1
    return w.watching(d.engine.watch(s.conn, cmd[1]))


def ignore(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """ignore <tube>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.IGNORE] += 1
    count = d.engine.ignore(s.conn, cmd[1])
    return w.NOT_IGNORED if count is None else w.watching(count)


def kick(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """kick <bound>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.KICK] += 1
    bound = cmd[1]
    if bound and _no_room(d.engine, min(bound, 4096) * KICK_RECORD):
        bound = 0  # like beanstalkd, kick only what the log has room for
    kicked = d.engine.kick(s.conn, s.conn.use, bound, s.now)
    if d.audit is not None:
        d.audit("kick", conn=s.conn.id, tube=s.conn.use.name, bound=cmd[1], kicked=kicked)
    return w.kicked(kicked)


def kick_job(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """kick-job <id>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.KICK_JOB] += 1
    if cmd[1] in d.engine.jobs and _no_room(d.engine):
        return w.OUT_OF_MEMORY
    kicked = d.engine.kick_job(s.conn, cmd[1], s.now)
    if d.audit is not None and kicked:
        d.audit("kick-job", conn=s.conn.id, job=cmd[1])
    return w.KICKED if kicked else w.NOT_FOUND


def pause_tube(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """pause-tube <tube-name> <delay>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.PAUSE_TUBE] += 1
    _, name, delay = cmd
    if name in d.engine.tubes and _no_room(d.engine):
        return w.OUT_OF_MEMORY
    paused = d.engine.pause_tube(s.conn, name, delay * 1000, s.now)
    if d.audit is not None and paused:
        d.audit("pause-tube", conn=s.conn.id, tube=name, seconds=delay)
    return w.PAUSED if paused else w.NOT_FOUND


def quit_(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """quit\\r\\n"""
    return CLOSE


HANDLERS: dict[bytes, Handler] = {
    w.PUT: put, c.PUT_TOO_BIG: put_too_big, c.PUT_TRAILING: put_trailing,
    c.PUT_BAD_CRLF: put_bad_crlf, c.ERROR: error, w.USE: use, w.RESERVE: reserve,
    w.RESERVE_WITH_TIMEOUT: reserve_with_timeout, w.RESERVE_JOB: reserve_job,
    w.DELETE: delete, w.RELEASE: release, w.BURY: bury, w.TOUCH: touch, w.WATCH: watch,
    w.IGNORE: ignore, w.KICK: kick, w.KICK_JOB: kick_job, w.PAUSE_TUBE: pause_tube,
    w.QUIT: quit_, w.PEEK: inspect.peek, w.PEEK_READY: inspect.peek_ready,
    w.PEEK_DELAYED: inspect.peek_delayed, w.PEEK_BURIED: inspect.peek_buried,
    w.STATS: inspect.stats, w.STATS_JOB: inspect.stats_job, w.STATS_TUBE: inspect.stats_tube,
    w.LIST_TUBES: inspect.list_tubes, w.LIST_TUBE_USED: inspect.list_tube_used,
    w.LIST_TUBES_WATCHED: inspect.list_tubes_watched,
    w.QLESS: qless.qless, c.QLESS_TOO_BIG: qless.too_big,  # beanpod extension
}  # fmt: skip
