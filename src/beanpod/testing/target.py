"""The conformance switch: BEANPOD_TEST_TARGET=beanstalkd runs the same tests against a
real beanstalkd subprocess (binary: BEANPOD_TEST_BEANSTALKD, default `beanstalkd` on
PATH). What only beanpod can do - the virtual clock, inspection, assertions, faults -
skips with the reason (or raises NotSupported outside pytest)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from socket import create_connection
from socket import socket as Socket
from types import TracebackType
from typing import Any, NoReturn

from beanpod.testing.endpoint import Endpoint
from beanpod.testing.errors import NotSupported, ServerStopped
from beanpod.testing.server import BeanpodServer

TARGET_ENV, BINARY_ENV = "BEANPOD_TEST_TARGET", "BEANPOD_TEST_BEANSTALKD"
HOST = "127.0.0.1"
START_TIMEOUT_S = 10.0


def start_target(**options: Any) -> BeanpodServer | BeanstalkdServer:
    """A started server: beanpod in-process, or beanstalkd when BEANPOD_TEST_TARGET says so."""
    target = os.environ.get(TARGET_ENV, "beanpod")
    if target == "beanpod":
        return BeanpodServer(**options).start()
    if target == "beanstalkd":
        return BeanstalkdServer(**options).start()
    raise ValueError(f"{TARGET_ENV}={target!r}: expected 'beanpod' or 'beanstalkd'")


def beanpod_only(what: str) -> NoReturn:
    reason = (
        f"{what} needs beanpod's in-process server; this run targets a real beanstalkd "
        f"({TARGET_ENV}=beanstalkd)"
    )
    pytest = sys.modules.get("pytest")
    if pytest is not None:
        pytest.skip(reason)
    raise NotSupported(reason)


class BeanstalkdServer(Endpoint):
    """A beanstalkd subprocess with the address surface of BeanpodServer."""

    def __init__(
        self, *, clock: str = "virtual", wal: str | Path | None = None, unix: bool = False,
        workq: bool = False, max_job_size: int = 65535,
    ) -> None:  # fmt: skip
        self.options = {"clock": clock, "wal": wal, "unix": unix, "workq": workq,
                        "max_job_size": max_job_size}  # fmt: skip
        if unix or workq:
            beanpod_only("a UNIX socket alongside TCP" if unix else "the Workq protocol")
        binary = os.environ.get(BINARY_ENV, "beanstalkd")
        found = shutil.which(binary)
        if found is None:
            raise FileNotFoundError(
                f"{TARGET_ENV}=beanstalkd but no {binary!r} found (set {BINARY_ENV} to its path)"
            )
        self._argv = [found, "-l", HOST, "-z", str(max_job_size)]
        if wal is not None:
            Path(wal).mkdir(parents=True, exist_ok=True)  # beanpod makes it; beanstalkd wants it
            self._argv += ["-b", str(wal)]
        self.host, self.port, self.workq_port = HOST, _free_port(), 0
        self.unix_path: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self.stopped = False

    def start(self) -> BeanstalkdServer:
        self._proc = subprocess.Popen([*self._argv, "-p", str(self.port)])
        _wait_listening(self.port, self._proc)
        return self

    def stop(self) -> None:
        self.stopped = True
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait()
            self._proc = None

    def __enter__(self) -> BeanstalkdServer:
        return self if self._proc is not None else self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def reset(self) -> None:
        """A fresh beanstalkd on the same port (its WAL directory emptied)."""
        self._alive()
        self.stop()
        wal = self.options["wal"]
        if wal is not None:
            shutil.rmtree(str(wal), ignore_errors=True)
            Path(str(wal)).mkdir(parents=True)
        self.stopped = False
        self.start()

    def restart(self) -> None:
        self._alive()
        self.stop()
        self.stopped = False
        self.start()

    def socket(self) -> Socket:
        """A TCP connection (beanstalkd has no in-process socket)."""
        self._alive()
        return create_connection(self.address)

    def drop_connections(self) -> None:
        beanpod_only("drop_connections()")

    @property
    def latency(self) -> float:
        beanpod_only("added latency")

    @latency.setter
    def latency(self, seconds: float) -> None:
        beanpod_only("added latency")

    def _alive(self) -> None:
        if self.stopped:
            raise ServerStopped("this beanstalkd test server has stopped")

    def __getattr__(self, name: str) -> Any:
        """Everything else BeanpodServer offers is beanpod-only: skip."""
        if name.startswith("_") or not hasattr(BeanpodServer, name):
            raise AttributeError(name)
        beanpod_only(f"server.{name}")


def _free_port() -> int:
    with Socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"beanstalkd exited with status {proc.returncode} at start")
        try:
            create_connection((HOST, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.001)
    raise TimeoutError(f"beanstalkd did not listen on {HOST}:{port} in {START_TIMEOUT_S} s")
