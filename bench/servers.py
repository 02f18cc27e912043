"""Start and observe the servers under test (beanpod and beanstalkd)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
START_TIMEOUT = 15.0


class ServerError(RuntimeError):
    """The server did not start, or died; the benchmark marks the cell n/a."""


@dataclass(frozen=True)
class ServerKind:
    """How to launch one implementation: ``argv + [-l, -p, ...flags]``."""

    name: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def beanstalkd(binary: str = "beanstalkd") -> ServerKind:
        return ServerKind("beanstalkd", (binary,))

    @staticmethod
    def beanpod(
        argv: tuple[str, ...] | None = None, python: str = "python3", src: str | None = None
    ) -> ServerKind:
        """beanpod from this repository, or from the source tree `src` (another checkout,
        for before/after runs)."""
        if argv is not None:
            return ServerKind("beanpod", argv)
        src = src or str(REPO / "src")
        pythonpath = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
        # Only the beanstalkd dialect is measured: no Workq listener (its fixed default
        # port would also clash with any other beanpod on the machine).
        env = {"PYTHONPATH": pythonpath}
        argv = (python, "-m", "beanpod", "serve", "--workq-port", workq_off(python, env))
        return ServerKind("beanpod", argv, env)


def workq_off(python: str, env: dict[str, str]) -> str:
    """How the tree says "no Workq listener": `off`, or `0` in trees from before
    2026-11-27 (where 0 meant disabled; it now means any free port)."""
    help_text = subprocess.run(
        [python, "-m", "beanpod", "serve", "--help"], env={**os.environ, **env},
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    return "off" if "PORT|off" in help_text else "0"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _descendants(pid: int) -> list[int]:
    out = [pid]
    i = 0
    while i < len(out):
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{out[i]}/task"):
                with open(f"/proc/{out[i]}/task/{task}/children") as fh:
                    out.extend(int(c) for c in fh.read().split())
        i += 1
    return out


def cpu_seconds(pid: int) -> float:
    """utime+stime of ``pid`` and its live descendants (+ reaped children)."""
    ticks = 0
    for i, p in enumerate(_descendants(pid)):
        try:
            with open(f"/proc/{p}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields[0] is state (field 3); utime/stime are fields 14/15, cutime/cstime 16/17
        ticks += int(fields[11]) + int(fields[12])
        if i == 0:
            ticks += int(fields[13]) + int(fields[14])
    return ticks / CLK_TCK


def rss_bytes(pid: int) -> int:
    """VmRSS of ``pid`` and its live descendants."""
    return sum(map(own_rss, _descendants(pid)))


def own_rss(pid: int) -> int:
    """VmRSS of ``pid`` alone (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def core_busy_seconds(cores: tuple[int, ...]) -> list[float]:
    """Busy time (everything but idle and iowait, steal included) per core, /proc/stat."""
    wanted = {f"cpu{c}": i for i, c in enumerate(cores)}
    out = [0.0] * len(cores)
    with open("/proc/stat") as fh:
        for line in fh:
            parts = line.split()
            if parts and parts[0] in wanted:
                v = [int(x) for x in parts[1:9]]
                out[wanted[parts[0]]] = (sum(v) - v[3] - v[4]) / CLK_TCK
    return out


class RunningServer:
    """One server process on a fresh port with a fresh data directory."""

    def __init__(self, kind: ServerKind, flags: tuple[str, ...], core: int | None) -> None:
        self.kind = kind
        self.core = core
        self.port = free_port()
        self.datadir = Path(tempfile.mkdtemp(prefix=f"bench-{kind.name}-"))
        wal = self.datadir / "wal"
        wal.mkdir()
        self.flags = tuple(f.replace("{wal}", str(wal)) for f in flags)
        argv = [*kind.argv, "-l", "127.0.0.1", "-p", str(self.port), *self.flags]
        if core is not None:
            argv = ["taskset", "-c", str(core), *argv]
        self.argv = argv
        self._log_path = self.datadir / "server.log"
        self._log = open(self._log_path, "wb")  # noqa: SIM115 - closed in stop()
        # No HTTP listener unless asked (BEANPOD_HTTP=127.0.0.1:0 measures it on): servers
        # started side by side must not share its default port.
        env = {"BEANPOD_HTTP": "off", **os.environ, **kind.env}
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=self.datadir,
            env=env,
            start_new_session=True,
        )
        # taskset execs the server, so the pid is the server's own.
        self.pid = self.proc.pid
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServerError(
                    f"{self.kind.name} exited with status {self.proc.returncode} at start: "
                    f"{self.log_tail()}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                    sock.sendall(b"list-tubes\r\n")
                    reply = sock.recv(4096)
                    if reply.startswith(b"OK "):
                        return
                    last = f"list-tubes answered {reply[:100]!r}"
            except OSError as exc:
                last = str(exc)
            time.sleep(0.05)
        raise ServerError(f"{self.kind.name} not ready after {START_TIMEOUT}s ({last})")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    def rss_bytes(self) -> int:
        return rss_bytes(self.pid)

    def log_tail(self, n: int = 600) -> str:
        try:
            self._log.flush()
            text = self._log_path.read_bytes()[-n:].decode(errors="replace")
        except OSError:
            return ""
        return " ".join(text.split())

    def stop(self) -> str:
        """Terminate the server, remove its data directory, return its log tail."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        tail = self.log_tail()
        self._log.close()
        shutil.rmtree(self.datadir, ignore_errors=True)
        return tail
