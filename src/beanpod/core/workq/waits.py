"""What Workq operations answer besides success: refusals and parked run/result waits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Refusals, raised as WorkqError(reason).
DUPLICATE_JOB = "Duplicate job"
DUPLICATE_RESULT = "Duplicate result"
NOT_FOUND = "NOT_FOUND"
DRAINING = "Server is draining"
NO_ROOM = "Write-ahead log is out of disk space"  # answered before anything changes
OUT_OF_MEMORY = "Out of memory"  # --max-memory or --max-jobs-per-tube: nothing changed
TIMEOUT = "TIMEOUT"  # what a run/result wait answers when its time is up

Result = tuple[bytes, int, bytes]  # (uuid, success 0/1, result bytes)
WaitOutcome = Result | str  # a Result, TIMEOUT or NOT_FOUND
DeliverResult = Callable[[WaitOutcome], None]


class WorkqError(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Wait:
    """A parked `run` or `result`: answered on complete/fail, or at its timeout."""

    __slots__ = ("active", "deliver", "expired", "job_id", "run", "timeout_at", "timer", "uuid")

    def __init__(
        self, job_id: int, uuid: bytes, run: bool, timeout_at: int, deliver: DeliverResult
    ) -> None:
        self.job_id = job_id
        self.uuid = uuid
        self.run = run
        self.timeout_at = timeout_at
        self.deliver = deliver
        self.expired = False  # a run whose wait-timeout passed while leased (TTR decides)
        self.active = True
        self.timer: Any = None
