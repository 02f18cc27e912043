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
    # Not spawned yet: children are spawned by pop and peek, as in qless-core.
    assert (got["state"], got["interval"], got["count"]) == ("recur", 60, 0)
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


# ---- ported from qless-core test/test_recurring.py -------------------------------------


def pops(lua: Lua, now: float, count: int = 10, queue: str = "q") -> list[dict[str, object]]:
    return lua("pop", now, queue, "worker", count)  # type: ignore[no-any-return]


def test_basic(lua: Lua) -> None:
    recur(lua, 0)
    assert [j["jid"] for j in pops(lua, 0)] == ["jid-1"]
    assert pops(lua, 59) == []
    assert [j["jid"] for j in pops(lua, 61)] == ["jid-2"]


def test_offset(lua: Lua) -> None:
    lua("recur", 0, "q", "jid", "klass", {}, "interval", 60, 10)
    assert pops(lua, 9) == []
    assert [j["jid"] for j in pops(lua, 11)] == ["jid-1"]
    assert pops(lua, 69) == []
    assert [j["jid"] for j in pops(lua, 71)] == ["jid-2"]


def test_priority(lua: Lua) -> None:
    lua("put", 0, "worker", "q", "low", "klass", {}, 0, "priority", 0)
    lua("recur", 0, "q", "high", "klass", {}, "interval", 60, 0, "priority", 10)
    jobs = pops(lua, 0)
    assert [(j["jid"], j["priority"]) for j in jobs] == [("high-1", 10), ("low", 0)]


def test_retries(lua: Lua) -> None:
    recur(lua, 0, "retries", 2)
    job = pops(lua, 0)[0]
    assert (job["retries"], job["remaining"]) == (2, 2)


def test_backlog(lua: Lua) -> None:
    recur(lua, 0, "backlog", 1)
    jobs = pops(lua, 600)
    assert [j["jid"] for j in jobs] == ["jid-1", "jid-2"]


def test_get(lua: Lua) -> None:
    recur(lua, 0)
    assert lua("recur.get", 0, "jid") == {
        "backlog": 0, "count": 0, "data": "{}", "interval": 60, "jid": "jid",
        "klass": "klass", "priority": 0, "queue": "q", "retries": 0, "state": "recur",
        "tags": [], "throttles": ["ql:q:q"],
    }  # fmt: skip


def test_update_attributes(lua: Lua) -> None:
    recur(lua, 0, "retries", 5)
    first = pops(lua, 0)[0]
    assert (first["priority"], first["retries"], first["data"], first["klass"]) == (
        0, 5, "{}", "klass")  # fmt: skip
    lua("recur.update", 0, "jid", "priority", 10, "retries", 2, "data", {"foo": "bar"},
        "klass", "class")  # fmt: skip
    job = pops(lua, 60)[0]
    assert (job["priority"], job["retries"], job["data"], job["klass"]) == (
        10, 2, '{"foo":"bar"}', "class")  # fmt: skip


def test_update_interval(lua: Lua) -> None:
    recur(lua, 0)
    assert len(pops(lua, 0)) == 1
    lua("recur.update", 0, "jid", "interval", 10)
    assert len(pops(lua, 60)) == 6


def test_update_queue(lua: Lua) -> None:
    recur(lua, 0)
    assert len(pops(lua, 0)) == 1
    lua("recur.update", 0, "jid", "queue", "other")
    assert pops(lua, 60) == []
    assert len(pops(lua, 60, queue="other")) == 1


def test_unrecur(lua: Lua) -> None:
    recur(lua, 0)
    assert len(pops(lua, 0)) == 1
    lua("unrecur", 0, "jid")
    assert pops(lua, 60) == []


def test_empty_array_data(lua: Lua) -> None:
    lua("recur", 0, "q", "jid", "klass", [], "interval", 60, 0)
    assert pops(lua, 0)[0]["data"] == "[]"


def test_multiple(lua: Lua) -> None:
    recur(lua, 0)
    assert len(pops(lua, 599)) == 10


def test_tag_untag(lua: Lua) -> None:
    recur(lua, 0, "tags", ["foo"])
    assert pops(lua, 0)[0]["tags"] == ["foo"]
    lua("recur.untag", 0, "jid", "foo")
    assert pops(lua, 60)[0]["tags"] == []
    lua("recur.tag", 60, "jid", "bar")
    assert pops(lua, 120)[0]["tags"] == ["bar"]


def test_rerecur_move(lua: Lua) -> None:
    recur(lua, 0)
    assert pops(lua, 0)[0]["jid"] == "jid-1"
    lua("recur", 60, "other", "jid", "klass", {}, "interval", 60, 0)
    assert pops(lua, 60, queue="other")[0]["jid"] == "jid-2"


