"""An asyncio event loop in a daemon thread, and a way to run code on it from the test's
thread: the engine is single-threaded, so every look or move happens on the loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
WAIT_S = 30.0  # a call that takes longer is a bug (a hung loop), reported as such


class LoopThread:
    def __init__(self, name: str = "beanpod-test-server") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    @property
    def on_loop(self) -> bool:
        return threading.current_thread() is self._thread

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run fn(*args) on the loop; return its result or raise its exception."""
        if self.on_loop:
            return fn(*args)
        done: Future[T] = Future()

        def run() -> None:
            try:
                done.set_result(fn(*args))
            except BaseException as exc:  # handed to the caller's thread
                done.set_exception(exc)

        self.loop.call_soon_threadsafe(run)
        return done.result(WAIT_S)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(WAIT_S)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(WAIT_S)
        self.loop.close()
