"""What the report shows beyond the output tables, read from the enriched frame in three
small aggregations: the log's time span, throughput at a resolution that fits the span
(seconds to hours), each queue's wait and run percentiles over the whole span, and wait and
run histograms fine enough for millisecond jobs (the tables keep qless's buckets)."""

from __future__ import annotations

import math
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

Row = dict[str, Any]

#: Throughput bucket widths (ms) the report may use; the finest giving at most
#: MAX_POINTS points over the span is taken.
BUCKET_WIDTHS_MS = (1_000, 10_000, 60_000, 300_000, 900_000, 3_600_000)
MAX_POINTS = 240
#: Histogram bins per decade of milliseconds (1, 2.2, 4.6, 10, 22, ... ms).
BINS_PER_DECADE = 3
#: Percentiles in the summary: approximate (relative error 1/ACCURACY), one pass per run.
PERCENTILES = (0.5, 0.95, 0.99)
ACCURACY = 10_000


@dataclass
class ReportExtras:
    first_ts: int | None = None
    last_ts: int | None = None
    bucket_ms: int = 3_600_000
    throughput: list[Row] = field(default_factory=list)  # queue, t (ms), put, reserves, done
    percentiles: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    fine_histograms: list[Row] = field(default_factory=list)  # queue, kind, bin, count


def bucket_width(span_ms: int) -> int:
    """The finest width giving at most MAX_POINTS buckets over `span_ms` (else hourly)."""
    for width in BUCKET_WIDTHS_MS:
        if span_ms // width < MAX_POINTS:
            return width
    return BUCKET_WIDTHS_MS[-1]


def bin_edges_ms(bin_index: int) -> tuple[float, float]:
    """The millisecond range of a fine histogram bin (-1: under 1 ms)."""
    if bin_index < 0:
        return (0.0, 1.0)
    return (10 ** (bin_index / BINS_PER_DECADE), 10 ** ((bin_index + 1) / BINS_PER_DECADE))


def _durations(enriched: DataFrame) -> DataFrame:
    waits = enriched.where(F.col("wait_ms").isNotNull()).select(
        "queue", F.lit("wait").alias("kind"), F.col("wait_ms").alias("ms")
    )
    runs = enriched.where(F.col("run_ms").isNotNull()).select(
        F.col("run_queue").alias("queue"), F.lit("run").alias("kind"), F.col("run_ms").alias("ms")
    )
    return waits.unionByName(runs)


def _bin(ms: Any) -> Any:
    scaled = F.floor(F.log10(ms.cast("double")) * BINS_PER_DECADE)
    return F.when(ms < 1, F.lit(-1)).otherwise(scaled).cast("int")


def collect_extras(enriched: DataFrame, pool: Executor) -> ReportExtras:
    """The report's extra series (driver-side rows: a few per queue and bucket), their
    Spark jobs run on ``pool`` (which must not be waiting for this call)."""
    span = enriched.agg(F.min("ts").alias("first"), F.max("ts").alias("last")).first()
    if span is None or span["first"] is None:
        return ReportExtras()
    extras = ReportExtras(span["first"], span["last"], bucket_width(span["last"] - span["first"]))
    durations = _durations(enriched)
    quantiles = F.percentile_approx("ms", list(PERCENTILES), ACCURACY).alias("q")
    percentiles = pool.submit(rows_of, durations.groupBy("queue", "kind").agg(quantiles))
    fine = durations.groupBy("queue", "kind", _bin(F.col("ms")).alias("bin")).count()
    fine_rows = pool.submit(rows_of, fine)
    if extras.bucket_ms < BUCKET_WIDTHS_MS[-1]:  # hourly: the throughput_hourly table has it
        extras.throughput = rows_of(_throughput(enriched, extras.bucket_ms))
    for row in percentiles.result():
        extras.percentiles[(row["queue"], row["kind"])] = [float(v) for v in row["q"]]
    extras.fine_histograms = fine_rows.result()
    return extras


def rows_of(frame: DataFrame) -> list[Row]:
    """``frame``'s rows as plain dicts (collected: keep it small)."""
    return [r.asDict() for r in frame.collect()]


def _throughput(enriched: DataFrame, width: int) -> DataFrame:
    event = F.col("event")
    return enriched.groupBy("queue", (F.floor(F.col("ts") / width) * width).alias("t")).agg(
        F.sum((event == "put").cast("long")).alias("put"),
        F.sum((event == "reserve").cast("long")).alias("reserves"),
        F.sum(F.col("is_done").cast("long")).alias("done"),
    )


def format_ms(ms: float | None) -> str:
    """A duration for people: 0.4 ms, 12 ms, 1.3 s, 4.2 min, 2.5 h, 3.1 d."""
    if ms is None or math.isnan(ms):
        return "-"
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1_000)):
        if ms >= size:
            return f"{ms / size:.3g} {unit}"
    return f"{ms:.2g} ms" if ms < 10 else f"{ms:.0f} ms"
