"""``python -m bench.restart``: restart time and memory with N jobs in the log.

For each server (beanpod, beanstalkd 1.12), on a fresh directory: start with `-b DIR`,
put N jobs (pipelined; the fill's rate and CPU, with any checkpoint builder's, are
shown), read the server's RSS ("before"; a checkpoint builder running then is shown
apart), stop it (kill -9 by default, or SIGTERM; `--wait-checkpoint`: once beanpod's
checkpoints have caught up, as on a server at rest),
start it again on the same directory and time from the spawn to the first reply to
`stats` (and the CPU seconds the server used until then, a figure that a busy machine
disturbs less than wall time), then read RSS ("after") and check `current-jobs-ready`
is N. Repeats give ranges (each repeat restarts the same directory again). Example:

    python -m bench.restart --jobs 1000000 --repeats 3
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.servers import REPO, cpu_seconds, free_port, own_rss, rss_bytes
from bench.wire import connect, recv_lines

BATCH = 1000


@dataclass
class Figures:
    name: str
    rss_before: int = 0  # the server process alone
    rss_builder: int = 0  # beanpod: a checkpoint's builder running at the stop, if any
    first_reply: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # server CPU seconds until that reply
    rss_after: list[int] = field(default_factory=list)
    checkpoints: tuple[int, int] = (0, 0)  # beanpod: (started, written) before the stop
    fill_rate: float = 0.0  # puts/s while filling
    fill_cpu: float = 0.0  # server CPU seconds (with checkpoint builders) while filling


def beanpod_argv(port: int, wal: Path) -> list[str]:
    return [sys.executable, "-m", "beanpod", "serve", "-l", "127.0.0.1", "-p", str(port),
            "--workq-port", "off", "-b", str(wal), *EXTRA]  # fmt: skip


EXTRA: list[str] = []  # more `beanpod serve` flags (--checkpoint-floor)


def beanstalkd_argv(port: int, wal: Path) -> list[str]:
    return ["beanstalkd", "-l", "127.0.0.1", "-p", str(port), "-b", str(wal)]


SRC = [REPO / "src"]  # the beanpod tree measured (--src: another, e.g. before a change)


def spawn(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(SRC[0]), "BEANPOD_HTTP": "off"}
    with log.open("ab") as out:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, env=env)  # fmt: skip


def first_reply(proc: subprocess.Popen[bytes], port: int, timeout: float) -> dict[str, str]:
    """Poll until `stats` is answered; return the stats."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with status {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
                sock.settimeout(timeout)
                sock.sendall(b"stats\r\n")
                data = b""
                while not data.endswith(b"\r\n") or data.count(b"\n") < 2:
                    chunk = sock.recv(65536)
                    if not chunk:
                        raise ConnectionError
                    data += chunk
                return _parse(data)
        except OSError:
            time.sleep(0.01)
    raise RuntimeError(f"no reply within {timeout}s")


def _parse(data: bytes) -> dict[str, str]:
    out = {}
    for line in data.decode().splitlines()[2:]:
        key, _, value = line.partition(": ")
        out[key] = value.strip()
    return out


def fill(port: int, jobs: int, body: bytes) -> None:
    sock = connect(port, timeout=60)
    put = b"put 1024 0 120 %d\r\n%s\r\n" % (len(body), body)
    try:
        left = jobs
        while left:
            n = min(BATCH, left)
            sock.sendall(put * n)
            data = recv_lines(sock, n)
            if data.count(b"INSERTED") != n:
                raise RuntimeError(f"put failed: {data[:200]!r}")
            left -= n
    finally:
        sock.close()


def stop(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)
    proc.wait(60)


