"""Time the pipeline's stages in one Spark session, for same-session comparisons.

    PYTHONPATH=src python bench/analytics/stages.py --events 10000000 --rounds 3

Reads the Parquet cache that ``bench.py`` left under ``--data`` (run it once first), builds
and caches the per-job window, then sends every table to Spark's ``noop`` sink, ``--rounds``
times in one session (the first round runs on a JIT-cold JVM), printing each time with the
1-minute load average: on a shared machine only figures from the same session compare.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench import load  # bench/analytics/bench.py, beside this script (as it imports generate)
from pyspark import StorageLevel

from beanpod.analytics import compact, pipeline, transforms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--data", type=Path, default=Path("/tmp/beanpod-bench"))
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    spark = pipeline.build_session("local[2]")
    events_uri = str(args.data / f"events-{args.events}")
    cache = compact.cache_uri(str(args.data / f"out-{args.events}" / "spark"))
    for r in range(args.rounds):
        started = time.perf_counter()
        read = pipeline.read_frame(spark, events_uri, None, None, cache)
        events = pipeline.in_range(read, None, None)
        enriched = transforms.with_reservation_times(events)
        enriched.persist(StorageLevel.MEMORY_AND_DISK).count()
        print(f"round {r} window + cache {time.perf_counter() - started:6.1f}s  (load {load()})")
        for name, table in pipeline.build_tables(events, enriched).items():
            started = time.perf_counter()
            table.write.format("noop").mode("overwrite").save()
            print(f"round {r} {name:17s} {time.perf_counter() - started:6.1f}s  (load {load()})")
        enriched.unpersist()


if __name__ == "__main__":
    main()
