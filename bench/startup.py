"""``python -m bench.startup``: how soon after exec a server accepts a connection and
answers its first command, for beanpod and beanstalkd (p50/p90/p99 over N starts), and the
CPU time the server has used by its first reply (p50, all its threads; from
/proc/PID/task/*/schedstat, so Linux only), which a busy machine disturbs far less than
the wall times.

    python -m bench.startup                    # 20 starts of each
    python -m bench.startup --starts 50 --beanpod-cmd 'beanpod serve'
    python -m bench.startup --starts 40 --against ../before   # this tree and another one
    python -m bench.startup --installed "$VENV/bin/beanpod serve --workq-port off"
    python -m bench.startup --instructions --against ../before   # cachegrind, no timing

`--against DIR` (a checkout, or its src/) adds a row for that tree, started alternately
with this one (A B A B ...), so both see the same machine; give it compiled .so files
built the same way to compare like with like. `--installed CMD` (repeatable) adds a row
for a regular install (a wheel in a venv), run without PYTHONPATH, in the same rotation.
`--instructions` counts instead (bench/startup_probe.py, valgrind): user-space
instructions from exec to the moment the listeners accept and to the moment beanstalkd
serves, every listener on; the same on any x86-64 machine, however busy.

beanpod runs as the installed `beanpod` script next to this Python (not a shell shim:
pyenv's adds tens of ms of its own), with PYTHONPATH=<repo>/src so this tree is measured,
its bytecode compiled first, as an installed package has it (`--from-source` skips that:
with PYTHONDONTWRITEBYTECODE=1 and no __pycache__ every start compiles what it imports).
A third row, "python floor", is a five-line Python server that answers at once: what
the interpreter's own start costs on this machine (with its `site` and .pth files).
"""

from __future__ import annotations

import argparse
import compileall
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GIVE_UP_S = 10.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def connect_soon(port: int, deadline: float) -> socket.socket:
    """Connect as soon as the port accepts (retrying refusals at once)."""
    while True:
        sock = socket.socket()
        try:
            sock.connect(("127.0.0.1", port))
            return sock
        except ConnectionRefusedError:
            sock.close()
            if time.perf_counter() > deadline:
                raise TimeoutError(f"nothing listened on {port} in {GIVE_UP_S} s") from None
            time.sleep(0.0002)


def cpu_ms(pid: int) -> tuple[float, float]:
    """CPU time process `pid` has used so far: every thread, and its main thread alone
    (the scheduler's ns counts: /proc/PID/stat's ticks are 10 ms apart)."""
    ns = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/schedstat", encoding="ascii") as stat:
            ns[task] = int(stat.read().split()[0])
    return sum(ns.values()) / 1e6, ns[str(pid)] / 1e6


Start = tuple[float, float, float, float]


