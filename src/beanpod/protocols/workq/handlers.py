"""One handler per Workq verb: `handler(session, command) -> reply bytes`, or None when
the connection parks (lease, run, result) until `session.deliver` answers it.

`handle` dispatches and turns refusals into error replies. Priorities, TTR and TTL reach
the engine unchanged in milliseconds; priorities are mapped by core.workq.ext.
"""

from __future__ import annotations

from collections.abc import Callable

from beanpod.core import workq as core
from beanpod.core.job import Job
from beanpod.core.waiters import TIMED_OUT, ReserveOutcome
from beanpod.core.workq.ext import uuid_of
from beanpod.protocols.workq import args
from beanpod.protocols.workq import wire as w
from beanpod.protocols.workq.commands import Command, Parsed, Rejected
from beanpod.protocols.workq.context import Context
from beanpod.protocols.workq.inspect import inspect

Handler = Callable[[Context, Command], bytes | None]


def handle(s: Context, cmd: Parsed) -> bytes | None:
    """Run one parsed command; refusals become `-CLIENT-ERROR`, `-NOT-FOUND`... replies."""
    if isinstance(cmd, Rejected):
        return cmd.reply
    try:
        return HANDLERS[cmd.verb](s, cmd)
    except args.BadArg as exc:
        return w.client_error(exc.text)
    except core.WorkqError as exc:
        return _refusal(exc.reason)


def _refusal(reason: str) -> bytes:
    if reason == core.NOT_FOUND:
        return w.NOT_FOUND
    if reason in (core.DRAINING, core.NO_ROOM, core.OUT_OF_MEMORY):
        return w.server_error(reason)
    return w.client_error(reason)


def encode_result(outcome: core.WaitOutcome) -> bytes:
    """The reply to run/result: the result, -TIMEOUT or -NOT-FOUND."""
    if isinstance(outcome, tuple):
        return w.result_reply(*outcome)
    return w.TIMEOUT if outcome == core.TIMEOUT else w.NOT_FOUND


def encode_lease(outcome: ReserveOutcome) -> bytes:
    if outcome is TIMED_OUT:
        return w.TIMEOUT
    job: Job = outcome
    return w.lease_reply(uuid_of(job), job.tube.name_bytes, job.ttr, job.body)


def _payload(cmd: Command) -> bytes:
    assert cmd.payload is not None
    return cmd.payload


def add(s: Context, cmd: Command) -> bytes:
    """add <id> <name> <ttr> <ttl> <payload-size> [-priority=<value>] [-max-attempts=<value>] [-max-fails=<value>]\\r\\n<payload-bytes>\\r\\n"""  # noqa: E501
    a = cmd.args
    uuid, name, ttr, ttl = args.uuid(a[0]), args.name(a[1]), args.ttr(a[2]), args.ttl(a[3])
    pri, max_attempts, max_fails = args.job_flags(cmd.flags)
    s.dialect.workq.add(
        s.conn, uuid, name, ttr, ttl, _payload(cmd), s.now, pri, max_attempts, max_fails
    )
    return w.OK


def schedule(s: Context, cmd: Command) -> bytes:
    """schedule <id> <name> <ttr> <ttl> <time> <payload-size> [-priority=<value>] [-max-attempts=<value>] [-max-fails=<value>]\\r\\n<payload-bytes>\\r\\n"""  # noqa: E501
    a = cmd.args
    uuid, name, ttr, ttl = args.uuid(a[0]), args.name(a[1]), args.ttr(a[2]), args.ttl(a[3])
    at = args.utc_time(a[4])
    if at + ttl <= s.now:
        raise args.BadArg(w.INVALID_TIME)  # it would expire before it could run
    pri, max_attempts, max_fails = args.job_flags(cmd.flags)
    s.dialect.workq.add(
        s.conn, uuid, name, ttr, ttl, _payload(cmd), s.now, pri, max_attempts, max_fails, at
    )
    return w.OK


def run(s: Context, cmd: Command) -> None:
    """run <id> <name> <ttr> <wait-timeout> <payload-size> [-priority=<value>]\\r\\n<payload-bytes>\\r\\n"""  # noqa: E501
    a = cmd.args
    uuid, name, ttr = args.uuid(a[0]), args.name(a[1]), args.ttr(a[2])
    wait = args.wait_timeout(a[3])
    pri = args.job_flags(cmd.flags)[0]
    s.wait = s.dialect.workq.run(
        s.conn, uuid, name, ttr, wait, _payload(cmd), s.now,
        lambda outcome: s.deliver(encode_result(outcome)), pri,
    )  # fmt: skip
    return None  # always parks: even a wait-timeout of 0 first lets a parked lease take it


def result(s: Context, cmd: Command) -> bytes | None:
    """result <id> <wait-timeout>\\r\\n"""
    uuid, wait = args.uuid(cmd.args[0]), args.wait_timeout(cmd.args[1])
    outcome = s.dialect.workq.result(
        uuid, wait, s.now, lambda outcome: s.deliver(encode_result(outcome))
    )
    if isinstance(outcome, core.Wait):
        s.wait = outcome
        return None
    return encode_result(outcome)


def lease(s: Context, cmd: Command) -> bytes | None:
    """lease <name>... <wait-timeout>\\r\\n"""
    wait = args.wait_timeout(cmd.args[-1])  # checked before the names, as the reference
    names = list(dict.fromkeys(_lease_names(s, cmd.args[:-1])))
    outcome = s.dialect.workq.lease(
        s.conn, names, wait, s.now, lambda outcome: s.deliver(encode_lease(outcome))
    )
    return None if outcome is None else encode_lease(outcome)


def _lease_names(s: Context, raws: list[bytes]) -> list[str]:
    """The names, checked in order; as in the reference, the valid names before an
    invalid one still become queues."""
    names: list[str] = []
    for raw in raws:
        try:
            names.append(args.name(raw))
        except args.BadArg:
            for name in names:
                s.dialect.workq.keep_queue(name)
            raise
    return names


def complete(s: Context, cmd: Command) -> bytes:
    """complete <id> <result-size>\\r\\n<result-bytes>\\r\\n"""
    s.dialect.workq.complete(s.conn, args.uuid(cmd.args[0]), _payload(cmd), s.now)
    return w.OK


def fail(s: Context, cmd: Command) -> bytes:
    """fail <id> <result-size>\\r\\n<result-bytes>\\r\\n"""
    s.dialect.workq.fail(s.conn, args.uuid(cmd.args[0]), _payload(cmd), s.now)
    return w.OK


def delete(s: Context, cmd: Command) -> bytes:
    """delete <id>\\r\\n"""
    uuid, d = args.uuid(cmd.args[0]), s.dialect
    if d.audit is not None:
        _audit_delete(s, uuid)
    d.workq.delete(s.conn, uuid, s.now)
    return w.OK


def _audit_delete(s: Context, uuid: bytes) -> None:
    """--audit-log: deleting a job another connection holds is an admin act."""
    job = s.dialect.workq.find(uuid)
    if job is not None and job.reserver is not None and job.reserver is not s.conn:
        assert s.dialect.audit is not None
        s.dialect.audit(
            "delete-reserved", conn=s.conn.id, job=uuid.decode(), holder=job.reserver.id
        )


HANDLERS: dict[bytes, Handler] = {
    w.ADD: add, w.SCHEDULE: schedule, w.RUN: run, w.RESULT: result, w.LEASE: lease,
    w.COMPLETE: complete, w.FAIL: fail, w.DELETE: delete, w.INSPECT: inspect,
}  # fmt: skip
