"""`beanpod analyze` on a small log, end to end: wall and CPU seconds (python + JVM).

Runs the real CLI in its own process (JVM start included) on generated logs, alternating
it with the same pipeline given no log size (the settings large logs get), and reports
each run's wall and CPU. The JVM outlives its Python parent for a moment and is not a
reaped child, so its CPU is read from /proc by sampling every process the run started.

    python -m bench.analytics.small --events 10000 --repeat 2
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.analytics.bench import load
from bench.analytics.generate import generate

TICK = os.sysconf("SC_CLK_TCK")
DEFAULT_SETTINGS = (
    "import sys; from beanpod.analytics.pipeline import run; run(sys.argv[1], sys.argv[2])"
)


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, utime + stime seconds) of a live process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def _processes() -> dict[int, tuple[int, float]]:
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (stat := _stat(int(name))) is not None:
            found[int(name)] = stat
    return found


def measure(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of ``command`` and everything it starts, until all have ended."""
    started = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cpu: dict[int, float] = {proc.pid: 0.0}
    while True:
        live = _processes()
        for pid, (parent, _) in sorted(live.items()):  # children after parents, mostly
            if parent in cpu and pid not in cpu:
                cpu[pid] = 0.0
        for pid in cpu.keys() & live.keys():
            cpu[pid] = max(cpu[pid], live[pid][1])
        if proc.poll() is not None and not (cpu.keys() & live.keys()) - {proc.pid}:
            break
        time.sleep(0.05)
    if proc.wait() != 0:
        raise SystemExit(f"{command} exited {proc.returncode}")
    return time.monotonic() - started, sum(cpu.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="beanpod-small-") as tmp:
        logs = {"3 days": Path(tmp, "days"), "1 minute": Path(tmp, "minute")}
        generate(logs["3 days"], args.events)
        generate(logs["1 minute"], args.events, span_ms=60_000)
        out = str(Path(tmp, "out"))
        for span, log in logs.items():
            variants = {
                "beanpod analyze": [sys.executable, "-m", "beanpod", "analyze",
                                    "--events", str(log), "--out", out],
                "large-log settings": [sys.executable, "-c", DEFAULT_SETTINGS, str(log), out],
            }  # fmt: skip
            for _ in range(args.repeat):
                for name, command in variants.items():
                    wall, cpu = measure(command)
                    print(f"{span:8s} {name:18s} {wall:5.1f}s wall {cpu:5.1f}s cpu "
                          f"(load {load()})", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
