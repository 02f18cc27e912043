"""Hypothesis strategies for random event logs, written through the real EventWriter."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from beanpod.events.writer import EventWriter

BASE_MS = 1_735_772_400_000  # 2025-01-01T23:00:00Z: logs cross UTC midnights
QUEUES = ("default", "emails", "video")
CONNS = (1, 2, 3, 4)
WORKERS = (None, "alpha", "beta")
GROUPS = (None, "oom", "bad-input")
MESSAGES = (None, "boom", "try later")
OUTCOMES = (
    "delete", "complete", "release", "release_delayed", "timeout", "bury_kick", "fail",
    "fail_retry", "touch_delete", "open",
)  # fmt: skip
# Durations that exercise every qless unit: ms, seconds, minutes, hours, days, 7+ days.
DURATIONS = st.one_of(
    st.integers(0, 2_500),
    st.sampled_from([0, 999, 1_000, 59_999, 60_000, 3_599_999, 3_600_000, 86_399_999,
                     86_400_000, 604_799_999, 604_800_000]),
    st.integers(0, 2 * 86_400_000),
)  # fmt: skip


@dataclass
class Step:
    """One reservation of a job: wait before it, run length, outcome and who did it."""

    gap: int
    run: int
    outcome: str
    conn: int
    worker: str | None
    group: str | None
    message: str | None


@dataclass
class JobScript:
    queue: str
    start: int
    delay: int
    put_conn: int | None
    steps: list[Step]
    ending: str  # "none", "evict", "delete_ready", "kick_delayed"


steps = st.builds(
    Step, gap=DURATIONS, run=DURATIONS, outcome=st.sampled_from(OUTCOMES),
    conn=st.sampled_from(CONNS), worker=st.sampled_from(WORKERS),
    group=st.sampled_from(GROUPS), message=st.sampled_from(MESSAGES),
)  # fmt: skip
job_scripts = st.builds(
    JobScript, queue=st.sampled_from(QUEUES), start=st.integers(0, 3 * 3_600_000),
    delay=st.sampled_from([0, 0, 1_500, 120_000]), put_conn=st.sampled_from((None, *CONNS)),
    steps=st.lists(steps, max_size=4),
    ending=st.sampled_from(["none", "none", "evict", "delete_ready", "kick_delayed"]),
)  # fmt: skip


def job_events(job: int, script: JobScript) -> list[tuple[int, str, dict[str, Any]]]:
    """The job's events (ts, event, fields) in the order they happen."""
    t = BASE_MS + script.start
    q = script.queue
    out: list[tuple[int, str, dict[str, Any]]] = []

    def add(event: str, conn: int | None, **extra: Any) -> None:
        out.append((t, event, {"job": job, "queue": q, "conn": conn, **extra}))

    add("put", script.put_conn, pri=10, delay_ms=script.delay, ttr_ms=60_000, bytes=5, uuid=None)
    if script.ending == "kick_delayed" and script.delay:
        add("kick", 1, **{"from": "delayed"})
    for s in script.steps:
        t += s.gap
        add("reserve", s.conn, worker=s.worker, peer=f"10.0.0.{s.conn}:4000")
        t += s.run
        if s.outcome == "open":
            return out
        if s.outcome in ("delete", "touch_delete"):
            if s.outcome == "touch_delete":
                add("touch", s.conn)
            add("delete", s.conn, state="reserved")
            return out
        if s.outcome == "complete":
            add("complete", s.conn, bytes=3)
            return out
        if s.outcome.startswith("release"):
            add("release", s.conn, pri=10, delay_ms=0 if s.outcome == "release" else 5_000)
        elif s.outcome == "timeout":
            add("timeout", None)
        elif s.outcome == "bury_kick":
            add("bury", s.conn, pri=10)
            t += s.gap
            add("kick", s.conn, **{"from": "buried"})
        else:
            add("fail", s.conn, group=s.group, message=s.message, bytes=None)
            if s.outcome == "fail":
                return out
            add("release", s.conn, pri=10, delay_ms=1_000)
    if script.ending == "evict":
        t += 1_000
        add("evict", None)
    elif script.ending == "delete_ready":
        add("delete", script.put_conn, state="ready")
    return out


@st.composite
def event_logs(draw: st.DrawFn) -> dict[str, Any]:
    """A log: job scripts, pauses, file rotation limits and whether the last line is torn."""
    return {
        "jobs": draw(st.lists(job_scripts, min_size=1, max_size=12)),
        "pauses": draw(st.lists(st.tuples(st.sampled_from(QUEUES), st.integers(0, 4 * 3_600_000)),
                                max_size=2)),
        "max_file_bytes": draw(st.sampled_from([400, 2_000, 1 << 20])),
        "max_file_age_ms": draw(st.sampled_from([600_000, 3_600_000])),
        "flush_every": draw(st.integers(1, 7)),
        "torn": draw(st.booleans()),
    }  # fmt: skip


def _in_namespace(fields: dict[str, Any], namespace: int) -> dict[str, Any]:
    """Job ids, queue names and conns of log number ``namespace`` (0: unchanged)."""
    if namespace == 0:
        return fields
    job, conn = fields["job"], fields["conn"]
    return {**fields, "job": None if job is None else job + namespace * 100_000,
            "queue": f"n{namespace}.{fields['queue']}",
            "conn": None if conn is None else conn + namespace * 100}  # fmt: skip


def write_log(directory: Path, log: dict[str, Any], namespace: int = 0) -> int:
    """Write the log (events sorted by ts, each job in its own order); return event count.

    Logs written with different ``namespace`` share no job id, queue or conn, so their
    tables are independent: one Spark run can check several logs at once.
    """
    events: list[tuple[int, int, int, str, dict[str, Any]]] = []
    for job, script in enumerate(log["jobs"], start=1):
        for i, (ts, event, fields) in enumerate(job_events(job, script)):
            events.append((ts, job, i, event, _in_namespace(fields, namespace)))
    for i, (queue, offset) in enumerate(log["pauses"]):
        pause = {"job": None, "queue": queue, "conn": 9, "delay_ms": 1_000}
        events.append((BASE_MS + offset, 0, i, "pause", _in_namespace(pause, namespace)))
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    writer = EventWriter(directory, log["max_file_bytes"], log["max_file_age_ms"])
    for n, (ts, _, _, event, fields) in enumerate(events, start=1):
        writer.append({"v": 1, "ts": ts, "event": event, **fields})
        if n % log["flush_every"] == 0:
            writer.flush()
    writer.close()
    if log["torn"]:
        newest = max(directory.glob("date=*/*.jsonl"), key=lambda p: p.name)
        with open(newest, "ab") as f:
            f.write(b'{"v":1,"ts":1735772400000,"event":"put","job":99999,"queu')
    return len(events)
