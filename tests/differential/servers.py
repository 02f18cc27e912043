"""Start and stop the servers under comparison (real beanstalkd and beanpod).

Every server runs as a child process bound to 127.0.0.1 on a free port.  Readiness
is detected by looking for the listening socket in ``/proc/net/tcp`` so that no
probe connection is made: a probe would show up in ``total-connections``.  Where
``/proc`` is not available a probe connection is used instead.  beanpod listens
before it has loaded, so it is ready once it also logs `listening on HOST:PORT`
(a session's short reply timeouts must not include its start-up).

Processes are stopped by their own pid: ``terminate()``, then ``kill()`` after a
timeout.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

REPO_ROOT = Path(__file__).resolve().parents[2]
BEANSTALKD = shutil.which("beanstalkd")
HOST = "127.0.0.1"
START_TIMEOUT = 15.0
STOP_TIMEOUT = 5.0

#: Which implementation is compared against the reference beanstalkd.  Set
#: ``BEANPOD_DIFF_CANDIDATE=beanstalkd`` to compare beanstalkd with itself, which
#: proves that the harness and the sessions are deterministic.
CANDIDATE = os.environ.get("BEANPOD_DIFF_CANDIDATE", "beanpod")
KINDS = ("beanstalkd", "beanpod")


class ServerStartError(RuntimeError):
    """The server process exited or never started listening."""


_handed_out: set[int] = set()
_handed_out_lock = threading.Lock()


def free_port() -> int:
    """A free port never handed out before in this run.

    Spares start in parallel threads, and the kernel may offer a just-closed port
    again; two servers told the same port would leave one of them dead.
    """
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((HOST, 0))
            port = int(s.getsockname()[1])
        with _handed_out_lock:
            if port not in _handed_out:
                _handed_out.add(port)
                return port


def _socket_inodes(pid: int) -> set[str] | None:
    """Inodes of the sockets ``pid`` holds open, None if /proc cannot tell."""
    fd_dir = Path(f"/proc/{pid}/fd")
    inodes: set[str] = set()
    try:
        fds = list(fd_dir.iterdir())
    except OSError:
        return None
    for fd in fds:
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    return inodes


def _listening_in_proc(port: int, pid: int) -> bool | None:
    """True/False if /proc tells whether process ``pid`` listens on ``port``.

    The listener must be the process's own socket: if another server holds the
    port, this one fails to bind and exits, and the port's LISTEN line must not
    pass for it (its session would talk to the other server).  None if unknown.
    """
    found_any = False
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        found_any = True
        for line in lines:
            parts = line.split()
            if len(parts) > 9 and parts[3] == "0A" and parts[1].endswith(f":{port:04X}"):
                inodes = _socket_inodes(pid)
                if inodes is None:
                    return None
                if parts[9] in inodes:
                    return True
    return False if found_any else None


def _probe_connect(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.2):
            return True
    except OSError:
        return False


@functools.cache
def beanpod_extra_flags() -> tuple[str, ...]:
    """Flags that keep beanpod to the one beanstalkd port under test.

    Newer beanpod builds also listen for the Workq protocol on port 9922 unless
    ``--workq-port off`` is given (a second instance finds it taken and warns).
    """
    try:
        out = subprocess.run(
            [sys.executable, "-m", "beanpod", "serve", "--help"],
            capture_output=True,
            env=_env_for("beanpod"),
            cwd=str(REPO_ROOT),
            timeout=30,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return ("--workq-port", "off") if b"--workq-port" in out else ()


def command_for(kind: str, port: int, max_job_size: int | None) -> list[str]:
    extra = ["-z", str(max_job_size)] if max_job_size is not None else []
    if kind == "beanstalkd":
        if BEANSTALKD is None:
            raise ServerStartError("beanstalkd is not on PATH")
        return [BEANSTALKD, "-l", HOST, "-p", str(port), *extra]
    if kind == "beanpod":
        return [
            sys.executable,
            "-m",
            "beanpod",
            "serve",
            "-l",
            HOST,
            "-p",
            str(port),
            *extra,
            *beanpod_extra_flags(),
        ]
    raise ValueError(f"unknown server kind {kind!r}")


def _env_for(kind: str) -> dict[str, str]:
    env = dict(os.environ)
    if kind == "beanpod":
        src = str(REPO_ROOT / "src")
        old = env.get("PYTHONPATH")
        env["PYTHONPATH"] = src if not old else f"{src}{os.pathsep}{old}"
    return env


@dataclass
class Server:
    """One running server process."""

    kind: str
    max_job_size: int | None = None
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        z = f" -z {self.max_job_size}" if self.max_job_size is not None else ""
        return f"{self.kind}:{self.port}{z}"

    def start(self) -> Server:
        last_error = ""
        for _attempt in range(3):  # retry in case another process grabbed the port
            self.port = free_port()
            # Lives as long as the server; closed in stop().
            log = tempfile.TemporaryFile()  # noqa: SIM115
            self._log = log
            self.proc = subprocess.Popen(
                command_for(self.kind, self.port, self.max_job_size),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_env_for(self.kind),
                cwd=str(REPO_ROOT),
            )
            try:
                self._wait_listening()
                return self
            except ServerStartError as exc:
                last_error = str(exc)
                self.stop()
        raise ServerStartError(last_error)

    def output(self) -> str:
        log = self._log
        if log is None:
            return ""
        log.seek(0)
        return log.read().decode("utf-8", "replace")

    def _wait_listening(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServerStartError(
                    f"{self.kind} exited with status {self.proc.returncode} before "
                    f"listening on port {self.port}; output:\n{self.output()}"
                )
            state = _listening_in_proc(self.port, self.proc.pid)
            if state is None:
                state = _probe_connect(self.port)
            if state and self._serving():
                return
            time.sleep(0.003)
        raise ServerStartError(
            f"{self.kind} did not listen on port {self.port} within {START_TIMEOUT}s; "
            f"output:\n{self.output()}"
        )

    def _serving(self) -> bool:
        """beanpod opens its port before it has loaded (so early clients are not
        refused); it serves once it logs that it listens. beanstalkd serves at once."""
        return self.kind != "beanpod" or f"listening on {HOST}:{self.port}" in self.output()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=STOP_TIMEOUT)
        self.proc = None
        log = self._log
        self._log = None
        if log is not None:
            with contextlib.suppress(OSError):
                log.close()


SPARES = 4  # fresh servers kept starting in the background, per (kind, max_job_size)


class ServerPool:
    """Lazily started servers shared by the sessions of one pytest run.

    Shared servers are keyed by ``(role, kind, max_job_size)``; the role keeps the
    reference and the candidate apart even when both are beanstalkd.  ``fresh()``
    hands out a never-used server that the caller must release; a few spares are
    started ahead in background threads, which hides a slow server start-up.
    """

    def __init__(self) -> None:
        self._shared: dict[tuple[str, str, int | None], Server] = {}
        self._fresh: list[Server] = []
        self._spares: dict[tuple[str, int | None], list[Future[Server]]] = {}
        self._starter = ThreadPoolExecutor(max_workers=2 * SPARES)
        self._lock = threading.Lock()

    def shared(self, role: str, kind: str, max_job_size: int | None) -> Server:
        key = (role, kind, max_job_size)
        with self._lock:
            server = self._shared.get(key)
            if server is None or not server.alive():
                server = Server(kind, max_job_size).start()
                self._shared[key] = server
            return server

    def fresh(self, kind: str, max_job_size: int | None) -> Server:
        key = (kind, max_job_size)
        with self._lock:
            queue = self._spares.setdefault(key, [])
            # Only the default configuration is used by many sessions.
            while len(queue) < (SPARES + 1 if max_job_size is None else 1):
                queue.append(self._starter.submit(Server(kind, max_job_size).start))
            future = queue.pop(0)
        server = future.result()  # re-raises ServerStartError
        with self._lock:
            self._fresh.append(server)
        return server

    def release(self, server: Server) -> None:
        server.stop()
        with self._lock:
            if server in self._fresh:
                self._fresh.remove(server)

    def close(self) -> None:
        with self._lock:
            servers = [*self._shared.values(), *self._fresh]
            spares = [f for queue in self._spares.values() for f in queue]
            self._shared.clear()
            self._fresh.clear()
            self._spares.clear()
        for future in spares:
            with contextlib.suppress(ServerStartError):
                servers.append(future.result())
        self._starter.shutdown(wait=True)
        for server in servers:
            server.stop()
