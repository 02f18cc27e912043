"""Synthetic beanpod event logs for the analytics benchmark.

    python -m bench.analytics.generate --events 1000000 --out /tmp/beanpod-bench/events-1M

Jobs arrive at a steady rate over ``--days`` UTC days (so the log crosses midnights),
are reserved by named workers, and end in deletes, completes, releases, timeouts,
bury+kick, fails (with groups, some retried) or TTL evictions. Written through the
server's own ``EventWriter``, so the files have the real layout and rotation.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from beanpod.events.writer import EventWriter

DAY_MS = 86_400_000
START_MS = 1_735_689_600_000  # 2025-01-01T00:00:00Z
GROUPS = ("timeout-upstream", "bad-input", "oom", None)
CHUNK_JOBS = 5_000


class _Job:
    """Emits one job's events, in order, into a list of (ts, kind, args)."""

    def __init__(self, rng: random.Random, job: int, queue: str, t: int, workers: int) -> None:
        self.rng, self.job, self.queue, self.t, self.workers = rng, job, queue, t, workers
        self.out: list[tuple[int, int, str, tuple[object, ...]]] = []

    def add(self, event: str, conn: int | None, **extra: object) -> None:
        self.out.append((self.t, len(self.out), event, (self.job, self.queue, conn, extra)))

    def run(self) -> None:
        rng = self.rng
        delay = 0 if rng.random() < 0.8 else rng.randrange(1_000, 60_000)
        self.add("put", rng.randrange(1, 10), pri=1024, delay_ms=delay, ttr_ms=60_000,
                 bytes=rng.randrange(10, 2_000), uuid=None)  # fmt: skip
        if rng.random() < 0.01:
            self.t += delay + 3_600_000
            self.add("evict", None)
            return
        ready = self.t + delay
        for _attempt in range(5):
            wait = int(rng.expovariate(1 / 2_000)) if rng.random() < 0.97 else rng.randrange(10**7)
            self.t = max(self.t, ready) + wait
            conn = 100 + rng.randrange(self.workers)
            if conn % 2:  # a named worker (qless, Workq); a plain beanstalkd client is not
                self.add("reserve", conn, worker=f"worker-{conn - 100}")
            else:
                self.add("reserve", conn, worker=None, peer=f"10.0.0.{conn - 100}:{conn + 40000}")
            self.t += int(rng.expovariate(1 / 500))
            ready = self._outcome(conn)
            if ready is None:
                return
        self.add("delete", conn, state="reserved")

    def _outcome(self, conn: int) -> int | None:
        """End the reservation; the next ready time, or None when the job is finished."""
        r = self.rng.random()
        if r < 0.70:
            self.add("delete", conn, state="reserved")
        elif r < 0.80:
            self.add("complete", conn, bytes=self.rng.randrange(100))
        elif r < 0.86:
            delay = self.rng.choice((0, 5_000))
            self.add("release", conn, pri=1024, delay_ms=delay)
            return self.t + delay
        elif r < 0.90:
            self.t += 60_000
            self.add("timeout", None)
            return self.t
        elif r < 0.93:
            self.add("bury", conn, pri=1024)
            self.t += self.rng.randrange(60_000, 600_000)
            self.add("kick", 1, **{"from": "buried"})
            return self.t
        else:
            group = self.rng.choice(GROUPS)
            self.add("fail", conn, group=group, message=f"{group} happened", bytes=None)
            if self.rng.random() < 0.5:
                self.add("release", conn, pri=1024, delay_ms=1_000)
                return self.t + 1_000
        return None


def generate(
    out: Path, events: int, days: int = 3, queues: int = 8, seed: int = 7,
    span_ms: int | None = None,
) -> int:  # fmt: skip
    """Write about ``events`` events under ``out`` (jobs arriving over ``days``, or over
    ``span_ms`` when given); return the exact count."""
    rng = random.Random(seed)
    jobs_needed = max(1, events * 10 // 32)  # about 3.2 events per job
    step = (span_ms if span_ms is not None else days * DAY_MS) / jobs_needed
    written, job = 0, 0
    with EventWriter(out) as writer:
        while written < events:
            batch: list[tuple[int, int, str, tuple[object, ...]]] = []
            for _ in range(CHUNK_JOBS):
                job += 1
                sim = _Job(rng, job, f"q{rng.randrange(queues)}", START_MS + int(job * step), 50)
                sim.run()
                batch.extend(sim.out)
            batch.sort(key=lambda e: (e[0], e[3][0], e[1]))
            for ts, _, event, (job_id, queue, conn, extra) in batch[: events - written]:
                writer.emit(ts, event, job_id, queue, conn, **extra)  # type: ignore[arg-type]
            written += min(len(batch), events - written)
            writer.flush()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--days", type=int, default=3)
    parser.add_argument("--minutes", type=float, help="arrivals over this many minutes instead")
    args = parser.parse_args()
    started = time.perf_counter()
    span = None if args.minutes is None else int(args.minutes * 60_000)
    count = generate(args.out, args.events, args.days, span_ms=span)
    print(f"{count} events in {time.perf_counter() - started:.1f}s under {args.out}")


if __name__ == "__main__":
    main()
