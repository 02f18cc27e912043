"""Recurring jobs (qless-core test_recurring)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def recur(lua: Lua, now: float, *extra: object) -> None:
    lua("recur", now, "q", "jid", "klass", {}, "interval", 60, 0, *extra)


def test_spawn_times_and_history(lua: Lua) -> None:
    recur(lua, 0, "priority", 5, "tags", ["t"], "retries", 2)
    jobs = lua("pop", 0, "q", "w", 10)
    assert [j["jid"] for j in jobs] == ["jid-1"]
    job = jobs[0]
    assert (job["priority"], job["tags"], job["retries"]) == (5, ["t"], 2)
    assert job["spawned_from_jid"] == "jid"
    jobs = lua("pop", 130, "q", "w", 10)
    assert [j["jid"] for j in jobs] == ["jid-2", "jid-3"]
    assert [j["history"][0]["when"] for j in jobs] == [60, 120]


def test_offset_and_backlog(lua: Lua) -> None:
    lua("recur", 0, "q", "a", "klass", {}, "interval", 60, 30)
    assert lua("pop", 29, "q", "w", 10) == []
    assert len(lua("pop", 30, "q", "w", 10)) == 1
    lua("recur", 0, "b", "b", "klass", {}, "interval", 60, 0, "backlog", 1)
    assert len(lua("pop", 600, "b", "w", 10)) == 2


def test_get_update_move_unrecur(lua: Lua) -> None:
    recur(lua, 0)
    got = lua("recur.get", 0, "jid")
    # Spawned by its timer at t=0 (qless-core would wait for a pop or peek).
    assert (got["state"], got["interval"], got["count"]) == ("recur", 60, 1)
    lua("recur.update", 0, "jid", "priority", 3, "queue", "other", "data", {"x": 1})
    got = lua("recur.get", 0, "jid")
    assert (got["priority"], got["queue"], got["data"]) == (3, "other", '{"x":1}')
    assert lua("queues", 0, "other")["recurring"] == 1
    lua.raises("Unrecognized", "recur.update", 0, "jid", "color", "red")
    assert lua("recur.tag", 0, "jid", "a", "b") == ["a", "b"]
    assert lua("recur.untag", 0, "jid", "a") == ["b"]
    assert lua("unrecur", 0, "jid") is True
    assert lua("recur.get", 0, "jid") is None


def test_rerecur_keeps_counter(lua: Lua) -> None:
    recur(lua, 0)
    lua("pop", 0, "q", "w", 10)
    lua("recur", 10, "q", "jid", "klass2", {}, "interval", 60, 0)
    job = lua("pop", 10, "q", "w", 10)[0]
    assert (job["jid"], job["klass"]) == ("jid-2", "klass2")


def test_malformed(lua: Lua) -> None:
    lua.raises("interval", "recur", 0, "q", "jid", "klass", {}, "cron", 60, 0)
    lua.raises("greater than 0", "recur", 0, "q", "jid", "klass", {}, "interval", 0, 0)
    lua.raises("Odd number", "recur", 0, "q", "jid", "klass", {}, "interval", 60, 0, "tags")
