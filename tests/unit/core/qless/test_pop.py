"""pop / peek and queue counts (qless-core test_queue)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def test_pop_job_dict_and_counts(lua: Lua) -> None:
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    job = lua("pop", 1, "q", "worker", 10)[0]
    assert (job["state"], job["worker"], job["expires"]) == ("running", "worker", 61)
    counts = lua("queues", 1, "q")
    assert (counts["running"], counts["waiting"]) == (1, 0)
    assert lua("queues", 100, "q")["stalled"] == 1


def test_paused_queue_pops_nothing(lua: Lua) -> None:
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    lua("pause", 0, "q")
    assert lua("pop", 0, "q", "w", 10) == []
    assert lua("peek", 0, "q", 10)[0]["jid"] == "jid"
    assert lua("queues", 0, "q")["paused"] is True
    lua("unpause", 0, "q")
    assert lua("pop", 0, "q", "w", 10)[0]["jid"] == "jid"


def test_max_concurrency(lua: Lua) -> None:
    lua("config.set", 0, "q-max-concurrency", 2)
    for i in range(5):
        lua("put", 0, "w", "q", f"j{i}", "klass", {}, 0)
    assert len(lua("pop", 0, "q", "w", 10)) == 2
    assert lua("pop", 0, "q", "w", 10) == []
    lua("fail", 0, "j0", "w", "g", "m", {})
    assert len(lua("pop", 0, "q", "w", 10)) == 1
    lua("config.set", 0, "q-max-concurrency", 1)
    assert lua("pop", 0, "q", "w", 10) == []


def test_jobs_listing_pages(lua: Lua) -> None:
    for i in range(100):
        lua("put", 0, "w", "q", f"j{i:03}", "klass", {}, 10 + i)
    first = lua("jobs", 0, "scheduled", "q", 0, 50)
    second = lua("jobs", 0, "scheduled", "q", 50, 50)
    assert first + second == [f"j{i:03}" for i in range(100)]
    lua.raises("Unknown type", "jobs", 0, "bogus", "q")


def test_multi_queue_ordered(lua: Lua) -> None:
    lua("put", 0, "w", "b", "b1", "klass", {}, 0)
    lua("put", 0, "w", "a", "a1", "klass", {}, 0)
    jobs = lua("pop", 0, ["a", "b"], "w", 2, "ordered")
    assert [j["jid"] for j in jobs] == ["a1", "b1"]


def _order(lua: Lua, now: float, count: int = 10) -> list[str]:
    return [j["jid"] for j in lua("pop", now, "q", "w", count)]


def test_equal_priorities_pop_in_the_order_they_became_waiting(lua: Lua) -> None:
    for jid in ("a", "b", "c"):
        lua("put", 0, "w", "q", jid, "k", {}, 0)
    assert [j["jid"] for j in lua("peek", 0, "q", 10)] == ["a", "b", "c"]
    lua("pop", 1, "q", "w", 1)
    lua("retry", 2, "a", "q", "w")  # back to waiting at t=2: behind b and c
    lua("put", 3, "w", "q", "b", "k", {}, 0)  # re-put (move) at t=3: behind a
    lua("put", 4, "w", "q", "d", "k", {}, 0)
    assert [j["jid"] for j in lua("peek", 5, "q", 10)] == ["c", "a", "b", "d"]
    assert _order(lua, 5) == ["c", "a", "b", "d"]


def test_priority_still_ranks_first_and_a_change_keeps_the_place(lua: Lua) -> None:
    for jid in ("a", "b", "c"):
        lua("put", 0, "w", "q", jid, "k", {}, 0)
    lua("put", 1, "w", "q", "a", "k", {}, 0)  # a: last of the band
    lua("put", 2, "w", "q", "hi", "k", {}, 0, "priority", 5)
    lua("priority", 3, "b", 1)
    lua("priority", 3, "b", 0)  # back in the band, at its old place
    assert _order(lua, 4) == ["hi", "b", "c", "a"]


def test_scheduled_jobs_wait_from_their_due_time(lua: Lua) -> None:
    lua("put", 0, "w", "q", "late", "k", {}, 20)
    lua("put", 0, "w", "q", "soon", "k", {}, 10)
    lua("put", 15, "w", "q", "now", "k", {}, 0)
    lua("put", 25, "w", "q", "after", "k", {}, 0)
    assert _order(lua, 30) == ["soon", "now", "late", "after"]


def test_unlocked_and_unfailed_jobs_join_the_back(lua: Lua) -> None:
    lua("put", 0, "w", "q", "dep", "k", {}, 0)
    lua("put", 0, "w", "q", "child", "k", {}, 0, "depends", ["dep"])
    lua("put", 0, "w", "q", "f", "k", {}, 0, "priority", 9)
    lua("pop", 1, "q", "w", 1)  # f
    lua("fail", 1, "f", "w", "g", "m")
    lua("put", 2, "w", "q", "x", "k", {}, 0)
    [dep] = lua("pop", 3, "q", "w", 1)
    assert dep["jid"] == "dep"
    lua("complete", 4, "dep", "w", "q", {})  # child waits from t=4
    lua("put", 5, "w", "q", "y", "k", {}, 0)
    lua("unfail", 6, "q", "g")
    assert _order(lua, 7) == ["f", "x", "child", "y"]


def test_beanstalkd_reserve_sees_the_same_order(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "k", {}, 0)
    lua("put", 0, "w", "q", "b", "k", {}, 0)
    lua("put", 1, "w", "q", "a", "k", {}, 0)
    engine = lua.engine
    conn = engine.connect()
    engine.watch(conn, "q")
    engine.ignore(conn, "default")
    job = engine.reserve(conn, 0, 2000, lambda _: None)
    assert getattr(getattr(job, "ext", None), "jid", None) == "b"
