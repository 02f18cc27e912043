"""Process facts for the stats commands (pid, rusage, uptime, uname, random id)."""

from __future__ import annotations

import os
import platform
import resource
from collections.abc import Callable
from typing import TYPE_CHECKING

from beanpod import __version__
from beanpod.core.job import Job

if TYPE_CHECKING:
    from beanpod.durability.log import DurableLog
    from beanpod.events.writer import EventWriter


class ProcessInfo:
    def __init__(self, started_at: int) -> None:
        uname = os.uname()
        self.pid = os.getpid()
        self.version = __version__
        self.instance_id = os.urandom(8).hex()  # 16 hex characters, as beanstalkd
        self.hostname = uname.nodename
        self.os_name = uname.version
        self.platform = uname.machine or platform.machine()
        self._started_at = started_at
        self.wal: DurableLog | None = None  # set when the server runs with -b DIR
        self.binlog_max_size = 10485760  # -s, shown even without -b (as beanstalkd)
        self.events: EventWriter | None = None  # set when the server runs with --events
        self.edge_stats: Callable[[], list[tuple[bytes, int]]] = list  # server/edge/front.py

    def rusage(self) -> tuple[float, float]:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime, usage.ru_stime

    def uptime(self, now: int) -> int:
        return (now - self._started_at) // 1000

    def binlog_stats(self) -> tuple[int, int, int, int, int]:
        """(oldest index, current index, records migrated, records written, max size)."""
        if self.wal is None:
            return (0, 0, 0, 0, self.binlog_max_size)
        return self.wal.binlog_stats()

    def job_file(self, job: Job) -> int:
        return job.file if self.wal is not None else 0

    def extra_stats(self) -> list[tuple[bytes, int]]:
        """beanpod's own `stats` keys, after beanstalkd's; only for features that are on,
        so a server run as beanstalkd is run prints exactly beanstalkd's keys."""
        keys = [] if self.events is None else [(b"events-dropped", self.events.dropped)]
        return keys + self.edge_stats()
