"""Benchmark cells: what each one runs against a server and what it measures."""

from __future__ import annotations

import fnmatch
import os
import time
from dataclasses import dataclass
from typing import Any

from bench.loadgen import (
    consumer_worker,
    fill_worker,
    producer_worker,
    put_worker,
    reserve_delete_worker,
)
from bench.pool import PoolResult, Task, run_tasks
from bench.servers import RunningServer, ServerError, core_busy_seconds


@dataclass(frozen=True)
class Profile:
    """How long things run.  ``duration`` is the timed window of each cell."""

    duration: float
    fill_seconds: float  # reserve+delete cells: at most this long pre-filling
    fill_cap: int  # ... and at most this many jobs
    rss_jobs: int
    rss_max_seconds: float


DEFAULT = Profile(
    duration=2.0, fill_seconds=2.0, fill_cap=2_000_000, rss_jobs=1_000_000, rss_max_seconds=120.0
)
QUICK = Profile(
    duration=0.4, fill_seconds=0.4, fill_cap=200_000, rss_jobs=100_000, rss_max_seconds=20.0
)

WAL_MODES: dict[str, tuple[str, ...]] = {
    "": (),
    "_wal": ("-b", "{wal}"),
    "_walf0": ("-b", "{wal}", "-f", "0"),
}
#: ``beanpod serve --events DIR`` into the server's fresh data directory.
EVENTS_FLAGS = ("--events", "{wal}")


@dataclass(frozen=True)
class Cell:
    name: str
    kind: str  # "put" | "rd" (reserve+delete) | "rt" (round trip) | "rss"
    d: int = 1
    c: int = 1
    flags: tuple[str, ...] = ()

    @property
    def unit(self) -> str:
        return {"put": "puts/s", "rd": "pairs/s", "rt": "jobs/s", "rss": "bytes/job"}[self.kind]

    @property
    def higher_is_better(self) -> bool:
        return self.kind != "rss"

    def describe(self) -> str:
        what = {
            "put": "put 100 B",
            "rd": "reserve+delete",
            "rt": "producer→consumer",
            "rss": "RSS after puts of 100 B",
        }[self.kind]
        wal = " ".join(self.flags).replace("{wal}", "DIR")
        where = f" d={self.d} c={self.c}" if self.kind != "rss" else ""
        return f"{what}{where}" + (f" `{wal}`" if wal else "")


def _all_cells() -> list[Cell]:
    cells: list[Cell] = []
    for suffix, flags in WAL_MODES.items():
        cells += [
            Cell(f"put_d1_c1{suffix}", "put", 1, 1, flags),
            Cell(f"put_d64_c4{suffix}", "put", 64, 4, flags),
            Cell(f"rd_d1_c1{suffix}", "rd", 1, 1, flags),
            Cell(f"rd_d64_c4{suffix}", "rd", 64, 4, flags),
        ]
        if not suffix:
            cells += [
                Cell("rt_d1_c8", "rt", 1, 8),
                Cell("rt_d16_c8", "rt", 16, 8),
                Cell("rss_1m", "rss"),
            ]
    # The job event log on (issue 7): compare with put_d64_c4 / rd_d64_c4 of the same run
    # (bench/events_overhead.py); beanstalkd has no --events, so its side is n/a.
    cells += [
        Cell("put_d64_c4_ev", "put", 64, 4, EVENTS_FLAGS),
        Cell("rd_d64_c4_ev", "rd", 64, 4, EVENTS_FLAGS),
    ]
    return cells


ALL_CELLS = _all_cells()


def select_cells(spec: str | None) -> list[Cell]:
    """Comma-separated names or glob patterns (``put_*``, ``*_walf0``)."""
    if not spec:
        return list(ALL_CELLS)
    patterns = [p.strip() for p in spec.split(",") if p.strip()]
    chosen = [c for c in ALL_CELLS if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]
    unknown = [p for p in patterns if not any(fnmatch.fnmatchcase(c.name, p) for c in ALL_CELLS)]
    if unknown:
        names = ", ".join(c.name for c in ALL_CELLS)
        raise SystemExit(f"unknown cell(s) {', '.join(unknown)}; known: {names}")
    return chosen


