"""Job classes qless-py's worker imports by name in tests/integration/test_redis_door_*.py."""

from __future__ import annotations

from typing import Any

DONE: list[str] = []
STOP: list[Any] = []  # the worker to stop once EXPECTED jobs ran
EXPECTED: list[int] = [0]


class Door:
    @staticmethod
    def door(job: Any) -> None:
        """Runs for jobs of queue `door` (qless-py calls the method named as the queue)."""
        job.complete()
        DONE.append(job.jid)
        if len(DONE) >= EXPECTED[0] and STOP:
            STOP[0].stop()
