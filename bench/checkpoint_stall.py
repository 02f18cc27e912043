"""How long a cluster node's checkpoint stalls its event loop, by how it is encoded.

    python -m bench.checkpoint_stall [--jobs 100000] [--repeat 5]

Fills an engine with `--jobs` ready jobs (100-byte bodies), then, while a ticker on the
loop wakes every millisecond and records how late it woke, takes checkpoints of it to a
temporary directory (the node's own code: durability/cluster/forked.py, checkpoint.py):

* `loop`: encoded on the loop, written by a thread (how a node did it before);
* `thread`: encoded and written by a thread from the live engine (only safe because this
  loop changes nothing meanwhile: a node's would; it shows what the GIL leaves the loop);
* `fork`: encoded and written by a forked child (how a node does it now);
* `none`: no checkpoint, 300 ms of ticks (how late the ticker wakes on this machine anyway).

Prints, per way, the longest stall of the loop (ms) and how long the checkpoint took.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from beanpod.core.engine import Engine
from beanpod.durability import snapshot as snapshot_payload
from beanpod.durability.cluster import checkpoint, forked

Way = Callable[[Engine, Path], Awaitable[None]]


def filled(jobs: int) -> Engine:
    engine = Engine()
    conn = engine.connect()
    for _ in range(jobs):
        engine.put(conn, conn.use, 0, 0, 60_000, b"x" * 100, 1000)
    return engine


def encoder(engine: Engine) -> Callable[[], list[bytes]]:
    return lambda: snapshot_payload.encode(engine, {}, {})


async def nothing(engine: Engine, directory: Path) -> None:
    await asyncio.sleep(0.3)  # the noise floor: how late the ticker wakes anyway


async def on_loop(engine: Engine, directory: Path) -> None:
    payload = encoder(engine)()
    await asyncio.to_thread(checkpoint.write, directory, 1, payload)


async def in_thread(engine: Engine, directory: Path) -> None:
    payload = await asyncio.to_thread(encoder(engine))
    await asyncio.to_thread(checkpoint.write, directory, 1, payload)


async def in_child(engine: Engine, directory: Path) -> None:
    child = forked.fork(encoder(engine), directory)
    child.covers(1)
    assert await child.result() > 0


async def stall(way: Way, engine: Engine, directory: Path) -> tuple[float, float]:
    """(the loop's longest late wake-up, the checkpoint's time), both in ms."""
    late: list[float] = []
    done = False

    async def tick() -> None:
        while not done:
            due = time.perf_counter() + 0.001
            await asyncio.sleep(0.001)
            late.append(time.perf_counter() - due)

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.05)
    late.clear()
    started = time.perf_counter()
    await way(engine, directory)
    took = time.perf_counter() - started
    await asyncio.sleep(0.05)
    done = True
    await ticker
    return max(late) * 1000, took * 1000


async def main_async(jobs: int, repeat: int) -> None:
    engine = filled(jobs)
    ways: dict[str, Way] = {"none": nothing, "loop": on_loop, "thread": in_thread,
                            "fork": in_child}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="beanpod-stall-") as tmp:
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
        for _ in range(repeat):
            for name, way in ways.items():
                results[name].append(await stall(way, engine, Path(tmp)))
    print(f"{jobs:,} jobs of 100 bytes, {repeat} checkpoints each; min-max (median)\n")
    print("| way | the loop's longest stall (ms) | the checkpoint took (ms) |\n|---|---|---|")
    for name, runs in results.items():
        stalls, took = [r[0] for r in runs], [r[1] for r in runs]
        print(f"| {name} | {_span(stalls)} | {_span(took)} |")


def _span(values: list[float]) -> str:
    return f"{min(values):.1f}-{max(values):.1f} ({statistics.median(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main_async(args.jobs, args.repeat))


if __name__ == "__main__":
    main()
