"""Servers for tests: in-process (a thread with its own event loop) or a subprocess."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from beanpod.server.app import App
from beanpod.server.config import ServerConfig

LISTENING = re.compile(r"listening on (\S+):(\d+)")


class InProcessServer:
    """An App on 127.0.0.1:<ephemeral> served by a background thread."""

    def __init__(self, **config: Any) -> None:
        self.config = ServerConfig(address="127.0.0.1", port=0, **{"check_moves": True, **config})
        self.loop = asyncio.new_event_loop()
        self.app: App | None = None
        self.port = 0
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def start(self) -> InProcessServer:
        self._thread.start()
        self.app = self.call(App, self.config)
        addresses = self.run(self.app.start(install_signals=False))
        self.port = int(addresses[0].rsplit(":", 1)[1])
        return self

    def call(self, fn: Any, *args: Any) -> Any:
        """Run a plain function on the server's loop thread and return its result."""
        future: Future[Any] = Future()

        def run() -> None:
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # handed to the caller
                future.set_exception(exc)

        self.loop.call_soon_threadsafe(run)
        return future.result(timeout=10)

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=10)

    def stop(self) -> None:
        if self.app is not None:
            self.call(self.app.stop)
            self.run(self.app.serve_until_stopped())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        self.loop.close()

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=5)


class SubprocessServer:
    """`python -m beanpod serve -l 127.0.0.1 -p 0 ARGS` in a child process."""

    def __init__(self, args: Sequence[str] = (), env: dict[str, str] | None = None) -> None:
        self.args = list(args)
        self.env = env
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0
        self.log: list[str] = []
        self._drainer: threading.Thread | None = None

    def start(self, timeout: float = 15) -> SubprocessServer:
        cmd = [sys.executable, "-m", "beanpod", "serve", "-l", "127.0.0.1", "-p", "0", *self.args]
        self.proc = subprocess.Popen(
            cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
            env={**os.environ, **(self.env or {})},
        )  # fmt: skip
        assert self.proc.stderr is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.log.append(line)
            m = LISTENING.search(line)
            if m:
                self.port = int(m.group(2))
                self._drainer = threading.Thread(target=self._drain, daemon=True)
                self._drainer.start()
                return self
        self.kill()
        raise RuntimeError("server did not start:\n" + "".join(self.log))

    def workq_port(self, timeout: float = 10) -> int:
        """The Workq listener's port, from its "listening on ... (Workq protocol)" line."""
        return self.listener_port("Workq", timeout)

    def listener_port(self, role: str, timeout: float = 10) -> int:
        """The port of the listener whose "listening on ..." line names `role`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.log):
                m = LISTENING.search(line)
                if m and role in line:
                    return int(m.group(2))
            time.sleep(0.01)  # the drainer thread is reading the line
        raise RuntimeError(f"no {role} listener:\n" + "".join(self.log))

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    def signal(self, sig: signal.Signals) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def wait(self, timeout: float = 10) -> int:
        assert self.proc is not None
        code = self.proc.wait(timeout=timeout)
        self._finish()
        return code

    def _finish(self) -> None:
        """After exit: collect the rest of the log and close the pipe."""
        if self._drainer is not None:
            self._drainer.join(timeout=5)
        if self.proc is not None and self.proc.stderr is not None:
            self.proc.stderr.close()

    def kill(self) -> None:
        """kill -9, as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._finish()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._finish()
