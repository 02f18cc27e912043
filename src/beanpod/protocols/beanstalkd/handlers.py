"""One handler per beanstalkd verb: `handler(session, command) -> reply bytes`.

A handler returns None when the connection parks (a blocking reserve) and `CLOSE` for
quit. Commands are counted after their arguments parse, as beanstalkd counts them.
Wire times are seconds; the engine works in milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from beanpod.core import admin
from beanpod.core.job import Job
from beanpod.core.waiters import DEADLINE_SOON, TIMED_OUT, ReserveOutcome
from beanpod.protocols.beanstalkd import commands as c
from beanpod.protocols.beanstalkd import inspect
from beanpod.protocols.beanstalkd import wire as w
from beanpod.protocols.beanstalkd.context import Context

CLOSE: Final = w.CLOSE  # sentinel reply: close the connection
Handler = Callable[[Context, tuple[Any, ...]], bytes | None]


class _Millis(dict[int, int]):
    """Seconds -> milliseconds, one shared int per distinct value: every job with TTR 60
    points at the same 60000 instead of holding its own 28-byte int."""

    def __missing__(self, seconds: int) -> int:
        millis = seconds * 1000
        if len(self) < 4096:
            self[seconds] = millis
        return millis


MILLIS: Final = _Millis()
# Final: compiled, a module constant is a C static, not a lookup in the module's dict.
PUT: Final = w.PUT
DELETE: Final = w.DELETE


def encode_outcome(outcome: ReserveOutcome) -> bytes:
    """The reply to a reserve: RESERVED with the job, TIMED_OUT or DEADLINE_SOON."""
    if outcome is TIMED_OUT:
        return w.TIMED_OUT
    if outcome is DEADLINE_SOON:
        return w.DEADLINE_SOON
    return w.reserved(outcome.id, outcome.body)


def put(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """put <pri> <delay> <ttr> <bytes>\\r\\n<data>\\r\\n"""
    d = s.dialect
    d.puts += 1
    engine, conn = d.engine, s.conn
    if not conn.producer:
        engine.set_producer(conn)
    if engine.draining:
        engine.allocate_id()  # beanstalkd has already made the job when it notices
        return d.failed(PUT, w.DRAINING)
    _, pri, delay, ttr, body = cmd
    journal = engine.journal  # engine.refuses(len(body)), inlined on the hottest path
    if journal is not None and not journal.room(len(body)):
        engine.allocate_id()  # beanstalkd spends the id before it finds no room
        return d.failed(PUT, w.OUT_OF_MEMORY)
    meter = engine.meter
    if meter is not None and meter.refuses(len(body), conn.use.jobs):
        return d.failed(PUT, w.OUT_OF_MEMORY)  # as beanstalkd out of memory: no id spent
    delay_ms = MILLIS[delay] if delay else 0  # most puts: no lookup
    job = engine.put(conn, conn.use, pri, delay_ms, MILLIS[ttr or 1], body, s.now)
    return b"INSERTED %d\r\n" % job.id  # w.inserted, inlined on the hottest path


def put_too_big(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """put whose <bytes> exceeds max-job-size: the body was read and discarded."""
    s.dialect.puts += 1
    return s.dialect.failed(w.PUT, w.JOB_TOO_BIG)


def put_trailing(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """put line with bytes after <bytes>: counted, then refused."""
    s.dialect.puts += 1
    return s.dialect.failed(w.PUT, w.BAD_FORMAT)


def put_bad_crlf(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """put whose body is not followed by CRLF (uses up a job id, as beanstalkd does)."""
    d = s.dialect
    d.puts += 1
    d.engine.set_producer(s.conn)
    d.engine.allocate_id()
    return d.failed(w.PUT, w.EXPECTED_CRLF)


def error(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """A line the parser rejected (BAD_FORMAT, UNKNOWN_COMMAND): not counted as a
    command, counted as an error of no verb (c.ERROR)."""
    return s.dialect.failed(c.ERROR, cmd[1])


def use(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """use <tube>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.USE] += 1
    return w.using(d.engine.use(s.conn, cmd[1]).name_bytes)


