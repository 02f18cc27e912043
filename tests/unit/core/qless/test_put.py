"""put / requeue (qless-core test_queue, test_job)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def test_put_job_dict(lua: Lua) -> None:
    lua("put", 0, "w", "queue", "jid", "klass", {"a": 1}, 0)
    job = lua("get", 0, "jid")
    assert job["state"] == "waiting" and job["data"] == '{"a":1}'
    assert (job["retries"], job["remaining"], job["priority"]) == (5, 5, 0)
    assert job["history"] == [{"q": "queue", "what": "put", "when": 0}]


def test_malformed(lua: Lua) -> None:
    lua.raises("missing", "put", 0, "w", "queue", "jid", "klass")
    lua.raises("not JSON", "put", 0, "w", "queue", "jid", "klass", "[}", 0)
    lua.raises("not a number", "put", 0, "w", "queue", "jid", "klass", {}, "x")
    lua.raises("Odd number", "put", 0, "w", "queue", "jid", "klass", {}, 0, "priority")
    lua.raises("not a number", "put", 0, "w", "queue", "jid", "klass", {}, 0, "priority", "x")
    lua.raises("not JSON", "put", 0, "w", "queue", "jid", "klass", {}, 0, "tags", "[}")
    lua.raises("not a valid tube name", "put", 0, "w", "bad queue", "jid", "klass", {}, 0)


def test_delay_then_poppable(lua: Lua) -> None:
    lua("put", 0, "w", "queue", "jid", "klass", {}, 10)
    assert lua("get", 0, "jid")["state"] == "scheduled"
    assert lua("pop", 5, "queue", "w", 10) == []
    assert lua("pop", 10, "queue", "w", 10)[0]["jid"] == "jid"


def test_move_keeps_attributes_unless_given(lua: Lua) -> None:
    lua("put", 0, "w", "q1", "jid", "klass", {}, 0, "priority", 5, "tags", ["a"], "retries", 2)
    lua("put", 1, "w", "q2", "jid", "klass", {}, 0)
    job = lua("get", 1, "jid")
    assert (job["queue"], job["priority"], job["tags"], job["retries"]) == ("q2", 5, ["a"], 2)
    assert [h.get("q") for h in job["history"]] == ["q1", "q2"]
    assert lua("queues", 1, "q1")["waiting"] == 0
    lua("put", 2, "w", "q2", "jid", "klass", {}, 0, "priority", 1, "tags", [])
    assert (lua("get", 2, "jid")["priority"], lua("get", 2, "jid")["tags"]) == (1, [])


def test_requeue_refuses_cancelled(lua: Lua) -> None:
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    lua("requeue", 1, "w", "q", "jid", "klass", {}, 0)
    lua("cancel", 2, "jid")
    lua.raises("does not exist", "requeue", 3, "w", "q", "jid", "klass", {}, 0)


def test_priority_order_and_fifo(lua: Lua) -> None:
    for p in range(-10, 10):
        lua("put", 0, "w", "q", f"p{p}", "klass", {}, 0, "priority", p)
    assert [j["priority"] for j in lua("peek", 0, "q", 20)] == list(range(9, -11, -1))
    for i in range(30):
        lua("put", 0, "w", "fifo", f"j{i}", "klass", {}, 0)
    assert [j["jid"] for j in lua("pop", 0, "fifo", "w", 30)] == [f"j{i}" for i in range(30)]


def test_priority_change_reranks(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("put", 0, "w", "q", "b", "klass", {}, 0)
    assert lua("priority", 0, "b", 10) == 10
    assert lua("peek", 0, "q", 1)[0]["jid"] == "b"
    lua.raises("does not exist", "priority", 0, "nope", 1)
