"""Fresh `beanpod serve --clock manual:0` processes for qless-core's suite.

qless-core's tests flush Redis after each test and start their clock at 0 again, so each
test gets a server of its own whose manual clock starts at the epoch. A few are started
ahead in the background, which hides the start-up time.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO

REPO_ROOT = Path(__file__).resolve().parents[3]
HOST = "127.0.0.1"
START_TIMEOUT = 15.0
STOP_TIMEOUT = 5.0
SPARES = 2
WAL = os.environ.get("QLESS_CORE_WAL") == "1"
LISTENING = re.compile(rb"listening on 127\.0\.0\.1:(\d+) \(beanstalkd protocol\)")


class BeanpodServer:
    """One server process on an ephemeral port; its output goes to a temporary file."""

    def __init__(self, wal: str | None = None, start: float = 0) -> None:
        """A fresh server; or, given `wal`, one restarted on that log at `start` s."""
        self.log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        # QLESS_CORE_WAL=1: each server keeps a write-ahead log (every call also writes it)
        self.wal = wal or (tempfile.mkdtemp(prefix="qless-core-wal-") if WAL else None)
        env = dict(os.environ)
        src = str(REPO_ROOT / "src")
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "beanpod", "serve", "-l", HOST, "-p", "0",
             "--workq-port", "off", "--clock", f"manual:{start!r}",
             *(["-b", self.wal, "-s", "65536"] if self.wal else [])],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
        self.port = self._wait_listening()

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")

    def _wait_listening(self) -> int:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            self.log.seek(0)
            found = LISTENING.search(self.log.read())
            if found:
                return int(found.group(1))
            if self.proc.poll() is not None:
                break
            time.sleep(0.005)
        self.stop()
        raise RuntimeError(f"beanpod serve did not start:\n{self.output()}")

    def crash(self) -> None:
        """kill -9 (its log directory stays, for a restart)."""
        self.proc.kill()
        self.proc.wait(timeout=STOP_TIMEOUT)
        with contextlib.suppress(OSError):
            self.log.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=STOP_TIMEOUT)
        with contextlib.suppress(OSError):
            self.log.close()
        if self.wal is not None:
            shutil.rmtree(self.wal, ignore_errors=True)


class ServerSupply:
    """Hands out never-used servers, keeping SPARES starting in the background."""

    def __init__(self) -> None:
        self._starter = ThreadPoolExecutor(max_workers=SPARES)
        self._spares: list[Future[BeanpodServer]] = []

    def take(self) -> BeanpodServer:
        while len(self._spares) < SPARES + 1:
            self._spares.append(self._starter.submit(BeanpodServer))
        return self._spares.pop(0).result()

    def close(self) -> None:
        for future in self._spares:
            with contextlib.suppress(RuntimeError):
                future.result().stop()
        self._spares.clear()
        self._starter.shutdown(wait=True)
