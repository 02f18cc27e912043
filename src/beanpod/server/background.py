"""Work moved off the event loop at start-up (importing aiohttp and the extensions) while
the loop already answers beanstalkd clients.

The worker thread holds the GIL for most of an import, and a thread that wants the GIL
waits a whole switch interval (5 ms by default) before it is handed over: every reply
the loop sends meanwhile would come several milliseconds late, enough to fail client
suites that time their first commands (greenstalk's allows 50 ms). While such work
runs, the interval is short, so the loop waits a fraction of a millisecond instead.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

SWITCH_INTERVAL = 0.0002  # seconds the loop may wait for the GIL while a worker imports

_running = 0
_saved = sys.getswitchinterval()


async def off_the_loop(work: Callable[[], T]) -> T:
    """Run `work` on a worker thread with the short switch interval."""
    global _running, _saved
    if not _running:
        _saved = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)
    _running += 1
    try:
        return await asyncio.to_thread(work)
    finally:
        _running -= 1
        if not _running:
            sys.setswitchinterval(_saved)
