"""Command line and the A/B loop: ``python -m bench``."""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from bench.cells import DEFAULT, QUICK, Cell, Profile, measure, select_cells
from bench.report import markdown, summarize, write_json
from bench.servers import REPO, RunningServer, ServerError, ServerKind
from bench.wire import LoadError

RESULTS = Path(__file__).resolve().parent / "results"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="Side-by-side benchmark: beanpod vs beanstalkd "
        "(A B A B, fresh server per run).",
    )
    p.add_argument("--quick", action="store_true", help="every cell briefly (~1 min), 1 repeat")
    p.add_argument("--repeat", type=int, default=None, help="runs per server per cell (default 3)")
    p.add_argument(
        "--cells", default=None, help="comma-separated cell names or globs, e.g. 'put_*,rss_1m'"
    )
    p.add_argument("--list", action="store_true", help="list the cells and exit")
    p.add_argument(
        "--servers",
        default="beanpod,beanstalkd",
        help="A,B: which implementations to compare (beanpod|beanstalkd|beanpod@DIR: the "
        "beanpod whose source tree is DIR, for before/after runs|beanpod+http: with its HTTP "
        "listener on|beanpod+pure: BEANPOD_PURE=1, the pure build of a compiled tree); "
        "'beanstalkd,beanstalkd' is the harness dry run",
    )
    p.add_argument(
        "--beanpod-cmd",
        default=None,
        help="command that starts beanpod (default: "
        "'python -m beanpod serve' with PYTHONPATH=<repo>/src)",
    )
    p.add_argument("--beanstalkd", default="beanstalkd", help="beanstalkd binary")
    p.add_argument("--server-core", type=int, default=0)
    p.add_argument("--load-core", type=int, default=1)
    p.add_argument(
        "--nice",
        type=int,
        default=0,
        help="niceness for the driver, load workers and servers (e.g. -10 on a "
        "shared machine; negative values need root)",
    )
    p.add_argument(
        "--duration",
        type=float,
        default=None,
        help="timed window per throughput cell in seconds (overrides the profile)",
    )
    p.add_argument(
        "--out", type=Path, default=None, help="JSON path (default bench/results/<timestamp>.json)"
    )
    return p.parse_args(argv)


def _kind(name: str, args: argparse.Namespace) -> ServerKind:
    if name == "beanstalkd":
        return ServerKind.beanstalkd(args.beanstalkd)
    if name == "beanpod":
        if args.beanpod_cmd:
            return ServerKind.beanpod(tuple(shlex.split(args.beanpod_cmd)))
        return ServerKind.beanpod(python=sys.executable)
    if name.startswith("beanpod@"):  # another checkout's src/, e.g. the commit before a change
        return ServerKind.beanpod(python=sys.executable, src=name.partition("@")[2])
    if name == "beanpod+http":  # the HTTP listener on (its default), nobody looking
        kind = ServerKind.beanpod(python=sys.executable)
        return replace(kind, env={**kind.env, "BEANPOD_HTTP": "127.0.0.1:0"})
    if name == "beanpod+pure":  # the Python of the compiled modules (docs/performance.md)
        kind = ServerKind.beanpod(python=sys.executable)
        return replace(kind, env={**kind.env, "BEANPOD_PURE": "1"})
    raise SystemExit(
        f"unknown server {name!r} (beanpod|beanpod+http|beanpod+pure|beanstalkd|beanpod@DIR)"
    )


def _labels(a: str, b: str) -> tuple[str, str]:
    return (f"{a} (A)", f"{b} (B)") if a == b else (a, b)


def _pin(core: int, server_core: int) -> int | None:
    """Pin this process (and so every load worker) to ``core``."""
    cpus = os.sched_getaffinity(0)
    if core == server_core or core not in cpus or server_core not in cpus:
        print(
            f"warning: cannot pin to cores {server_core}/{core} (have {sorted(cpus)}); "
            "running unpinned",
            file=sys.stderr,
        )
        return None
    os.sched_setaffinity(0, {core})
    return server_core


