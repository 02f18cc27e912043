"""Throttles of moved jobs and recurring templates, and `throttle.release`: the
qless-with-throttles fork's semantics (its qless.lua, and its qless-py tests
test_job.py::TestJob::test_move, TestRecurring::test_move,
test_queue.py::TestQueue::test_recur_with_throttles)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def throttles_of(lua: Lua, jid: str, fn: str = "get") -> list[str]:
    return lua(fn, 0, jid)["throttles"]  # type: ignore[no-any-return]


def put(lua: Lua, jid: str, queue: str = "foo", tids: list[str] | None = None) -> None:
    lua("put", 0, "w", queue, jid, "K", {}, 0, "throttles", tids if tids is not None else ["db"])


# ---- moves ----------------------------------------------------------------------------


def test_move_drops_the_old_queues_throttle(lua: Lua) -> None:
    put(lua, "jid")
    assert throttles_of(lua, "jid") == ["db", "ql:q:foo"]
    put(lua, "jid", "bar", throttles_of(lua, "jid"))  # qless-py's Job.move
    assert throttles_of(lua, "jid") == ["db", "ql:q:bar"]
    put(lua, "jid", "bar", throttles_of(lua, "jid"))  # the same queue: unchanged
    assert throttles_of(lua, "jid") == ["db", "ql:q:bar"]


def test_move_without_throttles_keeps_the_jobs_own(lua: Lua) -> None:
    put(lua, "jid", tids=["db", "ql:q:foo"])
    lua("put", 0, "w", "bar", "jid", "K", {}, 0)
    assert throttles_of(lua, "jid") == ["db", "ql:q:bar"]


def test_moved_job_locks_its_new_queues_throttle_only(lua: Lua) -> None:
    lua("queue.throttle.set", 0, "foo", 1)
    put(lua, "a")
    put(lua, "moved")
    put(lua, "moved", "bar", throttles_of(lua, "moved"))
    assert [j["jid"] for j in lua("pop", 0, "foo", "w", 5)] == ["a"]
    assert [j["jid"] for j in lua("pop", 0, "bar", "w", 5)] == ["moved"]
    assert lua("throttle.locks", 0, "ql:q:foo") == ["a"]
    assert lua("throttle.locks", 0, "ql:q:bar") == ["moved"]


# ---- recurring templates -----------------------------------------------------------------


def recur(lua: Lua, queue: str, tids: list[str]) -> None:
    lua("recur", 0, queue, "r", "K", {}, "interval", 60, 0, "throttles", tids)


def test_template_shows_its_queues_throttle(lua: Lua) -> None:
    recur(lua, "foo", ["throttle"])
    assert throttles_of(lua, "r", "recur.get") == ["throttle", "ql:q:foo"]
    [child] = lua("pop", 0, "foo", "w", 1)
    assert child["throttles"] == ["throttle", "ql:q:foo"]


def test_template_moved_by_update_or_recur(lua: Lua) -> None:
    recur(lua, "foo", ["throttle"])
    lua("recur.update", 0, "r", "queue", "bar")  # qless-py's RecurringJob.move
    assert throttles_of(lua, "r", "recur.get") == ["throttle", "ql:q:bar"]
    recur(lua, "baz", throttles_of(lua, "r", "recur.get"))
    assert throttles_of(lua, "r", "recur.get") == ["throttle", "ql:q:baz"]
    [child] = lua("pop", 0, "baz", "w", 1)
    assert child["throttles"] == ["throttle", "ql:q:baz"]


def test_template_throttles_updated(lua: Lua) -> None:
    recur(lua, "foo", ["throttle"])
    assert lua("recur.update", 0, "r", "throttles", ["db", "db", "ql:q:foo"]) is True
    assert throttles_of(lua, "r", "recur.get") == ["db", "ql:q:foo"]
    lua.raises("throttles", "recur.update", 0, "r", "throttles", "not json")
    [child] = lua("pop", 0, "foo", "w", 1)
    assert child["throttles"] == ["db", "ql:q:foo"]


# ---- throttle.release -------------------------------------------------------------------


def test_release_a_lock_lets_the_line_move(lua: Lua) -> None:
    lua("throttle.set", 0, "db", 1)
    for jid in ("a", "b", "c"):
        put(lua, jid)
    assert [j["jid"] for j in lua("pop", 0, "foo", "w", 3)] == ["a"]
    assert lua("throttle.pending", 0, "db") == ["b", "c"]
    assert lua("throttle.release", 0, "db", "a") is True
    assert lua("throttle.locks", 0, "db") == []
    assert lua("throttle.pending", 0, "db") == ["c"]
    assert (lua("get", 0, "a")["state"], lua("get", 0, "b")["state"]) == ("running", "waiting")
    assert lua("throttle.locks", 0, "ql:q:foo") == ["a"]  # its other locks stay
    assert [j["jid"] for j in lua("pop", 0, "foo", "w", 3)] == ["b"]
    assert lua("complete", 0, "a", "w", "foo", {}) == "complete"
    assert lua("throttle.locks", 0, "db") == ["b"]


def test_release_from_the_line_makes_the_job_waiting(lua: Lua) -> None:
    lua("throttle.set", 0, "db", 1)
    for jid in ("a", "b", "c"):
        put(lua, jid)
    lua("pop", 0, "foo", "w", 3)
    lua("throttle.release", 0, "db", "c")
    assert lua("throttle.pending", 0, "db") == ["b"]
    assert lua("jobs", 0, "throttled", "foo") == ["b"]
    assert lua("get", 0, "c")["state"] == "waiting"
    assert lua("pop", 0, "foo", "w", 3) == []  # db is still full: c waits in line again
    assert lua("throttle.pending", 0, "db") == ["b", "c"]


def test_release_of_unknown_names_changes_nothing(lua: Lua) -> None:
    assert lua("throttle.release", 0, "nobody") is True
    assert lua("throttle.release", 0, "nobody", "nojob") is True
    assert lua("throttle.get", 0, "nobody") == {"id": "nobody", "maximum": 0}
    lua.raises("missing", "throttle.release", 0)
