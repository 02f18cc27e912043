"""Handlers that look without changing: peek*, stats*, list-*.

Times are shown in whole seconds. The engine clock has millisecond resolution and
beanstalkd's nanosecond resolution, so a remaining time is shown as if a moment had
already passed (5000 ms left shows 4, as beanstalkd shows 4.999999 s as 4).
"""

from __future__ import annotations

from typing import Any

from beanpod.core.job import STATE_NAMES, Job, JobState
from beanpod.protocols.beanstalkd import wire as w
from beanpod.protocols.beanstalkd import yaml
from beanpod.protocols.beanstalkd.context import COUNTED, Context

_TIMED_STATES = (JobState.RESERVED, JobState.DELAYED)


def _found(s: Context, job: Job) -> bytes:
    """FOUND with the body; CLOSE once this batch's peeks pass the output limit (a
    pipeline of peeks at a big job multiplies it: 8 bytes in, the body out)."""
    reply = w.found(job.id, job.body)
    s.batch_bytes += len(reply)
    return reply if s.batch_bytes <= s.dialect.output_limit else w.CLOSE


def _seconds_left(deadline: int, now: int) -> int:
    return max(0, (deadline - now - 1) // 1000)


def peek(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """peek <id>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.PEEK] += 1
    job = d.engine.peek(cmd[1])
    return d.failed(w.PEEK, w.NOT_FOUND) if job is None else _found(s, job)


def peek_ready(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """peek-ready\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.PEEK_READY] += 1
    job = d.engine.peek_ready(s.conn.use)
    return d.failed(w.PEEK_READY, w.NOT_FOUND) if job is None else _found(s, job)


def peek_delayed(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """peek-delayed\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.PEEK_DELAYED] += 1
    job = d.engine.peek_delayed(s.conn.use)
    return d.failed(w.PEEK_DELAYED, w.NOT_FOUND) if job is None else _found(s, job)


def peek_buried(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """peek-buried\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.PEEK_BURIED] += 1
    job = d.engine.peek_buried(s.conn.use)
    return d.failed(w.PEEK_BURIED, w.NOT_FOUND) if job is None else _found(s, job)


def stats_job(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """stats-job <id>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.STATS_JOB] += 1
    job = d.engine.peek(cmd[1])
    if job is None:
        return d.failed(w.STATS_JOB, w.NOT_FOUND)
    now = s.now
    left = _seconds_left(job.deadline, now) if job.state in _TIMED_STATES else 0
    return w.ok(
        yaml.mapping(
            (
                (b"id", job.id),
                (b"tube", job.tube.name_bytes),
                (b"state", STATE_NAMES[job.state]),
                (b"pri", job.pri),
                (b"age", (now - job.created) // 1000),
                (b"delay", job.delay // 1000),
                (b"ttr", job.ttr // 1000),
                (b"time-left", left),
                (b"file", d.info.job_file(job)),
                (b"reserves", job.reserves),
                (b"timeouts", job.timeouts),
                (b"releases", job.releases),
                (b"buries", job.buries),
                (b"kicks", job.kicks),
            )
        )
    )


def stats_tube(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """stats-tube <tube>\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.STATS_TUBE] += 1
    tube = d.engine.tubes.get(cmd[1])
    if tube is None:
        return d.failed(w.STATS_TUBE, w.NOT_FOUND)
    left = _seconds_left(tube.pause_until, s.now) if tube.pause_ms else 0
    return w.ok(
        yaml.mapping(
            (
                (b"name", tube.name_bytes),
                (b"current-jobs-urgent", tube.urgent),
                (b"current-jobs-ready", len(tube.ready)),
                (b"current-jobs-reserved", tube.reserved),
                (b"current-jobs-delayed", len(tube.delayed)),
                (b"current-jobs-buried", len(tube.buried)),
                (b"total-jobs", tube.total_jobs),
                (b"current-using", tube.using),
                (b"current-watching", tube.watching),
                (b"current-waiting", tube.waiting),
                (b"cmd-delete", tube.cmd_delete),
                (b"cmd-pause-tube", tube.cmd_pause),
                (b"pause", tube.pause_ms // 1000),
                (b"pause-time-left", left),
            )
        )
    )


def stats(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """stats\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.STATS] += 1
    engine, info, n = d.engine, d.info, d.engine.counts
    utime, stime = info.rusage()
    oldest, current, migrated, written, max_size = info.binlog_stats()
    pairs: list[tuple[bytes, bytes | int | str]] = [
        (b"current-jobs-urgent", n.urgent),
        (b"current-jobs-ready", n.ready),
        (b"current-jobs-reserved", n.reserved),
        (b"current-jobs-delayed", n.delayed),
        (b"current-jobs-buried", n.buried),
    ]
    counts = d.command_counts()
    pairs.extend((key, counts[verb]) for verb, key in COUNTED)
    pairs += [
        (b"job-timeouts", n.job_timeouts),
        (b"total-jobs", n.total_jobs),
        (b"max-job-size", d.max_job_size),
        (b"current-tubes", len(engine.tubes)),
        (b"current-connections", n.conns),
        (b"current-producers", n.producers),
        (b"current-workers", n.workers),
        (b"current-waiting", n.waiting),
        (b"total-connections", n.total_connections),
        (b"pid", info.pid),
        (b"version", b'"' + info.version.encode() + b'"'),
        (b"rusage-utime", _rusage(utime)),
        (b"rusage-stime", _rusage(stime)),
        (b"uptime", info.uptime(s.now)),
        (b"binlog-oldest-index", oldest),
        (b"binlog-current-index", current),
        (b"binlog-records-migrated", migrated),
        (b"binlog-records-written", written),
        (b"binlog-max-size", max_size),
        (b"draining", b"true" if engine.draining else b"false"),
        (b"id", info.instance_id),
        (b"hostname", yaml.scalar(info.hostname)),
        (b"os", yaml.scalar(info.os_name)),
        (b"platform", yaml.scalar(info.platform)),
    ]
    pairs += info.extra_stats()
    return w.ok(yaml.mapping(pairs))


def _rusage(seconds: float) -> bytes:
    micros = round(seconds * 1_000_000)
    return b"%d.%06d" % divmod(micros, 1_000_000)


def list_tubes(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """list-tubes\\r\\n"""
    d = s.dialect
    d.cmd_counts[w.LIST_TUBES] += 1
    return w.ok(yaml.sequence(t.name_bytes for t in d.engine.tube_list))


def list_tube_used(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """list-tube-used\\r\\n"""
    s.dialect.cmd_counts[w.LIST_TUBE_USED] += 1
    return w.using(s.conn.use.name_bytes)


def list_tubes_watched(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """list-tubes-watched\\r\\n"""
    s.dialect.cmd_counts[w.LIST_TUBES_WATCHED] += 1
    return w.ok(yaml.sequence(t.name_bytes for t in s.conn.watch))