def reserve(s: Context, cmd: tuple[Any, ...]) -> bytes | None:
    """reserve\\r\\n"""
    d = s.dialect
    d.reserves += 1
    outcome = d.engine.reserve(s.conn, None, s.now, s.deliver)
    if type(outcome) is Job:  # w.reserved, inlined on the hottest path
        body = outcome.body
        return b"RESERVED %d %d\r\n%s\r\n" % (outcome.id, len(body), body)
    return None if outcome is None else encode_outcome(outcome)


def reserve_with_timeout(s: Context, cmd: tuple[Any, ...]) -> bytes | None:
    """reserve-with-timeout <seconds>\\r\\n"""
    d = s.dialect
    d.reserves_with_timeout += 1
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
    return d.failed(w.RESERVE_JOB, w.NOT_FOUND) if job is None else w.reserved(job.id, job.body)


def delete(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """delete <id>\\r\\n"""
    d = s.dialect
    d.deletes += 1
    return w.DELETED if d.engine.delete(s.conn, cmd[1], s.now) else d.failed(DELETE, w.NOT_FOUND)


def release(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """release <id> <pri> <delay>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.RELEASE] += 1
    _, job_id, pri, delay = cmd
    if job_id in s.conn.reserved and d.engine.refuses():
        return d.failed(w.RELEASE, w.OUT_OF_MEMORY)
    return (
        w.RELEASED
        if d.engine.release(s.conn, job_id, pri, delay * 1000, s.now)
        else d.failed(w.RELEASE, w.NOT_FOUND)
    )


def bury(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """bury <id> <pri>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.BURY] += 1
    if cmd[1] in s.conn.reserved and d.engine.refuses():
        return d.failed(w.BURY, w.OUT_OF_MEMORY)
    return (
        w.BURIED if d.engine.bury(s.conn, cmd[1], cmd[2], s.now) else d.failed(w.BURY, w.NOT_FOUND)
    )


def touch(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """touch <id>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.TOUCH] += 1
    return w.TOUCHED if d.engine.touch(s.conn, cmd[1], s.now) else d.failed(w.TOUCH, w.NOT_FOUND)


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
    return d.failed(w.IGNORE, w.NOT_IGNORED) if count is None else w.watching(count)


def kick(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """kick <bound>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.KICK] += 1
    kicked = admin.kick(d.engine, s.conn, s.conn.use, cmd[1], s.now)
    if d.audit is not None:
        d.audit("kick", conn=s.conn.id, tube=s.conn.use.name, bound=cmd[1], kicked=kicked)
    return w.kicked(kicked)


_ADMIN_REPLIES = {
    admin.Outcome.NOT_FOUND: w.NOT_FOUND,
    admin.Outcome.NO_ROOM: w.OUT_OF_MEMORY,
}


def kick_job(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """kick-job <id>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.KICK_JOB] += 1
    outcome = admin.kick_job(d.engine, s.conn, cmd[1], s.now)
    if outcome is admin.Outcome.DONE:
        if d.audit is not None:
            d.audit("kick-job", conn=s.conn.id, job=cmd[1])
        return w.KICKED
    return d.failed(w.KICK_JOB, _ADMIN_REPLIES[outcome])


def pause_tube(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """pause-tube <tube-name> <delay>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.PAUSE_TUBE] += 1
    _, name, delay = cmd
    outcome = admin.pause(d.engine, s.conn, name, delay * 1000, s.now)
    if outcome is admin.Outcome.DONE:
        if d.audit is not None:
            d.audit("pause-tube", conn=s.conn.id, tube=name, seconds=delay)
        return w.PAUSED
    return d.failed(w.PAUSE_TUBE, _ADMIN_REPLIES[outcome])


def quit_(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """quit\\r\\n"""
    return CLOSE


def qless_request(s: Context, cmd: tuple[Any, ...]) -> bytes | None:
    """qless <bytes>\\r\\n<json>\\r\\n (beanpod extension, protocols/beanstalkd/qless.py).
    That module imports the qless extension (~30 modules), which a plain beanstalkd client
    never needs: it loads here on first use, unless the server has loaded it already."""
    from beanpod.protocols.beanstalkd import qless

    return qless.qless(s, cmd)


def qless_too_big(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """qless <bytes> over max-job-size: the body was read and discarded."""
    return w.JOB_TOO_BIG


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
    w.QLESS: qless_request, c.QLESS_TOO_BIG: qless_too_big,  # beanpod extension
}  # fmt: skip
