"""How the shipped clients (qless, Workq sync and asyncio) survive a server restart:
a lost or refused connection is retried with exponential backoff and full jitter
(tenacity), and the call in progress is sent again on the new connection.

    Client(port=11300, backoff=Backoff(give_up_after=None))   # retry for ever
    Client(port=11300, backoff=None)                           # fail fast, as before

Only connection errors are retried: a refusal from the server is an answer. A read that
times out is not retried either (the server is there but silent); its connection is
dropped and the next call opens a new one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_delay,
    stop_never,
    wait_random_exponential,
)
from tenacity.stop import stop_base

log = logging.getLogger("beanpod.client")


def connection_lost(exc: BaseException) -> bool:
    """Worth a new connection: refused, reset, closed; not a timeout."""
    return isinstance(exc, OSError) and not isinstance(exc, TimeoutError)


def _log_retry(state: RetryCallState) -> None:
    """Tries 1, 2, 4, 8... are warnings, the rest debug: an outage logs a few lines."""
    exc = state.outcome.exception() if state.outcome is not None else None
    wait = state.next_action.sleep if state.next_action is not None else 0.0
    n = state.attempt_number
    level = logging.WARNING if n & (n - 1) == 0 else logging.DEBUG
    log.log(level, "connection lost (%s); try %d in %.2f s", exc, n + 1, wait)


@dataclass(frozen=True)
class Backoff:
    """Waits between tries: random in [0, min(first * 2**n, maximum)] seconds; the last
    error is raised once `give_up_after` seconds have passed (None: never give up)."""

    first: float = 0.05
    maximum: float = 1.0
    give_up_after: float | None = 60.0

    def retrying(self) -> Retrying:
        """A tenacity Retrying that waits out a restart with this backoff."""
        return Retrying(
            retry=RETRY, wait=self._wait(), stop=self._stop(), reraise=True, before_sleep=_log_retry
        )

    def async_retrying(self) -> AsyncRetrying:
        """The asyncio version of `retrying`."""
        return AsyncRetrying(
            retry=RETRY, wait=self._wait(), stop=self._stop(), reraise=True, before_sleep=_log_retry
        )

    def _wait(self) -> wait_random_exponential:
        return wait_random_exponential(multiplier=self.first, max=self.maximum)

    def _stop(self) -> stop_base:
        return stop_never if self.give_up_after is None else stop_after_delay(self.give_up_after)


RETRY = retry_if_exception(connection_lost)


DEFAULT = Backoff()  # what the clients use unless told otherwise
