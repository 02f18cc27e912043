"""Dependencies (qless-core test_dependencies)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def finish(lua: Lua, now: float, queue: str = "q") -> None:
    job = lua("pop", now, queue, "w", 1)[0]
    lua("complete", now, job["jid"], "w", queue, {})


def test_unlock_on_complete_with_delay(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("put", 0, "w", "q", "b", "klass", {}, 0, "depends", ["a"])
    lua("put", 0, "w", "q", "c", "klass", {}, 10, "depends", ["a"])
    assert lua("get", 0, "b")["dependencies"] == ["a"]
    assert lua("get", 0, "a")["dependents"] == ["b", "c"]
    finish(lua, 1)
    assert lua("get", 1, "b")["state"] == "waiting"
    assert lua("get", 1, "c")["state"] == "scheduled"


def test_ignores_missing_and_complete_deps(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    finish(lua, 0)
    lua("put", 0, "w", "q", "b", "klass", {}, 0, "depends", ["a", "nope"])
    assert lua("get", 0, "b")["state"] == "waiting"


def test_chain_and_multi(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("put", 0, "w", "q", "b", "klass", {}, 0)
    lua("put", 0, "w", "q", "c", "klass", {}, 0, "depends", ["a", "b"])
    lua("put", 0, "w", "q", "d", "klass", {}, 0, "depends", ["c"])
    finish(lua, 1)
    assert lua("get", 1, "c")["state"] == "depends"
    finish(lua, 2)
    assert lua("get", 2, "c")["state"] == "waiting"
    finish(lua, 3)
    assert lua("get", 3, "d")["state"] == "waiting"


def test_depends_on_off_only_in_depends_state(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("put", 0, "w", "q", "x", "klass", {}, 0)
    lua("put", 0, "w", "q", "b", "klass", {}, 0, "depends", ["a"])
    lua.raises("not in the depends state", "depends", 0, "a", "on", "x")
    lua("depends", 0, "b", "on", "x")
    assert lua("get", 0, "b")["dependencies"] == ["a", "x"]
    lua("depends", 0, "b", "off", "a")
    assert lua("get", 0, "b")["state"] == "depends"
    lua("depends", 0, "b", "off", "all")
    assert lua("get", 0, "b")["state"] == "waiting"


def test_reput_replaces_or_keeps_deps(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("put", 0, "w", "q", "x", "klass", {}, 0)
    lua("put", 0, "w", "q", "b", "klass", {}, 0, "depends", ["a"])
    lua("put", 0, "w", "q", "b", "klass", {}, 0)
    assert lua("get", 0, "b")["dependencies"] == ["a"]
    lua("put", 0, "w", "q", "b", "klass", {}, 0, "depends", ["x"])
    assert lua("get", 0, "b")["dependencies"] == ["x"]
    assert lua("get", 0, "a")["dependents"] == []
