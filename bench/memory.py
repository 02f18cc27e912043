"""``python -m bench.memory``: is memory given back once the jobs are gone?

For each server: RSS of the fresh server, put N jobs of B bytes (pipelined), RSS with
them, delete them all, and RSS after the deletes (read after --settle seconds, to let
a periodic trim run). The goal: after <= 1.5 x fresh + 64 MiB. Example:

    python -m bench.memory --jobs 26880 --body 65535 --repeats 3
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from bench.restart import beanpod_argv, beanstalkd_argv, first_reply, spawn
from bench.servers import free_port, rss_bytes
from bench.wire import connect, recv_lines

MIB = 1 << 20


def put_all(port: int, jobs: int, body: bytes, batch: int) -> list[int]:
    sock = connect(port, timeout=120)
    command = b"put 1024 0 120 %d\r\n%s\r\n" % (len(body), body)
    ids: list[int] = []
    try:
        while len(ids) < jobs:
            n = min(batch, jobs - len(ids))
            sock.sendall(command * n)
            ids += [int(line.split()[1]) for line in recv_lines(sock, n).splitlines()]
    finally:
        sock.close()
    return ids


def delete_all(port: int, ids: list[int], batch: int) -> None:
    sock = connect(port, timeout=120)
    try:
        for at in range(0, len(ids), batch):
            chunk = ids[at : at + batch]
            sock.sendall(b"".join(b"delete %d\r\n" % i for i in chunk))
            if recv_lines(sock, len(chunk)).count(b"DELETED") != len(chunk):
                raise RuntimeError("delete failed")
    finally:
        sock.close()


def measure(name: str, argv: list[str], args: argparse.Namespace, log: Path) -> tuple[int, ...]:
    port = free_port()
    argv = [a.replace("{port}", str(port)) for a in argv]
    proc = spawn(argv, log)
    try:
        first_reply(proc, port, 30)
        time.sleep(0.5)
        fresh = rss_bytes(proc.pid)
        ids = put_all(port, args.jobs, b"x" * args.body, args.batch)
        full = rss_bytes(proc.pid)
        delete_all(port, ids, args.batch)
        time.sleep(args.settle)
        first_reply(proc, port, 30)
        after = rss_bytes(proc.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    return fresh, full, after


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__)
    parser.add_argument("--jobs", type=int, default=26_880)
    parser.add_argument("--body", type=int, default=65_535, help="bytes (max-job-size)")
    parser.add_argument("--batch", type=int, default=64, help="commands per pipelined batch")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--settle", type=float, default=2.0, help="seconds before reading RSS")
    parser.add_argument("--wal", action="store_true", help="run both with -b DIR")
    parser.add_argument("--only", choices=("beanpod", "beanstalkd"))
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    try:
        for name, make in (("beanpod", beanpod_argv), ("beanstalkd", beanstalkd_argv)):
            if args.only not in (None, name):
                continue
            for i in range(args.repeats):
                wal = workdir / f"{name}-{i}"
                wal.mkdir()
                cmd = make(0, wal)
                cmd[cmd.index("-p") + 1] = "{port}"
                if not args.wal:
                    cmd = cmd[: cmd.index("-b")] + cmd[cmd.index("-b") + 2 :]
                fresh, full, after = measure(name, cmd, args, workdir / f"{name}.log")
                goal = 1.5 * fresh + 64 * MIB
                print(f"{name:10s} fresh {fresh / MIB:6.1f} MiB  with jobs {full / MIB:7.1f} MiB"
                      f"  after deletes {after / MIB:6.1f} MiB  (goal <= {goal / MIB:.0f} MiB:"
                      f" {'met' if after <= goal else 'NOT met'})", flush=True)  # fmt: skip
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
