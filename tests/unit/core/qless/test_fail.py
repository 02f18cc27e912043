"""fail, failed listing, unfail, retry (qless-core test_fail, test_locks TestRetry)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def test_only_running_jobs_fail(lua: Lua) -> None:
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    lua.raises("not currently running", "fail", 0, "jid", "w", "g", "m", {})
    lua("pop", 0, "q", "w", 1)
    lua.raises("another worker", "fail", 0, "jid", "x", "g", "m", {})
    assert lua("fail", 0, "jid", "w", "g", "m", {}) == "jid"
    assert lua("get", 0, "jid")["failure"] == {"group": "g", "message": "m", "when": 0,
                                               "worker": "w"}  # fmt: skip


def test_failed_paging_newest_first_and_unfail(lua: Lua) -> None:
    for i in range(30):
        lua("put", 0, "w", "q", f"j{i}", "klass", {}, 0)
    for i in range(30):
        lua("pop", i, "q", "w", 1)
        lua("fail", i, f"j{i}", "w", "g", "m", {})
    assert lua("failed", 30) == {"g": 30}
    page = lua("failed", 30, "g", 0, 10)
    assert page == {"total": 30, "jobs": [f"j{i}" for i in range(29, 19, -1)]}
    assert lua("unfail", 31, "q", "g", 25) == 25
    assert lua("failed", 31) == {"g": 5}
    assert lua("get", 31, "j0")["state"] == "waiting"


def test_retry_states(lua: Lua) -> None:
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    lua.raises("not currently running", "retry", 0, "jid", "q", "w", 0)
    lua("pop", 0, "q", "w", 1)
    lua.raises("another worker", "retry", 0, "jid", "q", "x", 0)
    assert lua("retry", 0, "jid", "q", "w", 10) == 4
    assert lua("get", 0, "jid")["state"] == "scheduled"
    lua.raises("not currently running", "complete", 0, "jid", "w", "q", {})


def test_retry_exhaustion_default_group(lua: Lua) -> None:
    lua("put", 0, "w", "queue", "jid", "klass", {}, 0, "retries", 0)
    lua("pop", 0, "queue", "w", 1)
    assert lua("retry", 0, "jid", "queue", "w", 0) == -1
    job = lua("get", 0, "jid")
    assert job["failure"] == {"group": "failed-retries-queue", "worker": "", "when": 0,
                              "message": 'Job exhausted retries in queue "queue"'}  # fmt: skip
    assert job["history"][-1] == {"group": "failed-retries-queue", "what": "failed", "when": 0}
