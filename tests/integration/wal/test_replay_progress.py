"""Start-up replay is visible: progress lines while it runs, a summary when it was long,
and the App says it is not ready (the event loop keeps turning) until replay ends."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.durability import progress as replay
from beanpod.durability.progress import ReplayProgress
from beanpod.durability.replay import REPLAY_STEP
from beanpod.durability.wal import Durability, WalSettings
from beanpod.server.app import App
from beanpod.server.config import ServerConfig


async def fill(directory: Path, jobs: int) -> None:
    engine = Engine(MoveCheck())
    # no snapshot at its close: the next start replays the log, which is what is tested
    wal = Durability(
        engine, WalSettings(directory, segment_size=1 << 16, snapshot_min_jobs=jobs + 1)
    )
    wal.open(0)
    tube = engine.tube("t")
    for _ in range(jobs):
        engine.put(None, tube, 0, 0, 1000, b"x" * 50, 0)
    await wal.aclose()


async def open_and_close(wal: Durability) -> None:
    wal.open(0)
    await wal.aclose()


class StepClock:
    """A monotonic clock that advances `step` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.t = 0.0
        self.step = step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def test_progress_lines_name_segment_jobs_and_rate(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    jobs = 3 * REPLAY_STEP
    asyncio.run(fill(tmp_path, jobs))
    engine = Engine(MoveCheck())
    wal = Durability(engine, WalSettings(tmp_path))
    wal.progress = ReplayProgress(clock=StepClock(replay.EVERY_S))  # every read: 1 s later
    with caplog.at_level(logging.INFO, logger="beanpod.wal"):
        asyncio.run(open_and_close(wal))
    lines = [r.getMessage() for r in caplog.records if "WAL replay" in r.getMessage()]
    progress = [line for line in lines if "so far" in line]
    assert len(progress) >= 3, lines
    assert f"of {wal.progress.segments}," in progress[0] and "MB/s" in progress[0]
    assert f"{jobs} jobs so far" in progress[-1]
    assert lines[-1].startswith("WAL replay done:") and f"{jobs} jobs" in lines[-1]
    assert not wal.progress.replaying and len(engine.jobs) == jobs


def test_a_short_replay_says_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    asyncio.run(fill(tmp_path, 10))
    wal = Durability(Engine(MoveCheck()), WalSettings(tmp_path))
    with caplog.at_level(logging.INFO, logger="beanpod.wal"):
        asyncio.run(open_and_close(wal))
    assert not [r for r in caplog.records if "WAL replay" in r.getMessage()]


def test_app_is_not_ready_while_replaying_and_the_loop_keeps_turning(tmp_path: Path) -> None:
    jobs = 3 * REPLAY_STEP
    asyncio.run(fill(tmp_path, jobs))

    async def start_and_watch() -> list[tuple[bool, bool, int]]:
        app = App(ServerConfig(address="127.0.0.1", port=0, workq_port=None, check_moves=True,
                               binlog_dir=str(tmp_path)))  # fmt: skip
        starting = asyncio.create_task(app.start(install_signals=False))
        seen = []
        while not starting.done():
            seen.append((app.readiness.serving, app.replay.replaying, app.replay.records))
            await asyncio.sleep(0)
        await starting
        seen.append((app.readiness.serving, app.replay.replaying, app.replay.records))
        app.stop()
        await app.serve_until_stopped()
        return seen

    seen = asyncio.run(start_and_watch())
    during = [records for ready, replaying, records in seen if replaying and not ready]
    assert any(0 < records < jobs for records in during), seen[:5]
    assert seen[-1][:2] == (True, False)