def test_rerecur_attributes(lua: Lua) -> None:
    recur(lua, 0, "priority", 10, "tags", ["foo"], "retries", 2)
    job = pops(lua, 0)[0]
    assert (job["jid"], job["priority"], job["tags"], job["remaining"], job["expires"]) == (
        "jid-1", 10, ["foo"], 2, 60)  # fmt: skip
    lua("recur", 60, "q", "jid", "class", {"foo": "bar"}, "interval", 10, 0, "priority", 5,
        "tags", ["bar"], "retries", 5)  # fmt: skip
    job = pops(lua, 60)[0]
    assert (job["jid"], job["klass"], job["data"], job["priority"], job["tags"]) == (
        "jid-2", "class", '{"foo":"bar"}', 5, ["bar"])  # fmt: skip
    assert job["history"] == [
        {"q": "q", "what": "put", "when": 60},
        {"what": "popped", "when": 60, "worker": "worker"},
    ]


def test_history(lua: Lua) -> None:
    recur(lua, 0)
    jobs = pops(lua, 599, 100)
    assert [j["history"][0]["when"] for j in jobs] == list(range(0, 600, 60))


# ---- lazy spawning: what qless-core's check_recurring pins -----------------------------


def test_spawned_lazily_up_to_the_count_asked(lua: Lua) -> None:
    recur(lua, 0)
    assert lua("recur.get", 300, "jid")["count"] == 0  # nothing spawns on its own
    assert [j["jid"] for j in pops(lua, 300, 2)] == ["jid-1", "jid-2"]
    assert lua("recur.get", 300, "jid")["count"] == 2
    assert lua("queues", 300, "q")["waiting"] == 0  # not spawned beyond the count
    assert [j["jid"] for j in pops(lua, 300, 10)] == ["jid-3", "jid-4", "jid-5", "jid-6"]
    assert lua("recur.get", 300, "jid")["count"] == 6


def test_peek_spawns_too(lua: Lua) -> None:
    recur(lua, 0)
    assert [j["jid"] for j in lua("peek", 120, "q", 1)] == ["jid-1"]
    assert lua("recur.get", 120, "jid")["count"] == 1
    assert lua("queues", 120, "q")["waiting"] == 1
    assert [j["jid"] for j in lua("peek", 120, "q", 10)] == ["jid-1", "jid-2", "jid-3"]


def test_paused_queue_spawns_nothing(lua: Lua) -> None:
    recur(lua, 0)
    lua("pause", 0, "q")
    assert pops(lua, 120) == []
    assert lua("recur.get", 120, "jid")["count"] == 0


def test_stalled_jobs_use_up_the_count_first(lua: Lua) -> None:
    lua("config.set", 0, "grace-period", 0)
    lua("put", 0, "w", "q", "plain", "klass", {}, 0)
    pops(lua, 0, 1)  # plain: its lock expires at 60
    recur(lua, 100)
    assert [j["jid"] for j in pops(lua, 100, 1)] == ["plain"]
    assert lua("recur.get", 100, "jid")["count"] == 0
    assert [j["jid"] for j in pops(lua, 100, 1)] == ["jid-1"]


def test_several_templates_earliest_due_first(lua: Lua) -> None:
    lua("recur", 0, "q", "b", "klass", {}, "interval", 60, 20)
    lua("recur", 0, "q", "a", "klass", {}, "interval", 60, 10)
    assert [j["jid"] for j in pops(lua, 30, 1)] == ["a-1"]
    assert lua("recur.get", 30, "b")["count"] == 0
    assert [j["jid"] for j in pops(lua, 30, 5)] == ["b-1"]


def test_children_rank_by_intended_time(lua: Lua) -> None:
    # qless scores a spawned child by its intended time, not by when a pop spawned it.
    lua("recur", 0, "q", "r", "klass", {}, "interval", 60, 30)
    lua("put", 10, "w", "q", "a", "klass", {}, 0)
    lua("put", 50, "w", "q", "b", "klass", {}, 0)
    lua("put", 95, "w", "q", "c", "klass", {}, 0)
    lua("put", 95, "w", "q", "hi", "klass", {}, 0, "priority", 1)
    jids = [j["jid"] for j in lua("peek", 100, "q", 10)]
    assert jids == ["hi", "a", "r-1", "b", "r-2", "c"]
    assert [j["jid"] for j in pops(lua, 100)] == jids


def test_child_due_now_ranks_last(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("recur", 5, "q", "r", "klass", {}, "interval", 60, 0)
    assert [j["jid"] for j in pops(lua, 5)] == ["a", "r-1"]


def test_child_ranks_before_a_job_put_in_the_same_instant_as_the_pop(lua: Lua) -> None:
    lua("recur", 0, "q", "r", "klass", {}, "interval", 60, 0)
    lua("put", 100, "w", "q", "b", "klass", {}, 0)
    assert [j["jid"] for j in pops(lua, 100)] == ["r-1", "r-2", "b"]
