"""spark-submit entry point (the master comes from spark-submit, never from this code).

    spark-submit --master spark://HOST:7077 --py-files beanpod-analytics.zip \\
        job.py --events hdfs:///beanpod/events --out hdfs:///beanpod/analytics
"""

import argparse
from datetime import date

from beanpod.analytics.pipeline import Progress, run


def _print(p: Progress) -> None:
    done = "" if p.seconds is None else f" done in {p.seconds:.1f}s"
    print(f"[{p.index}/{p.total}] {p.stage}{done}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="beanpod-analytics-job")
    parser.add_argument("--events", required=True, help="event log URI")
    parser.add_argument("--out", required=True, help="output URI")
    parser.add_argument("--from", dest="day_from", type=date.fromisoformat, default=None)
    parser.add_argument("--to", dest="day_to", type=date.fromisoformat, default=None)
    args = parser.parse_args(argv)
    run(args.events, args.out, day_from=args.day_from, day_to=args.day_to, progress=_print)


if __name__ == "__main__":
    main()
