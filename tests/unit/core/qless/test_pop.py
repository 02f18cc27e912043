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
