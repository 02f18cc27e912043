"""Time the pipeline's stages in one Spark session, for same-session comparisons.

    python -m bench.analytics.stages --events 10000000 --rounds 3

Reads the Parquet cache that ``bench.py`` left under ``--data`` (run it once first), builds
and caches the per-job window, then sends every table to Spark's ``noop`` sink, ``--rounds``
times in one session (the first round runs on a JIT-cold JVM), printing each time with the
JVM's CPU seconds (its threads on both cores, GC included: steadier than wall time when the
machine is shared) and the 1-minute load average. Only figures from one session compare.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pyspark import StorageLevel

from beanpod.analytics import compact, pipeline, transforms
from bench.analytics.bench import load
from bench.servers import cpu_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--data", type=Path, default=Path("/tmp/beanpod-bench"))
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    spark = pipeline.build_session("local[2]")
    jvm_pid: int = spark.sparkContext._gateway.proc.pid  # type: ignore[union-attr]

    def report(r: int, name: str, started: float, cpu: float) -> None:
        wall, used = time.perf_counter() - started, cpu_seconds(jvm_pid) - cpu
        print(f"round {r} {name:17s} {wall:6.1f}s  cpu {used:6.1f}s  (load {load()})")

    events_uri = str(args.data / f"events-{args.events}")
    cache = compact.cache_uri(str(args.data / f"out-{args.events}" / "spark"))
    for r in range(args.rounds):
        started, cpu = time.perf_counter(), cpu_seconds(jvm_pid)
        read, partials = pipeline.read_log(spark, events_uri, None, None, cache)
        events = pipeline.in_range(read, None, None)
        enriched = transforms.with_reservation_times(events)
        enriched.persist(StorageLevel.MEMORY_AND_DISK).count()
        report(r, "window + cache", started, cpu)
        hourly = transforms.hourly_counters(enriched).persist(StorageLevel.MEMORY_AND_DISK)
        for name, table in pipeline.build_tables(events, enriched, partials, hourly).items():
            started, cpu = time.perf_counter(), cpu_seconds(jvm_pid)
            table.write.format("noop").mode("overwrite").save()
            report(r, name, started, cpu)
        hourly.unpersist()
        enriched.unpersist()


if __name__ == "__main__":
    main()