def percentile(sorted_values: list[int], q: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return float("nan")
    rank = max(1, -(-len(sorted_values) * q // 100))
    return float(sorted_values[int(rank) - 1])


class _Sampler:
    """Server CPU time plus busy time of the server and load cores."""

    def __init__(self, server: RunningServer) -> None:
        self.server = server
        load = sorted(os.sched_getaffinity(0))
        self.cores = (server.core, load[0]) if server.core is not None and len(load) == 1 else ()
        self.cpu0 = 0.0
        self.busy0: list[float] = []

    def start(self) -> None:
        self.cpu0 = self.server.cpu_seconds()
        self.busy0 = core_busy_seconds(self.cores) if self.cores else []

    def stop(self) -> tuple[float, list[float]]:
        cpu = self.server.cpu_seconds() - self.cpu0
        busy = core_busy_seconds(self.cores) if self.cores else []
        return cpu, [b - a for a, b in zip(self.busy0, busy, strict=True)]


def _timed(
    server: RunningServer,
    port: int,
    tasks: list[Task],
    duration: float,
    extra_fds: tuple[int, ...] = (),
) -> dict[str, Any]:
    sampler = _Sampler(server)
    res = run_tasks(port, tasks, duration, sampler.start, extra_fds)
    cpu, busy = sampler.stop()
    if not server.alive():
        raise ServerError(f"server died during the cell: {server.log_tail()}")
    return _summary(res, cpu, res.rate, busy)


def _summary(
    res: PoolResult, server_cpu: float, value: float, core_busy: list[float] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "value": value,
        "ops": res.ops,
        "wall_s": res.wall,
        "server_cpu_s": server_cpu,
        "cpu_us_per_op": server_cpu / res.ops * 1e6 if res.ops else None,
        "server_cpu_util": server_cpu / res.wall if res.wall else None,
        "loader_cpu_util": res.loader_cpu / res.wall if res.wall else None,
    }
    if core_busy and res.wall:
        # Busy time on each core that neither the server nor the load workers
        # account for: other processes on the machine, plus some kernel work
        # (softirq) not charged to any process.  High values mean a noisy run.
        out["other_util_server_core"] = core_busy[0] / res.wall - out["server_cpu_util"]
        out["other_util_load_core"] = core_busy[1] / res.wall - out["loader_cpu_util"]
    if res.latencies_ns:
        lat = sorted(res.latencies_ns)
        out["p50_us"] = percentile(lat, 50) / 1e3
        out["p99_us"] = percentile(lat, 99) / 1e3
        out["latency_samples"] = len(lat)
    return out


def _fill(server: RunningServer, count: int, seconds: float, conns: int = 1) -> PoolResult:
    per = -(-count // conns)
    tasks = [Task(fill_worker, {"count": per, "duration": seconds}) for _ in range(conns)]
    return run_tasks(server.port, tasks, seconds)


def measure(cell: Cell, server: RunningServer, prof: Profile) -> dict[str, Any]:
    """Run one cell against a started server; return its measurements."""
    port = server.port
    if cell.kind == "put":
        kw = {"d": cell.d, "duration": prof.duration, "latency": cell.d == 1}
        return _timed(server, port, [Task(put_worker, kw) for _ in range(cell.c)], prof.duration)

    if cell.kind == "rd":
        filled = _fill(server, prof.fill_cap, prof.fill_seconds)
        quota = filled.ops // cell.c
        kw = {"d": cell.d, "duration": prof.duration, "quota": quota, "latency": cell.d == 1}
        tasks = [Task(reserve_delete_worker, kw) for _ in range(cell.c)]
        out = _timed(server, port, tasks, prof.duration)
        out["prefilled"] = filled.ops
        out["prefill_rate"] = filled.rate
        out["quota_exhausted"] = out["ops"] == quota * cell.c
        return out

    if cell.kind == "rt":
        tasks = []
        fds: list[int] = []
        for i in range(cell.c // 2):
            r, w = os.pipe()
            fds += [r, w]
            tube = b"rt%d" % i
            tasks.append(
                Task(
                    producer_worker,
                    {
                        "tube": tube,
                        "d": cell.d,
                        "window": 2 * cell.d,
                        "duration": prof.duration,
                        "credit_fd": r,
                    },
                    counts=False,
                )
            )
            tasks.append(
                Task(
                    consumer_worker,
                    {"tube": tube, "d": cell.d, "duration": prof.duration, "credit_fd": w},
                )
            )
        return _timed(server, port, tasks, prof.duration, tuple(fds))

    if cell.kind == "rss":
        time.sleep(0.2)
        before = server.rss_bytes()
        cpu0 = server.cpu_seconds()
        filled = _fill(server, prof.rss_jobs, prof.rss_max_seconds, conns=2)
        cpu = server.cpu_seconds() - cpu0
        time.sleep(0.5)
        after = server.rss_bytes()
        if not server.alive():
            raise ServerError(f"server died during the cell: {server.log_tail()}")
        out = _summary(filled, cpu, (after - before) / filled.ops if filled.ops else 0.0)
        out.update(rss_before=before, rss_after=after, put_rate=filled.rate)
        out["complete"] = filled.ops >= prof.rss_jobs
        return out

    raise ValueError(cell.kind)
