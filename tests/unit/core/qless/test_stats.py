"""Per-queue per-day statistics (qless-core test_stats)."""

from __future__ import annotations

import pytest

from beanpod.core.qless.api import call
from beanpod.core.qless.stats import bucket
from tests.unit.core.qless.conftest import Lua
from tests.unit.core.qless.journal_support import StateJournal, restarted


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


# ---- persistence (STATE records `qless.stats/<day>/<queue>`) ---------------------------


def test_stats_are_journalled_and_restored(lua: Lua) -> None:
    journal = StateJournal()
    lua.engine.journal = journal
    for i in range(3):
        lua("put", 0, "w", "q/x", f"j{i}", "klass", {}, 0)
    lua("pop", 4, "q/x", "w", 3)
    lua("complete", 10, "j0", "w", "q/x", {})
    lua("fail", 10, "j1", "w", "g", "m", {})
    lua("retry", 10, "j2", "q/x", "w", 0)
    lua("pop", 86_400 + 5, "q/x", "w", 1)  # next day: j2 waited a day
    before = [lua("stats", 0, "q/x", day) for day in (0, 86_400)]
    assert before[0]["wait"]["count"] == 3 and before[1]["wait"]["count"] == 1
    assert sorted(journal.states("qless.stats/")) == ["qless.stats/0/q/x", "qless.stats/1/q/x"]
    q = restarted(journal)
    after = [call(q, "stats", ["q/x", day], 86_400_000) for day in (0, 86_400)]
    assert after == before


def test_one_record_per_changed_bin_per_call(lua: Lua) -> None:
    journal = StateJournal()
    lua.engine.journal = journal
    for i in range(5):
        lua("put", 0, "w", "q", f"j{i}", "klass", {}, 0)
    journal.writes.clear()
    lua("pop", 1, "q", "w", 5)
    assert [k for k in journal.writes if k.startswith("qless.stats/")] == ["qless.stats/0/q"]


def test_dropped_days_leave_the_journal(lua: Lua) -> None:
    journal = StateJournal()
    lua.engine.journal = journal
    lua("config.set", 0, "stats-history", 2)
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("pop", 0, "q", "w", 1)
    lua("complete", 2 * 86_400, "a", "w", "q", {})  # day 2: day 0 is dropped
    assert sorted(journal.states("qless.stats/")) == ["qless.stats/2/q"]
    q = restarted(journal)
    assert call(q, "stats", ["q", 2 * 86_400], 2 * 86_400_000)["run"]["count"] == 1
    assert call(q, "stats", ["q", 0], 2 * 86_400_000)["wait"]["count"] == 0


def test_stats_across_a_beanstalkd_delete_of_a_failed_job(lua: Lua) -> None:
    journal = StateJournal()
    lua.engine.journal = journal
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("pop", 0, "q", "w", 1)
    lua("fail", 0, "a", "w", "g", "m", {})
    job = lua.q.jobs["a"]
    assert lua.engine.delete(None, job.id, 1000)
    assert journal.value("qless.stats/0/q")["failed"] == 0
    assert journal.value("qless.stats/0/q")["failures"] == 1
