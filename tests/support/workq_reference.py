"""The reference Workq server (iamduo/workq, Go) as a child process, for tests that run
the same checks against beanpod and the reference. Its binary is not part of this
repository: point env WORKQ_SERVER at a `workq-server` built as
docs/workq.md ("Checking against the reference") describes; tests skip without it."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

ENV = "WORKQ_SERVER"
SKIP_REASON = f"reference Workq server absent: set {ENV}=/path/to/workq-server"


def reference_binary() -> str:
    """The path in WORKQ_SERVER, or skip the calling test with the reason."""
    path = os.environ.get(ENV, "")
    if not path or not os.access(path, os.X_OK):
        pytest.skip(SKIP_REASON)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ReferenceWorkq:
    """`workq-server -listen 127.0.0.1:PORT [-cmdlog-path DIR]`; start() waits until it
    accepts connections."""

    def __init__(self, binary: str, cmdlog: Path | None = None) -> None:
        self.binary = binary
        self.cmdlog = cmdlog
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10) -> ReferenceWorkq:
        self.port = free_port()
        cmd = [self.binary, "-listen", f"127.0.0.1:{self.port}"]
        if self.cmdlog is not None:
            cmd += ["-cmdlog-path", str(self.cmdlog), "-cmdlog-sync", "always"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.02)  # polling for readiness, not a timing threshold
        self.stop()
        raise RuntimeError(f"reference Workq server did not start: {cmd}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
