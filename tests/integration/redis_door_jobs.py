"""Job classes qless-py's worker imports by name in tests/integration/test_redis_door_*.py."""

from __future__ import annotations

import signal
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


def run_worker(worker: Any, expected: int) -> list[str]:
    """Run qless-py's worker in this (main) thread until `expected` jobs ran; the jids
    in the order they ran. Its signal handlers are put back afterwards."""
    DONE.clear()
    EXPECTED[0] = expected
    STOP[:] = [worker]
    signals = (signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
    saved = {sig: signal.getsignal(sig) for sig in signals}
    try:
        worker.run()
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    return list(DONE)
