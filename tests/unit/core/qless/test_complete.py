"""complete (qless-core test_job)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def test_complete_errors(lua: Lua) -> None:
    lua.raises("does not exist", "complete", 0, "jid", "w", "q", {})
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    lua.raises("not currently running: waiting", "complete", 0, "jid", "w", "q", {})
    lua("pop", 0, "q", "w", 1)
    lua.raises("another worker", "complete", 0, "jid", "other", "q", {})
    lua.raises("another queue", "complete", 0, "jid", "w", "other", {})
    lua.raises("without a", "complete", 0, "jid", "w", "q", {}, "delay", 5)
    assert lua("complete", 0, "jid", "w", "q", {}) == "complete"
    lua.raises("complete", "complete", 0, "jid", "w", "q", {})


def test_complete_clears_failure_and_advances(lua: Lua) -> None:
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    lua("pop", 0, "q", "w", 1)
    lua("retry", 0, "jid", "q", "w", 0, "g", "m")
    lua("pop", 0, "q", "w", 1)
    assert lua("complete", 1, "jid", "w", "q", [], "next", "q2") == "waiting"
    job = lua("get", 1, "jid")
    assert (job["failure"], job["queue"], job["data"]) == ({}, "q2", "[]")
    lua("pop", 1, "q2", "w", 1)
    assert lua("complete", 1, "jid", "w", "q2", {}, "next", "q3", "delay", 5) == "scheduled"
    assert lua("get", 1, "jid")["queue"] == "q3"
