"""How long a `/metrics` scrape takes on a big server: 1,000 tubes, 1M jobs in every state
(ready, delayed, reserved, buried), wait/run histograms filled, over a real socket.

    python -m bench.metrics_scrape [--tubes 1000] [--jobs 1000000] [--scrapes 20]
                                   [--max-tubes 500]

Runs the real server (App with its HTTP listener on 127.0.0.1:0) on an event loop in this
process; jobs are put through the engine directly (faster than the wire, same state); a
client thread times each GET /metrics from request to last byte. Prints min, median and
max in ms, and the size of the answer. Target (issue 14): < 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import statistics
import threading
import time
from concurrent.futures import Future

from beanpod.server.app import App
from beanpod.server.config import ServerConfig


def fill(app: App, tubes: int, jobs: int) -> None:
    """`jobs` jobs spread over `tubes` tubes: 70% ready, 10% each delayed, reserved (then
    deleted or kept, so the wait and run histograms fill) and buried."""
    engine, now = app.engine, app.clock.now()
    conn = engine.connect()
    names = [f"tube-{i:04d}" for i in range(tubes)]
    for i in range(jobs):
        tube = engine.tube(names[i % tubes])
        kind = (i // tubes) % 10  # every tube gets jobs of every kind
        job = engine.put(conn, tube, i % 2048, 3_600_000 if kind == 7 else 0, 60_000, b"x", now)
        if kind >= 8:
            engine.reserve_job(conn, job.id, now + i % 5000)
            if kind == 9:
                engine.bury(conn, job.id, job.pri, now + 5000 + i % 700)
    for job_id in list(conn.reserved)[::2]:  # some runs end in a delete
        engine.delete(conn, job_id, now + 9000)
    for _ in range(jobs // 10):
        engine.put(conn, engine.tube(names[0]), 0, 0, 60_000, b"x", now)


def scrape(port: int) -> tuple[float, int]:
    started = time.perf_counter()
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    client.request("GET", "/metrics")
    body = client.getresponse().read()
    client.close()
    return time.perf_counter() - started, len(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tubes", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--scrapes", type=int, default=20)
    parser.add_argument("--max-tubes", type=int, default=500, help="--metrics-max-tubes")
    args = parser.parse_args()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    config = ServerConfig(port=0, workq_port=None, http=("127.0.0.1", 0),
                          metrics_max_tubes=args.max_tubes)  # fmt: skip
    app = App(config)
    asyncio.run_coroutine_threadsafe(app.start(install_signals=False), loop).result()
    assert app.http is not None
    port = int(app.http.address.rsplit(":", 1)[1])
    started = time.perf_counter()
    done: Future[None] = Future()
    loop.call_soon_threadsafe(lambda: done.set_result(fill(app, args.tubes, args.jobs)))
    done.result()
    print(f"filled {args.jobs:,} jobs in {args.tubes:,} tubes in "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    scrape(port)  # the first one builds the registry's caches
    times, size = [], 0
    for _ in range(args.scrapes):
        seconds, size = scrape(port)
        times.append(seconds * 1000)
    print(f"/metrics: {size:,} bytes; min {min(times):.1f} ms, median "
          f"{statistics.median(times):.1f} ms, max {max(times):.1f} ms "
          f"over {args.scrapes} scrapes")  # fmt: skip
    app.stop()
    asyncio.run_coroutine_threadsafe(app.serve_until_stopped(), loop).result()
    loop.call_soon_threadsafe(loop.stop)


if __name__ == "__main__":
    main()
