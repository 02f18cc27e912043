"""Machine instructions per command, counted by cachegrind: a deterministic measure of
the server's hot paths that a busy machine cannot disturb (timings on a shared 2-core
machine swing by ±30 %; instruction counts repeat to a fraction of a percent).

Each workload runs in process (a `BeanstalkdSession` with a fake transport, 64 commands
per `data_received`, as in the d=64 cells) under `valgrind --tool=cachegrind` twice,
with N and 2N batches; the difference divided by 64·N is the cost of one command (put)
or one reserve+delete pair (rd), start-up excluded (building the delete lines, a few
hundred instructions per pair, is counted too). `_ev` variants run with `--events`, `_tm`
variants with the wait/run histograms that `--http` turns on (put_tm, rd_tm).

    python -m bench.instructions [--work put,rd,put_ev,rd_ev] [--batches 100] [--src DIR]

Needs valgrind (`apt-get install valgrind`); each workload takes ~10-30 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BATCH = 64
PUT = (b"put 1024 0 60 100\r\n" + b"x" * 100 + b"\r\n") * BATCH
RESERVE = b"reserve-with-timeout 0\r\n" * BATCH
SESSIONS = 4


class NullTransport:
    """What a session asks of its transport, answering nothing."""

    def write(self, data: bytes) -> None:
        pass

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        pass

    def get_extra_info(self, name: str, default: object = None) -> object:
        return default  # no peer address: admitted like a local connection


async def _work(kind: str, batches: int, fill: int) -> None:  # noqa: C901 - one script: each kind's setup in line
    """The measured workload (run under cachegrind)."""
    from beanpod.server import gc_policy
    from beanpod.server.app import App

    try:
        from beanpod.server.beanstalkd_session import BeanstalkdSession
    except ImportError:  # --src of a tree from before the rename
        from beanpod.server.session import BeanstalkdSession  # type: ignore[no-redef]
    from beanpod.server.config import ServerConfig

    events = kind.endswith("_ev")
    config = ServerConfig(events_dir=Path(tempfile.mkdtemp())) if events else ServerConfig()
    app = App(config)
    extensions = getattr(app, "extensions", None)
    if extensions is not None:  # qless and Workq: `beanpod serve` builds them as it serves
        extensions()
    if kind.endswith("_tm"):  # the wait/run histograms /metrics keeps with --http on
        from beanpod.core.timings import JobTimings

        app.engine.keep_timings(JobTimings())
    gc_policy.tune_gc()
    sessions = [BeanstalkdSession(app) for _ in range(SESSIONS)]
    for session in sessions:
        session.connection_made(NullTransport())  # type: ignore[arg-type]

    def flush() -> None:
        if app.events is not None:
            app.events.flush()
        timings = getattr(app.engine, "timings", None)
        if timings is not None:  # the server folds once a second; here every batch
            timings.fold()

    if kind.startswith("put"):
        for i in range(batches):
            sessions[i % SESSIONS].data_received(PUT)
            flush()
        return
    for _ in range(max(fill, batches)):  # the same backlog for N and 2N batches
        sessions[0].data_received(PUT)
    flush()
    next_id = 1
    for i in range(batches):
        session = sessions[i % SESSIONS]
        deletes = b"".join(b"delete %d\r\n" % j for j in range(next_id, next_id + BATCH))
        session.data_received(RESERVE)
        session.data_received(deletes)
        next_id += BATCH
        flush()


def _instructions(kind: str, batches: int, fill: int, src: Path) -> int:
    cmd = [sys.executable, "-m", "bench.instructions", "--run", kind, str(batches), str(fill)]
    env = dict(os.environ, PYTHONPATH=f"{src}{os.pathsep}{Path(__file__).parent.parent}")
    return cachegrind_count(cmd, env)


def cachegrind_count(cmd: list[str], env: dict[str, str]) -> int:
    """User-space instructions `cmd` executes (all its threads), counted by cachegrind."""
    out = Path(tempfile.mkdtemp()) / "cachegrind.out"
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
           *cmd]  # fmt: skip
    env = {**env, "PYTHONHASHSEED": "0"}  # string hashes decide dict probing: same count
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    match = re.search(r"I\s+refs:\s+([\d,]+)", proc.stderr)
    if match is None:
        raise SystemExit(f"no instruction count from cachegrind:\n{proc.stderr[-2000:]}")
    return int(match[1].replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default="put,rd,put_ev,rd_ev")
    parser.add_argument("--batches", type=int, default=100, help="N (runs N and 2N)")
    parser.add_argument("--src", type=Path, default=Path(__file__).parent.parent / "src")
    parser.add_argument("--run", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        kind, batches, fill = args.run
        asyncio.run(_work(kind, int(batches), int(fill)))
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is needed: apt-get install -y valgrind")
    n = args.batches
    for kind in args.work.split(","):
        fill = 2 * n  # rd: a backlog of 2N batches in both runs
        low = _instructions(kind, n, fill, args.src)
        high = _instructions(kind, 2 * n, fill, args.src)
        unit = "pair" if kind.startswith("rd") else "put"
        print(f"{kind:7s} {(high - low) / (n * BATCH):9,.0f} instructions per {unit}", flush=True)


if __name__ == "__main__":
    main()
