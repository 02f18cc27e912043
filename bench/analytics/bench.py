"""Analytics pipeline benchmark: beanpod's PySpark pipeline on local[2] vs DuckDB.

    python -m bench.analytics.bench --events 1000000 10000000

Generates (and caches) synthetic logs under --data, runs the whole pipeline
(all tables + report) and DuckDB running the same queries on the same files
(pip install duckdb; bench only). Prints wall time, events/s and the split between
reading, the per-job window ("join" step) and aggregating/writing.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from bench.analytics.generate import generate

DUCK_READ = """
CREATE OR REPLACE TABLE ev AS
SELECT ts, event, job, queue, conn, delay_ms, worker, state, "group", message,
       filename AS file, row_number() OVER () AS line
FROM read_json('{glob}', format='newline_delimited', filename=true, ignore_errors=true,
     columns={{ts:'BIGINT', event:'VARCHAR', job:'BIGINT', queue:'VARCHAR', conn:'BIGINT',
              delay_ms:'BIGINT', worker:'VARCHAR', state:'VARCHAR', "group":'VARCHAR',
              message:'VARCHAR'}})
WHERE ts IS NOT NULL AND queue IS NOT NULL;
"""
DUCK_WINDOW = """
CREATE OR REPLACE TABLE en AS
WITH w AS (
  SELECT *, (event IN ('release','bury','timeout','complete','fail')
             OR (event='delete' AND state='reserved')) AS is_end,
    last(CASE WHEN event IN ('put','release') THEN ts + coalesce(delay_ms,0)
              WHEN event IN ('kick','timeout') THEN ts END IGNORE NULLS)
      OVER (PARTITION BY job ORDER BY ts, file, line ROWS UNBOUNDED PRECEDING) AS ready,
    last(CASE WHEN event='reserve' THEN struct_pack(ts:=ts, q:=queue, c:=conn, l:=line) END
         IGNORE NULLS) OVER (PARTITION BY job ORDER BY ts, file, line
                             ROWS UNBOUNDED PRECEDING) AS res,
    last(CASE WHEN (event IN ('release','bury','timeout','complete','fail')
                    OR (event='delete' AND state='reserved')) THEN line END IGNORE NULLS)
      OVER (PARTITION BY job ORDER BY ts, file, line
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM ev)
SELECT ts, event, job, queue, conn, worker, "group", message, file, line,
  DATE '1970-01-01' + CAST(floor(ts / 86400000) AS INTEGER) AS day,
  to_timestamp((ts - ts % 3600000) / 1000) AS hour,
  (event='delete' AND state='reserved') OR event='complete' AS is_done,
  CASE WHEN event='reserve' AND ready IS NOT NULL THEN greatest(0, ts - ready) END AS wait_ms,
  CASE WHEN is_end AND res IS NOT NULL AND (prev_end IS NULL OR prev_end < res.l)
       THEN ts - res.ts END AS run_ms,
  res.q AS run_queue, res.c AS run_conn
FROM w;
"""
DUCK_TABLES = {
    "queue_daily": """
WITH d AS (SELECT queue, day, 'wait' AS kind, wait_ms AS ms FROM en WHERE wait_ms IS NOT NULL
           UNION ALL SELECT run_queue, day, 'run', run_ms FROM en WHERE run_ms IS NOT NULL),
s AS (SELECT queue, day, kind, count(*) n, avg(ms) mean, stddev_samp(ms) sd,
        quantile_cont(ms, [0.5, 0.95, 0.99]) p FROM d GROUP BY ALL),
c AS (SELECT queue, day, count_if(event='put') put, count_if(event='reserve') reserves,
        count_if(event='delete') deletes, count_if(event='release') releases,
        count_if(event='bury') buries, count_if(event='kick') kicks,
        count_if(event='timeout') timeouts, count_if(event='complete') completes,
        count_if(event='fail') fails, count_if(event='evict') evictions FROM en GROUP BY ALL)
SELECT c.*, w.n, w.mean, w.sd, w.p, r.n, r.mean, r.sd, r.p FROM c
LEFT JOIN s w ON w.queue=c.queue AND w.day=c.day AND w.kind='wait'
LEFT JOIN s r ON r.queue=c.queue AND r.day=c.day AND r.kind='run'""",
    "histograms": """
WITH d AS (SELECT queue, day, 'wait' AS kind, wait_ms // 1000 AS s FROM en WHERE wait_ms IS NOT NULL
           UNION ALL SELECT run_queue, day, 'run', run_ms // 1000 FROM en WHERE run_ms IS NOT NULL)
SELECT queue, day, kind, CASE WHEN s < 60 THEN 's' || s WHEN s < 3600 THEN 'm' || s // 60
  WHEN s < 86400 THEN 'h' || s // 3600 WHEN s < 604800 THEN 'd' || s // 86400 ELSE 'd7+' END
  AS bucket, count(*) FROM d GROUP BY ALL""",
    "failures": """SELECT queue, day, coalesce("group", '(none)') AS g, count(*),
  arg_max(message, (ts, file, line)) FROM en WHERE event='fail' GROUP BY ALL""",
    "throughput_hourly": """SELECT queue, hour, count_if(event='put'),
  count_if(event='reserve'), count_if(is_done) FROM en GROUP BY ALL""",
    "workers": """
WITH u AS (SELECT conn, day, (event='reserve')::INT r, is_done::INT d, NULL::BIGINT ms FROM en
           WHERE conn IS NOT NULL
           UNION ALL SELECT run_conn, day, 0, 0, run_ms FROM en WHERE run_conn IS NOT NULL),
n AS (SELECT conn, arg_max(worker, (ts, file, line)) worker FROM en
      WHERE event='reserve' AND worker IS NOT NULL AND conn IS NOT NULL GROUP BY conn)
SELECT u.conn, n.worker, day, sum(r), sum(d), coalesce(sum(ms), 0) FROM u
LEFT JOIN n USING (conn) GROUP BY ALL HAVING sum(r) > 0 OR sum(d) > 0 OR count(ms) > 0""",
    "jobs": """SELECT job, arg_min(queue, (ts, file, line)), min(CASE WHEN event='put' THEN ts END),
  arg_max(event, (ts, file, line)), max(ts), count_if(event='reserve'),
  count_if(event='release'), count_if(event='timeout'), count_if(event='bury'),
  count_if(event='kick'), coalesce(sum(wait_ms), 0), coalesce(sum(run_ms), 0)
  FROM en WHERE job IS NOT NULL GROUP BY job""",
}


def run_duckdb(events: Path, out: Path) -> dict[str, float]:
    import duckdb

    con = duckdb.connect()
    con.execute("PRAGMA threads=2")
    seconds: dict[str, float] = {}
    for stage, sql in (("read", DUCK_READ.format(glob=f"{events}/date=*/*.jsonl")),
                       ("window", DUCK_WINDOW)):  # fmt: skip
        started = time.perf_counter()
        con.execute(sql)
        seconds[stage] = time.perf_counter() - started
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    for name, sql in DUCK_TABLES.items():
        con.execute(f"COPY ({sql}) TO '{out}/{name}.parquet' (FORMAT parquet)")
    seconds["aggregate+write"] = time.perf_counter() - started
    return seconds


def run_spark(events: Path, out: Path, spark: object) -> dict[str, float]:
    from beanpod.analytics.pipeline import run

    return run(str(events), str(out), spark=spark)  # type: ignore[arg-type]


def load() -> str:
    """The 1-minute load average (the machine may be shared with other benchmarks)."""
    return Path("/proc/loadavg").read_text().split()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--data", type=Path, default=Path("/tmp/beanpod-bench"))
    parser.add_argument("--skip-duckdb", action="store_true")
    parser.add_argument("--warm", type=int, default=1, help="runs with closed days compacted")
    parser.add_argument(
        "--duckdb-runs", type=int, default=1, help="DuckDB runs (ratios: last and best of each)"
    )
    parser.add_argument(
        "--reuse-cache",
        action="store_true",
        help="keep an existing Parquet cache: warm runs only (no cold run)",
    )
    args = parser.parse_args()
    from beanpod.analytics.pipeline import build_session

    started = time.perf_counter()
    spark = build_session("local[2]")
    print(f"spark session started in {time.perf_counter() - started:.1f}s (load {load()})")
    for n in args.events:
        events = args.data / f"events-{n}"
        if not events.exists():
            started = time.perf_counter()
            generate(events, n)
            print(f"generated {n} events in {time.perf_counter() - started:.0f}s", flush=True)
        out = args.data / f"out-{n}"
        reuse = args.reuse_cache and (out / "spark" / "_events_parquet").exists()
        if not reuse:
            shutil.rmtree(out, ignore_errors=True)
        warm: list[float] = []
        for run in range(int(reuse), 1 + args.warm):  # run 0 compacts closed days to Parquet
            started = time.perf_counter()
            stages = run_spark(events, out / "spark", spark)
            wall = time.perf_counter() - started
            label = "cold" if run == 0 else "warm"
            if run > 0:
                warm.append(wall)
            print(f"spark {label} {n:>10} events: {wall:6.1f}s  {n / wall:>9.0f} events/s  "
                  + "  ".join(f"{k}={v:.1f}" for k, v in stages.items())
                  + f"  (load {load()})", flush=True)  # fmt: skip
        if args.skip_duckdb:
            continue
        ducks: list[float] = []
        for _ in range(args.duckdb_runs):
            started = time.perf_counter()
            duck = run_duckdb(events, out / "duckdb")
            dwall = time.perf_counter() - started
            ducks.append(dwall)
            print(f"duckdb 2 thr   {n:>10} events: {dwall:6.1f}s  {n / dwall:>9.0f} events/s  "
                  + "  ".join(f"{k}={v:.1f}" for k, v in duck.items())
                  + f"  spark/duckdb={wall / dwall:.2f}  (load {load()})", flush=True)  # fmt: skip
        if warm and ducks and len(warm) + len(ducks) > 2:  # best of each: noise only adds
            print(f"best warm spark {min(warm):.1f}s / best duckdb {min(ducks):.1f}s: "
                  f"spark/duckdb={min(warm) / min(ducks):.2f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
