"""`inspect` and its objects: job, jobs, scheduled-jobs, queue, queues, server.

Listings (jobs, scheduled-jobs, queues) are administrative: they sort the live entries
of one tube (or the tube names), O(n log k); per-job operations never do this.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import nsmallest
from typing import Any

from beanpod.core.job import Job
from beanpod.core.tube import Tube
from beanpod.core.workq.ext import attempts_of, to_workq_pri, uuid_of, workq_ext, workq_state
from beanpod.protocols.workq import args
from beanpod.protocols.workq import wire as w
from beanpod.protocols.workq.commands import Command
from beanpod.protocols.workq.context import Context

CLOSE = b""  # not sent: the session closes the connection (output limit)

Pairs = list[tuple[bytes, bytes]]


def job_record(job: Job) -> w.Record:
    """A job's keys in the reference order; `time` only for scheduled jobs. The payload
    is written raw on its line, as the reference does: read it using payload-size."""
    ext = workq_ext(job)
    body = job.body
    pairs: Pairs = [
        (b"name", job.tube.name_bytes),
        (b"ttr", b"%d" % job.ttr),
        (b"ttl", b"%d" % (ext.ttl if ext else 0)),
        (b"payload-size", b"%d" % len(body)),
        (b"payload", body),
        (b"max-attempts", b"%d" % (ext.max_attempts if ext else 0)),
        (b"attempts", b"%d" % attempts_of(job)),
        (b"max-fails", b"%d" % (ext.max_fails if ext else 0)),
        (b"fails", b"%d" % (ext.fails if ext else 0)),
        (b"priority", b"%d" % to_workq_pri(job.pri)),
        (b"state", b"%d" % workq_state(job)),
        (b"created", args.format_time(job.created)),
    ]
    if ext is not None and ext.scheduled:
        pairs.append((b"time", args.format_time(ext.scheduled)))
    return (uuid_of(job), pairs)


def queue_record(name: str, tube: Tube | None) -> w.Record:
    """A queue's lengths; a queue whose tube is gone (no jobs left) reads 0 and 0."""
    ready, scheduled = (len(tube.ready), len(tube.delayed)) if tube is not None else (0, 0)
    pairs = [(b"ready-len", b"%d" % ready), (b"scheduled-len", b"%d" % scheduled)]
    return (name.encode("ascii"), pairs)


def _job(s: Context, a: list[bytes]) -> bytes:
    """inspect job <id>\\r\\n"""
    job = s.dialect.workq.find(args.uuid(a[0]))
    return w.NOT_FOUND if job is None else w.inspect_reply([job_record(job)])


def _listing(
    s: Context, a: list[bytes], heap_of: Callable[[Tube], Any], key: Callable[[Any], Any]
) -> bytes:
    name = args.name(a[0])
    offset, limit = args.cursor(a[1]), args.limit(a[2])
    tube = s.dialect.engine.tubes.get(name)
    if tube is None:
        return w.inspect_reply([]) if s.dialect.workq.has_queue(name) else w.NOT_FOUND
    entries = nsmallest(offset + limit, heap_of(tube).live_items(), key=key)
    return w.inspect_reply(job_record(job) for _, job in entries[offset:])


def _jobs(s: Context, a: list[bytes]) -> bytes:
    """inspect jobs <name> <cursor-offset> <limit>\\r\\n"""
    return _listing(s, a, lambda t: t.ready, lambda e: e[0])  # lease order: (pri, id)


def _scheduled_jobs(s: Context, a: list[bytes]) -> bytes:
    """inspect scheduled-jobs <name> <cursor-offset> <limit>\\r\\n"""
    # The reference orders scheduled jobs by priority, then time, then creation.
    return _listing(s, a, lambda t: t.delayed, lambda e: (e[1].pri, e[0]))


def _queue(s: Context, a: list[bytes]) -> bytes:
    """inspect queue <name>\\r\\n"""
    name = args.name(a[0])
    if not s.dialect.workq.has_queue(name):
        return w.NOT_FOUND
    return w.inspect_reply([queue_record(name, s.dialect.engine.tubes.get(name))])


def _queues(s: Context, a: list[bytes]) -> bytes:
    """inspect queues <cursor-offset> <limit>\\r\\n"""
    offset, limit = args.cursor(a[0]), args.limit(a[1])
    tubes = s.dialect.engine.tubes
    names = sorted(tubes.keys() | s.dialect.workq.queues)[offset : offset + limit]
    return w.inspect_reply(queue_record(n, tubes.get(n)) for n in names)


def _server(s: Context, a: list[bytes]) -> bytes:
    """inspect server\\r\\n"""
    d = s.dialect
    clients = d.workq.clients + d.engine.counts.conns  # both dialects' connections
    pairs: Pairs = [
        (b"active-clients", b"%d" % clients),
        (b"evicted-jobs", b"%d" % d.workq.evicted),
        (b"started", args.format_time(d.started_at)),
    ]
    return w.inspect_reply([(w.SERVER, pairs)])


# object -> (argument count after the object, handler)
OBJECTS: dict[bytes, tuple[int, Callable[[Context, list[bytes]], bytes]]] = {
    w.JOB: (1, _job),
    w.JOBS: (3, _jobs),
    w.SCHEDULED_JOBS: (3, _scheduled_jobs),
    w.QUEUE: (1, _queue),
    w.QUEUES: (2, _queues),
    w.SERVER: (0, _server),
}


def inspect(s: Context, cmd: Command) -> bytes:
    """inspect <object> [<args>...]\\r\\n"""
    obj, rest = cmd.args[0], cmd.args[1:]
    entry = OBJECTS.get(obj)
    if entry is None:
        return w.client_error(w.UNKNOWN_COMMAND)
    count, handler = entry
    if len(rest) != count:
        return w.client_error(w.INVALID_ARGS)
    reply = handler(s, rest)
    s.batch_bytes += len(reply)  # pipelined inspects multiply payloads: cap a batch's output
    return reply if s.batch_bytes <= s.dialect.output_limit else CLOSE
