"""Per-queue per-day statistics (qless-core test_stats)."""

from __future__ import annotations

import pytest

from beanpod.core.qless.stats import bucket
from tests.unit.core.qless.conftest import Lua


def test_wait_mean_std_histogram(lua: Lua) -> None:
    for i in range(20):
        lua("put", 0, "w", "q", f"j{i}", "klass", {}, 0)
    for i in range(20):
        lua("pop", i, "q", "w", 1)
    wait = lua("stats", 0, "q", 0)["wait"]
    assert wait["count"] == 20 and wait["mean"] == 9.5
    assert wait["std"] == pytest.approx(5.916079783099)
    assert wait["histogram"][:20] == [1] * 20 and len(wait["histogram"]) == 148


def test_run_failed_failures_and_cancel(lua: Lua) -> None:
    for i in range(3):
        lua("put", 0, "w", "q", f"j{i}", "klass", {}, 0)
        lua("pop", 0, "q", "w", 1)
    lua("complete", 30, "j0", "w", "q", {})
    lua("fail", 30, "j1", "w", "g", "m", {})
    lua("fail", 30, "j2", "w", "g", "m", {})
    stats = lua("stats", 30, "q", 0)
    assert stats["run"]["count"] == 1 and stats["run"]["histogram"][30] == 1
    assert (stats["failed"], stats["failures"]) == (2, 2)
    lua("cancel", 90000, "j1")
    lua("put", 90000, "w", "q", "j2", "klass", {}, 0)
    stats = lua("stats", 90000, "q", 0)
    assert (stats["failed"], stats["failures"]) == (0, 2)


def test_buckets() -> None:
    assert [bucket(s) for s in (0, 59, 60, 3599, 3600, 86399, 86400, 7 * 86400)] == [
        0, 59, 60, 118, 119, 141, 142, None,
    ]  # fmt: skip
