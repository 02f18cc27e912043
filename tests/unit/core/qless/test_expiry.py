"""Completed-job expiry and history truncation (qless-core test_job)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def complete_n(lua: Lua, n: int, now: float = 0) -> None:
    for i in range(n):
        lua("put", now, "w", "q", f"j{i}", "klass", {}, 0)
        lua("pop", now, "q", "w", 1)
        lua("complete", now, f"j{i}", "w", "q", {})


def test_expiry_by_count(lua: Lua) -> None:
    lua("config.set", 0, "jobs-history-count", 3)
    complete_n(lua, 5)
    assert lua("jobs", 0, "complete") == ["j4", "j3", "j2"]
    assert lua("get", 0, "j0") is None


def test_expiry_by_time(lua: Lua) -> None:
    lua("config.set", 0, "jobs-history", -1)
    complete_n(lua, 2)
    assert lua("jobs", 0, "complete") == []


def test_history_truncation_keeps_first(lua: Lua) -> None:
    lua("config.set", 0, "max-job-history", 5)
    for i in range(100):
        lua("put", i, "w", "q", "jid", "klass", {}, 0)
    history = lua("get", 100, "jid")["history"]
    assert [h["when"] for h in history] == [0, 96, 97, 98, 99]


def test_log_annotation(lua: Lua) -> None:
    lua.raises("does not exist", "log", 0, "jid", "hello")
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    lua("log", 1, "jid", "hello", {"x": 1})
    assert lua("get", 1, "jid")["history"][-1] == {"what": "hello", "when": 1, "x": 1}
