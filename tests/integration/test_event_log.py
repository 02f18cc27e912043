"""`beanpod serve --events DIR`: lifecycle events from a real workload reach the log."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import greenstalk

from tests.support.servers import SubprocessServer


def read_events(directory: Path) -> list[dict[str, Any]]:
    events = []
    for path in sorted(directory.glob("date=*/*.jsonl")):
        events += [json.loads(line) for line in path.read_text().splitlines() if line]
    return events


def test_workload_events_are_logged_in_order(tmp_path: Path) -> None:
    events_dir = tmp_path / "events"
    server = SubprocessServer(["--events", str(events_dir)]).start()
    try:
        with greenstalk.Client(("127.0.0.1", server.port), use="jobs", watch="jobs") as c:
            host, port = c._sock.getsockname()[:2]
            local = f"{host}:{port}"
            first = c.put("a", priority=5, ttr=1)
            second = c.put("b", delay=0)
            job = c.reserve()
            c.release(job, priority=7, delay=0)
            job = c.reserve()
            c.bury(job, priority=9)
            c.kick(1)
            job = c.reserve()
            c.delete(job)
            c.reserve()  # `second`, still reserved when the server stops
            c.pause_tube("jobs", 1)
    finally:
        server.stop()  # SIGTERM: the buffered events are flushed on shutdown
    events = read_events(events_dir)
    kinds = [(e["event"], e["job"]) for e in events]
    assert kinds == [
        ("put", first), ("put", second), ("reserve", first), ("release", first),
        ("reserve", first), ("bury", first), ("kick", first), ("reserve", first),
        ("delete", first), ("reserve", second), ("pause", None),
    ]  # fmt: skip
    by_kind = {e["event"]: e for e in events}
    assert by_kind["put"]["queue"] == "jobs" and by_kind["put"]["bytes"] == 1
    assert by_kind["release"]["pri"] == 7 and by_kind["release"]["delay_ms"] == 0
    assert by_kind["kick"]["from"] == "buried"
    assert by_kind["reserve"]["peer"] == local  # names a worker that gives no name
    assert by_kind["delete"]["state"] == "reserved"
    assert by_kind["pause"]["delay_ms"] == 1000
    assert all(e["v"] == 1 and isinstance(e["ts"], int) for e in events)
    conns = {e["conn"] for e in events}
    assert len(conns) == 1 and None not in conns


def test_timeouts_are_logged_without_a_connection(tmp_path: Path) -> None:
    events_dir = tmp_path / "events"
    server = SubprocessServer(["--events", str(events_dir)]).start()
    try:
        with greenstalk.Client(("127.0.0.1", server.port)) as c:
            job_id = c.put("t", ttr=1)
            c.reserve()
            time.sleep(1.3)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not any(
                e["event"] == "timeout" for e in read_events(events_dir)
            ):
                time.sleep(0.05)  # flushed at the end of the loop turn, no shutdown needed
    finally:
        server.stop()
    timeouts = [e for e in read_events(events_dir) if e["event"] == "timeout"]
    assert [(e["job"], e["conn"]) for e in timeouts] == [(job_id, None)]