def _capture(cmd: list[str], env: dict[str, str] | None = None) -> str:
    try:
        out = subprocess.run(
            cmd, capture_output=True, text=True, timeout=20, env={**os.environ, **(env or {})}
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unavailable ({exc})"
    return (out.stdout or out.stderr).strip()


def _proc_field(path: str, key: str) -> str:
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def machine_info(kinds: list[ServerKind], beanstalkd: str) -> dict[str, Any]:
    model = _proc_field("/proc/cpuinfo", "model name")
    mem = _proc_field("/proc/meminfo", "MemTotal")
    info: dict[str, Any] = {
        "cpu": model,
        "cpus": os.cpu_count(),
        "memory": mem,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "beanstalkd": _capture([beanstalkd, "-v"]),
        "git": _capture(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"]),
    }
    for k in kinds:
        if k.name == "beanpod":
            info["beanpod"] = (
                _capture([*k.argv[:1], "-c", "import beanpod; print(beanpod.__version__)"], k.env)
                if k.argv[1:3] == ("-m", "beanpod")
                else " ".join(k.argv)
            )
    return info


def run_one(kind: ServerKind, cell: Cell, prof: Profile, core: int | None) -> dict[str, Any]:
    started = time.monotonic()
    try:
        server = RunningServer(kind, cell.flags, core)
    except ServerError as exc:
        return {"status": "n/a", "error": str(exc)}
    try:
        result = measure(cell, server, prof)
        result["status"] = "ok"
    except ServerError as exc:
        result = {"status": "error", "error": str(exc)}
    except LoadError as exc:
        result = {"status": "error", "error": str(exc)}
    finally:
        tail = server.stop()
    if result["status"] != "ok" and tail:
        result["server_log_tail"] = tail
    result["argv"] = server.argv
    result["elapsed_s"] = time.monotonic() - started
    return result


def _progress(cell: Cell, rep: int, label: str, res: dict[str, Any]) -> None:
    if res["status"] == "ok":
        extra = f"{res['value']:,.1f} {cell.unit}"
        if res.get("cpu_us_per_op") is not None:
            extra += f", {res['cpu_us_per_op']:.2f} µs CPU/op"
        if "p50_us" in res:
            extra += f", p50 {res['p50_us']:.0f} µs p99 {res['p99_us']:.0f} µs"
        extra += f", srv {res['server_cpu_util']:.0%} load {res['loader_cpu_util']:.0%}"
        other_srv = res.get("other_util_server_core", 0.0)
        other_load = res.get("other_util_load_core", 0.0)
        if max(other_srv, other_load) > 0.15:
            extra += (
                f" [noisy: other work on server core {other_srv:.0%}, load core {other_load:.0%}]"
            )
    else:
        extra = f"{res['status']}: {str(res.get('error'))[:300]}"
    print(f"  {cell.name:<18} #{rep + 1} {label:<16} {extra}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cells = select_cells(args.cells)
    if args.list:
        for c in cells:
            print(f"{c.name:<20} {c.describe()}")
        return 0
    prof = QUICK if args.quick else DEFAULT
    if args.duration:
        prof = Profile(**{**asdict(prof), "duration": args.duration, "fill_seconds": args.duration})
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    names = [n.strip() for n in args.servers.split(",")]
    if len(names) != 2:
        raise SystemExit("--servers takes exactly two names, e.g. beanpod,beanstalkd")
    kinds = [_kind(n, args) for n in names]
    label_a, label_b = _labels(*names)
    core = _pin(args.load_core, args.server_core)
    if args.nice:
        os.setpriority(os.PRIO_PROCESS, 0, args.nice)  # inherited by workers and servers
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_path = args.out or RESULTS / f"{stamp}.json"
    payload: dict[str, Any] = {
        "timestamp": stamp,
        "command": " ".join(["python -m bench", *(argv if argv is not None else sys.argv[1:])]),
        "machine": machine_info(kinds, args.beanstalkd),
        "servers": {"A": label_a, "B": label_b},
        "server_argv": {"A": list(kinds[0].argv), "B": list(kinds[1].argv)},
        "nice": args.nice,
        "pinning": {"server_core": core, "load_core": args.load_core if core is not None else None},
        "profile": asdict(prof),
        "repeat": repeat,
        "cells": [],
    }
    t_start = time.monotonic()
    print(
        f"{len(cells)} cells x {repeat} repeats, A={label_a} B={label_b}; JSON -> {out_path}",
        file=sys.stderr,
    )
    for cell in cells:
        runs: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
        for rep in range(repeat):
            for key, kind, label in (("a", kinds[0], label_a), ("b", kinds[1], label_b)):
                prev = runs[key]
                if prev and prev[0]["status"] == "n/a":  # did not start: don't retry
                    res = {**prev[0], "skipped": True}
                else:
                    res = run_one(kind, cell, prof, core)
                    _progress(cell, rep, label, res)
                runs[key].append(res)
        payload["cells"].append(
            {
                "name": cell.name,
                "describe": cell.describe(),
                "unit": cell.unit,
                "higher_is_better": cell.higher_is_better,
                "d": cell.d,
                "c": cell.c,
                "flags": list(cell.flags),
                "runs": runs,
                "summary": summarize(runs["a"], runs["b"]),
            }
        )
        write_json(out_path, payload)
    payload["elapsed_s"] = time.monotonic() - t_start
    table = markdown(payload["cells"], label_a, label_b)
    payload["markdown"] = table
    write_json(out_path, payload)
    print(table)
    print(f"\n({payload['elapsed_s']:.0f} s; JSON: {out_path})")
    failed = sum(
        r["status"] == "error"
        for c in payload["cells"]
        for side in c["runs"].values()
        for r in side
    )
    if failed:
        print(
            f"{failed} run(s) failed: a server errored or answered unexpectedly "
            "(see Failures above)",
            file=sys.stderr,
        )
        return 1
    return 0
