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


def test_ties_break_as_redis_orders_equal_scores(lua: Lua) -> None:
    for jid in ("zed", "amy", "kim"):  # tagged at the same time: by jid
        lua("put", 0, "w", "q", jid, "klass", {}, 0, "tags", ["t", jid[0]])
    lua("put", 1, "w", "q", "bob", "klass", {}, 0, "tags", ["t"])
    assert lua("tag", 1, "get", "t")["jobs"] == ["amy", "kim", "zed", "bob"]
    lua("put", 2, "w", "q", "amy", "klass", {}, 0)  # put again: its tags are re-scored
    assert lua("tag", 2, "get", "t")["jobs"] == ["kim", "zed", "bob", "amy"]
    lua("tag", 3, "add", "kim", "t")  # tagged again: re-scored
    assert lua("tag", 3, "get", "t")["jobs"] == ["zed", "bob", "amy", "kim"]
    lua("put", 3, "w", "q", "x", "klass", {}, 0, "tags", ["a", "k", "z"])
    assert lua("tag", 3, "top") == ["t", "z", "k", "a"]  # 2 each: reverse byte order


def test_queues_seen_at_the_same_time_are_listed_by_name(lua: Lua) -> None:
    lua("put", 0, "w", "later", "j1", "klass", {}, 0)
    lua("put", 0, "w", "early", "j2", "klass", {}, 0)
    lua("put", 1, "w", "first", "j3", "klass", {}, 0)
    assert [q["name"] for q in lua("queues", 1)] == ["early", "later", "first"]