def measure(name: str, argv: Callable[[int, Path], list[str]], args: argparse.Namespace,
            workdir: Path) -> Figures:  # fmt: skip
    wal = workdir / name
    wal.mkdir()
    log = workdir / f"{name}.log"
    figures = Figures(name)
    port = free_port()
    proc = spawn(argv(port, wal), log)
    try:
        first_reply(proc, port, 30)
        t0, cpu0 = time.monotonic(), cpu_seconds(proc.pid)
        fill(port, args.jobs, b"x" * args.body)
        figures.fill_rate = args.jobs / (time.monotonic() - t0)
        time.sleep(0.5)  # let the last group commit and fsync settle
        figures.fill_cpu = cpu_seconds(proc.pid) - cpu0
        if args.wait_checkpoint:
            wait_checkpoints(log, 120)
        figures.rss_before = own_rss(proc.pid)
        figures.rss_builder = rss_bytes(proc.pid) - figures.rss_before
    finally:
        stop(proc, args.signal)
    figures.checkpoints = checkpoints(log)
    for _ in range(args.repeats):
        port = free_port()
        t0 = time.monotonic()
        proc = spawn(argv(port, wal), log)
        try:
            stats = first_reply(proc, port, 600)
            figures.first_reply.append(time.monotonic() - t0)
            figures.cpu.append(cpu_seconds(proc.pid))
            figures.rss_after.append(own_rss(proc.pid))
            ready = int(stats.get("current-jobs-ready", "-1"))
            if ready != args.jobs:
                raise RuntimeError(f"{name}: {ready} jobs ready after restart, not {args.jobs}")
        finally:
            stop(proc, args.signal)
    return figures


def checkpoints(log: Path) -> tuple[int, int]:
    """(checkpoints started, written) by beanpod so far, from its log."""
    text = log.read_text(errors="replace")
    return text.count("WAL checkpoint started"), text.count("WAL checkpoint written")


def wait_checkpoints(log: Path, timeout: float, quiet: float = 3.0) -> None:
    """Until no checkpoint has run for `quiet` seconds (beanpod starts one once it has
    been idle 2 s) or `timeout` passes."""
    deadline = time.monotonic() + timeout
    calm_since = time.monotonic()
    while time.monotonic() < deadline:
        started, written = checkpoints(log)
        text = log.read_text(errors="replace")
        ended = written + text.count("WAL checkpoint given up") + text.count("not written")
        if started > ended:
            calm_since = time.monotonic()
        elif time.monotonic() - calm_since >= quiet:
            return
        time.sleep(0.05)


def _range(values: list[float], fmt: str) -> str:
    lo, hi = min(values), max(values)
    return fmt % lo if lo == hi else f"{fmt % lo}-{fmt % hi}"


def report(figures: Figures) -> str:
    mb = 1 << 20
    after = [r / mb for r in figures.rss_after]
    ratio = [r / figures.rss_before for r in figures.rss_after]
    return (f"{figures.name:10s} first reply {_range(figures.first_reply, '%.2f')} s "
            f"(CPU {_range(figures.cpu, '%.2f')} s)  "
            f"RSS before {figures.rss_before / mb:.0f} MiB  after {_range(after, '%.0f')} MiB "
            f"({_range(ratio, '%.2f')}x)"
            + f"  fill {figures.fill_rate:,.0f} puts/s, CPU {figures.fill_cpu:.2f} s"
            + (f"  builder RSS at the stop {figures.rss_builder / mb:.0f} MiB"
               if figures.rss_builder else "")
            + (f"  checkpoints before the stop: {figures.checkpoints[0]} started, "
               f"{figures.checkpoints[1]} written"
               if figures.name == "beanpod" else ""))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.restart", description=__doc__)
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--body", type=int, default=100, help="body bytes per job")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sigterm", dest="signal", action="store_const",
                        const=signal.SIGTERM, default=signal.SIGKILL,
                        help="stop with SIGTERM (clean shutdown) instead of kill -9")  # fmt: skip
    parser.add_argument("--only", choices=("beanpod", "beanstalkd"))
    parser.add_argument("--wait-checkpoint", action="store_true",
                        help="before the stop, wait until beanpod has written no checkpoint "
                        "for 3 s (at rest; its log lines)")  # fmt: skip
    parser.add_argument("--checkpoint-floor", type=int, metavar="BYTES",
                        help="beanpod serve --checkpoint-floor BYTES (default off)")  # fmt: skip
    parser.add_argument("--src", type=Path, help="measure the beanpod tree at SRC (its src/)")
    args = parser.parse_args(argv)
    if args.checkpoint_floor is not None:
        EXTRA[:] = ["--checkpoint-floor", str(args.checkpoint_floor)]
    if args.src is not None:
        SRC[0] = args.src.resolve()
    workdir = Path(tempfile.mkdtemp(prefix="bench-restart-"))
    servers = {"beanpod": beanpod_argv, "beanstalkd": beanstalkd_argv}
    try:
        for name, make_argv in servers.items():
            if args.only in (None, name):
                print(report(measure(name, make_argv, args, workdir)), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
