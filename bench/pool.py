"""Run load-generator workers in separate processes and merge their results."""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
import traceback
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from typing import Any

from bench.loadgen import Result
from bench.wire import IO_TIMEOUT, LoadError

WorkerFn = Callable[..., Result]
_CTX = mp.get_context("fork")
START_TIMEOUT = 30.0


@dataclass
class Task:
    fn: WorkerFn
    kwargs: dict[str, Any] = field(default_factory=dict)
    counts: bool = True  # whether this worker's ops count towards the cell's total


@dataclass
class PoolResult:
    ops: int
    wall: float
    loader_cpu: float
    results: list[Result]
    latencies_ns: list[int]

    @property
    def rate(self) -> float:
        return self.ops / self.wall if self.wall > 0 else 0.0


def _child(
    fn: WorkerFn, port: int, kwargs: dict[str, Any], barrier: Barrier, conn: Connection
) -> None:
    def ready() -> None:
        barrier.wait(START_TIMEOUT)

    try:
        res = fn(port, ready, **kwargs)
    except BaseException as exc:  # report everything, including LoadError
        barrier.abort()
        detail = str(exc) if isinstance(exc, LoadError) else traceback.format_exc(limit=3)
        res = {"error": f"{type(exc).__name__}: {detail}"}
    conn.send(res)
    conn.close()
    os._exit(0)


def run_tasks(
    port: int,
    tasks: list[Task],
    duration: float,
    on_start: Callable[[], None] | None = None,
    extra_fds: tuple[int, ...] = (),
) -> PoolResult:
    """Start one process per task, release them together, collect results.

    ``on_start`` runs in the parent right after the start barrier (used to
    sample the server's CPU counters).  Raises :class:`LoadError` if any worker
    failed; the message carries the worker's error.
    """
    barrier = _CTX.Barrier(len(tasks) + 1)
    procs: list[tuple[Any, Connection]] = []
    for task in tasks:
        parent_end, child_end = _CTX.Pipe(duplex=False)
        proc = _CTX.Process(
            target=_child, args=(task.fn, port, task.kwargs, barrier, child_end), daemon=True
        )
        proc.start()
        child_end.close()
        procs.append((proc, parent_end))
    for fd in extra_fds:  # pipe ends only the children use
        os.close(fd)
    errors: list[str] = []
    try:
        barrier.wait(START_TIMEOUT)
    except threading.BrokenBarrierError:
        errors.append("start barrier broken (a worker failed during setup)")
    if on_start is not None and not errors:
        on_start()
    results: list[tuple[Task, Result]] = []
    limit = time.monotonic() + duration + IO_TIMEOUT + START_TIMEOUT
    for task, (proc, conn) in zip(tasks, procs, strict=True):
        left = max(0.1, limit - time.monotonic())
        if conn.poll(left):
            res = conn.recv()
            if "error" in res:
                errors.append(res["error"])
            else:
                results.append((task, res))
        else:
            errors.append("worker did not report in time")
            proc.kill()
        proc.join(5)
    if errors:
        raise LoadError("; ".join(dict.fromkeys(errors)))
    lat: list[int] = []
    for _, res in results:
        if res["lat"]:
            arr = array("q")
            arr.frombytes(res["lat"])
            lat.extend(arr)
    t0 = min(r["t0"] for _, r in results)
    t1 = max(r["t1"] for _, r in results)
    return PoolResult(
        ops=sum(r["ops"] for t, r in results if t.counts),
        wall=t1 - t0,
        loader_cpu=sum(r["cpu"] for _, r in results),
        results=[r for _, r in results],
        latencies_ns=lat,
    )
