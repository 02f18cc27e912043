"""Crash tests: kill -9 (and SIGTERM) a real server process under concurrent load, restart
it on the same log, and check every acknowledged reply against the restored state."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from tests.support.crashload import Load, Model, check_restart
from tests.support.servers import SubprocessServer

pytestmark = pytest.mark.timeout(180)


def serve(wal: Path, *flags: str) -> SubprocessServer:
    return SubprocessServer(["-b", str(wal), "-s", "65536", "--workq-port", "off", *flags]).start()


def run_rounds(tmp_path: Path, rounds: int, flags: tuple[str, ...], how: str, seed: int) -> None:
    rng = random.Random(seed)
    model = Model()
    wal = tmp_path / "wal"
    for n in range(rounds):
        server = serve(wal, *flags)
        if n:
            check_restart(server.port, model)
        load = Load(server.port, model, seed=rng.randrange(1 << 30)).start()
        time.sleep(rng.uniform(0.15, 0.6))
        if how == "idle":
            load.stop()
            time.sleep(0.05)
        if how == "term":
            server.stop()
        else:
            server.kill()
        load.join()
    server = serve(wal, *flags)
    try:
        check_restart(server.port, model)
        assert model.acks > 100, "the load should have done something"
    finally:
        server.stop()


def test_kill_9_under_load_fsync_always(tmp_path: Path) -> None:
    run_rounds(tmp_path, rounds=8, flags=("-f", "0"), how="kill", seed=1)


def test_kill_9_under_load_default_fsync(tmp_path: Path) -> None:
    run_rounds(tmp_path, rounds=4, flags=(), how="kill", seed=2)


def test_kill_9_when_idle(tmp_path: Path) -> None:
    run_rounds(tmp_path, rounds=3, flags=("-f", "0"), how="idle", seed=3)


def test_sigterm_under_load(tmp_path: Path) -> None:
    run_rounds(tmp_path, rounds=3, flags=("-f", "0"), how="term", seed=4)
