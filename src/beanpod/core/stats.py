"""Server-wide counters, kept incrementally (never computed by scanning jobs)."""

from __future__ import annotations


class Counters:
    __slots__ = (
        "buried",
        "conns",
        "delayed",
        "job_timeouts",
        "producers",
        "ready",
        "reserved",
        "total_connections",
        "total_jobs",
        "urgent",
        "waiting",
        "workers",
    )

    def __init__(self) -> None:
        self.urgent = 0
        self.ready = 0
        self.reserved = 0
        self.delayed = 0
        self.buried = 0
        self.job_timeouts = 0
        self.total_jobs = 0
        self.conns = 0
        self.producers = 0
        self.workers = 0
        self.waiting = 0
        self.total_connections = 0