def one_start(argv: list[str], env: dict[str, str]) -> Start:
    """ms to the first accepted connect, ms to the first reply, CPU ms by then (all
    threads, main thread)."""
    port = free_port()
    start = time.perf_counter()
    proc = subprocess.Popen([*argv, "-l", "127.0.0.1", "-p", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        with connect_soon(port, start + GIVE_UP_S) as sock:
            accepted = time.perf_counter()
            sock.sendall(b"list-tube-used\r\n")
            reply = sock.recv(64)
            answered = time.perf_counter()
            cpu, main_cpu = cpu_ms(proc.pid)
        if not reply.startswith(b"USING"):
            raise RuntimeError(f"unexpected reply {reply!r}")
    finally:
        proc.terminate()
        proc.wait()
    return (accepted - start) * 1000, (answered - start) * 1000, cpu, main_cpu


# The floor for any Python server on this machine: the interpreter starts (with `site`,
# and whatever .pth files the installation runs), binds, accepts and answers at once.
PYTHON_FLOOR = (
    "import socket, sys\n"
    "listener = socket.create_server((sys.argv[2], int(sys.argv[4])))\n"
    "conn = listener.accept()[0]\n"
    "conn.recv(64)\n"
    "conn.sendall(b'USING default\\r\\n')\n"
    "conn.recv(1)\n"
)


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (p99 of 20 starts is the slowest)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * pct // 100))
    return ordered[int(rank) - 1]


Run = tuple[str, list[str], dict[str, str]]  # name, argv, environment


def measure(runs: list[Run], starts: int) -> list[str]:
    """One table row per run; the runs are started in turn, `starts` rounds."""
    samples: list[list[Start]] = [[] for _ in runs]
    for _ in range(starts):
        for (_, argv, env), got in zip(runs, samples, strict=True):
            got.append(one_start(argv, env))
    return [_row(name, got) for (name, _, _), got in zip(runs, samples, strict=True)]


def _row(name: str, got: list[Start]) -> str:
    accepts, replies, cpus, main_cpus = (list(column) for column in zip(*got, strict=True))
    cells = [percentile(values, pct) for values in (accepts, replies) for pct in (50, 90, 99)]
    cells += [percentile(cpus, 50), percentile(main_cpus, 50)]
    return f"| {name} | " + " | ".join(f"{v:.1f}" for v in cells) + " |"


def tree_env(src: Path) -> dict[str, str]:
    """The environment that runs beanpod from `src` (compiled first, unless told not to)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(src), os.environ.get("PYTHONPATH")) if p)
    return env


def source_dir(tree: str) -> Path:
    """A checkout's src/ (or the directory itself when it holds beanpod/)."""
    path = Path(tree).resolve()
    return path / "src" if (path / "src" / "beanpod").is_dir() else path


def beanpod_argv(command: str | None) -> list[str]:
    if command:
        return shlex.split(command)
    script = Path(sys.executable).parent / "beanpod"
    return [str(script) if script.exists() else "beanpod", "serve", "--workq-port", "off"]


def count_instructions(trees: list[tuple[str, Path]]) -> int:
    """Instructions from exec to the listeners accepting and to beanstalkd serving."""
    from bench.startup_probe import instructions

    print("| tree | to the listeners accepting | to beanstalkd serving |\n|---|---|---|")
    for name, src in trees:
        counts = [instructions(src, moment) for moment in ("listening", "serving")]
        print(f"| {name} | {counts[0]:,} | {counts[1]:,} |", flush=True)
    return 0


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.startup",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--beanstalkd", default="beanstalkd")
    parser.add_argument("--beanpod-cmd", help="command that starts beanpod (before -l/-p)")
    parser.add_argument("--from-source", action="store_true",
                        help="do not compile the tree's bytecode first")  # fmt: skip
    parser.add_argument("--against", metavar="DIR",
                        help="another checkout (or its src/): its beanpod row too")  # fmt: skip
    parser.add_argument("--installed", metavar="CMD", action="append", default=[],
                        help="a row for an installed beanpod: CMD runs without PYTHONPATH, "
                             "e.g. 'VENV/bin/beanpod serve --workq-port off'")  # fmt: skip
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions to each moment (cachegrind) instead")  # fmt: skip
    opts = parser.parse_args(args)
    trees = [("beanpod", REPO / "src")]
    if opts.against:
        trees.append((f"beanpod {opts.against}", source_dir(opts.against)))
    if not opts.from_source:
        for _, src in trees:
            compileall.compile_dir(src, quiet=1)
    if opts.instructions:
        return count_instructions(trees)
    env = tree_env(REPO / "src")
    argv = beanpod_argv(opts.beanpod_cmd)
    print(f"{opts.starts} starts each; ms after exec (-l 127.0.0.1 -p <free port>); "
          f"load {os.getloadavg()[0]:.1f}\n")  # fmt: skip
    print("| server | accept p50 | p90 | p99 | first reply p50 | p90 | p99 | CPU ms | main |")
    print("|---|---|---|---|---|---|---|---|---|")
    installed = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    runs = [(name, argv, tree_env(src)) for name, src in trees]
    runs += [(f"installed: {cmd}", shlex.split(cmd), installed) for cmd in opts.installed]
    print(*measure(runs, opts.starts), sep="\n")
    print(*measure([("beanstalkd", [opts.beanstalkd], env)], opts.starts), flush=True)
    print(*measure([("python floor", [sys.executable, "-c", PYTHON_FLOOR], env)], opts.starts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
