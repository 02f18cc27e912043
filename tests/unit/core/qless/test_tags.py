"""Tags (qless-core test_tag)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def test_add_remove_dedupe_order(lua: Lua) -> None:
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    assert lua("tag", 0, "add", "jid", "a", "b", "a") == ["a", "b"]
    assert lua("tag", 0, "add", "jid", "c") == ["a", "b", "c"]
    assert lua("tag", 0, "remove", "jid", "b") == ["a", "c"]
    lua.raises("does not exist", "tag", 0, "add", "nope", "a")


def test_get_paged_and_top(lua: Lua) -> None:
    for i in range(10):
        lua("put", 0, "w", "q", f"j{i}", "klass", {}, 0, "tags", ["t"])
    lua("put", 0, "w", "q", "solo", "klass", {}, 0, "tags", ["once"])
    assert lua("tag", 0, "get", "t", 2, 3) == {"total": 10, "jobs": ["j2", "j3", "j4"]}
    assert lua("tag", 0, "top", 0, 10) == ["t"]


def test_cleanup_on_cancel_and_expiry(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "klass", {}, 0, "tags", ["t"])
    lua("put", 0, "w", "q", "b", "klass", {}, 0, "tags", ["t"])
    lua("cancel", 0, "a")
    assert lua("tag", 0, "get", "t") == {"total": 1, "jobs": ["b"]}
    lua("config.set", 0, "jobs-history", -1)
    lua("pop", 0, "q", "w", 1)
    lua("complete", 0, "b", "w", "q", {})
    assert lua("tag", 0, "get", "t") == {"total": 0, "jobs": []}
