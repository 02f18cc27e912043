"""Throttles (the qless fork's test_throttle.py, ported), plus persistence."""

from __future__ import annotations

from beanpod.core.qless.api import call
from tests.unit.core.qless.conftest import Lua
from tests.unit.core.qless.journal_support import StateJournal, restarted


def put(lua: Lua, now: float, jid: str, *extra: object, queue: str = "queue") -> None:
    lua("put", now, "worker", queue, jid, "klass", {}, 0, "throttles", ["tid"], *extra)


def locks(lua: Lua, now: float, tid: str = "tid") -> list[str]:
    return lua("throttle.locks", now, tid)  # type: ignore[no-any-return]


def pending(lua: Lua, now: float, tid: str = "tid") -> list[str]:
    return lua("throttle.pending", now, tid)  # type: ignore[no-any-return]


def throttled(lua: Lua, now: float, queue: str = "queue") -> list[str]:
    return lua("jobs", now, "throttled", queue)  # type: ignore[no-any-return]


def running(lua: Lua, now: float, queue: str = "queue") -> list[str]:
    return lua("jobs", now, "running", queue)  # type: ignore[no-any-return]


# ---- settings -----------------------------------------------------------------------


def test_set_get_delete(lua: Lua) -> None:
    assert lua("throttle.get", 0, "tid") == {"id": "tid", "maximum": 0}
    assert lua("throttle.set", 0, "tid", 5) is True
    assert lua("throttle.get", 0, "tid") == {"id": "tid", "maximum": 5}
    assert lua("throttle.ttl", 0, "tid") == -1
    lua("throttle.delete", 0, "tid")
    assert lua("throttle.get", 0, "tid") == {"id": "tid", "maximum": 0}
    assert lua("throttle.ttl", 0, "tid") == -2
    lua.raises("must not be negative", "throttle.set", 0, "tid", -1)
    lua.raises("not a number", "throttle.set", 0, "tid", "x")


def test_expiring_settings(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 5, 1000)
    assert lua("throttle.ttl", 1, "tid") == 999
    assert lua("throttle.get", 999.5, "tid")["maximum"] == 5
    assert lua("throttle.get", 1000, "tid")["maximum"] == 0
    assert lua("throttle.ttl", 1000, "tid") == -2


def test_queue_throttle(lua: Lua) -> None:
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0)
    assert lua("get", 0, "jid")["throttles"] == ["ql:q:queue"]
    put(lua, 0, "other")
    assert lua("get", 0, "other")["throttles"] == ["tid", "ql:q:queue"]
    lua("queue.throttle.set", 0, "queue", 1)
    assert lua("queue.throttle.get", 0, "queue") == {"id": "ql:q:queue", "maximum": 1}
    assert [j["jid"] for j in lua("pop", 0, "queue", "w", 5)] == ["jid"]
    assert throttled(lua, 0) == ["other"]
    assert lua("queues", 0, "queue")["throttled"] == 1
    assert lua("length", 0, "queue") == 2


# ---- acquiring ----------------------------------------------------------------------


def test_acquire_without_settings_takes_a_lock(lua: Lua) -> None:
    put(lua, 0, "jid")
    lua("pop", 0, "queue", "worker", 1)
    assert locks(lua, 0) == ["jid"]
    assert locks(lua, 0, "ql:q:queue") == ["jid"]


def test_limit_number_of_locks(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    for i in range(1, 5):
        put(lua, i - 1, f"jid{i}")
    assert [j["jid"] for j in lua("pop", 4, "queue", "worker", 4)] == ["jid1"]
    assert locks(lua, 4) == ["jid1"]
    assert pending(lua, 4) == ["jid2", "jid3", "jid4"]
    job = lua("get", 4, "jid2")
    assert job["state"] == "throttled"
    assert job["history"][-1] == {"what": "throttled", "when": 4, "queue": "queue"}


def test_put_throttles_at_once_when_full(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    put(lua, 0, "a")
    lua("pop", 0, "queue", "worker", 1)
    put(lua, 1, "b")
    assert lua("get", 1, "b")["state"] == "throttled"
    assert lua("peek", 1, "queue", 5) == []
    lua("complete", 2, "a", "worker", "queue", {})
    assert lua("get", 2, "b")["state"] == "waiting"


def test_throttles_cross_queues(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    put(lua, 0, "a", queue="q1")
    put(lua, 0, "b", queue="q2")
    assert len(lua("pop", 1, "q1", "w", 5)) == 1
    assert lua("pop", 1, "q2", "w", 5) == []
    assert throttled(lua, 1, "q2") == ["b"]


# ---- releasing ----------------------------------------------------------------------


def test_release_on_complete_lets_the_next_in(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    put(lua, 0, "jid1")
    put(lua, 1, "jid2")
    lua("pop", 2, "queue", "worker", 2)
    assert (locks(lua, 3), pending(lua, 4), throttled(lua, 5)) == (["jid1"], ["jid2"], ["jid2"])
    assert running(lua, 6) == ["jid1"]
    lua("complete", 7, "jid1", "worker", "queue", {})
    assert (locks(lua, 8), pending(lua, 9), throttled(lua, 10), running(lua, 11)) == (
        [], [], [], []
    )  # fmt: skip
    assert lua("get", 11, "jid2")["state"] == "waiting"
    lua("pop", 12, "queue", "worker", 1)
    assert (locks(lua, 13), pending(lua, 14), running(lua, 16)) == (["jid2"], [], ["jid2"])


def test_release_on_cancel_of_holder_and_of_pending(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    put(lua, 0, "jid1")
    put(lua, 1, "jid2")
    put(lua, 1, "jid3")
    lua("pop", 2, "queue", "worker", 3)
    lua("cancel", 6, "jid3")
    assert (locks(lua, 7), pending(lua, 8)) == (["jid1"], ["jid2"])
    lua("cancel", 6, "jid1")
    assert (locks(lua, 7), pending(lua, 8), throttled(lua, 9)) == ([], [], [])
    assert [j["jid"] for j in lua("pop", 10, "queue", "worker", 1)] == ["jid2"]


def test_release_on_fail(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    put(lua, 0, "jid")
    lua("pop", 0, "queue", "worker", 1)
    lua("fail", 0, "jid", "worker", "failed", "i failed", {})
    assert (locks(lua, 0), throttled(lua, 0)) == ([], [])


def test_retry_with_pending_gives_the_lock_to_the_pending_job(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    put(lua, 0, "jid1")
    put(lua, 1, "jid2")
    lua("pop", 2, "queue", "worker", 2)
    lua("retry", 6, "jid1", "queue", "worker", 0, "retry", "retrying")
    assert (locks(lua, 7), pending(lua, 8), throttled(lua, 9)) == ([], [], [])
    lua("pop", 10, "queue", "worker", 2)
    assert (locks(lua, 11), pending(lua, 12), throttled(lua, 13)) == (
        ["jid2"], ["jid1"], ["jid1"]
    )  # fmt: skip


def test_retry_without_pending_reacquires(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    put(lua, 0, "jid")
    lua("pop", 0, "queue", "worker", 1)
    lua("retry", 0, "jid", "queue", "worker", 0, "retry", "retrying")
    assert locks(lua, 0) == []
    lua("pop", 0, "queue", "worker", 1)
    assert (locks(lua, 0), throttled(lua, 0)) == (["jid"], [])


def test_release_on_timeout(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    put(lua, 0, "jid1")
    put(lua, 1, "jid2")
    lua("pop", 2, "queue", "worker", 2)
    lua("timeout", 6, "jid1")
    assert (locks(lua, 7), pending(lua, 8), throttled(lua, 9)) == ([], [], [])


def test_stalled_job_keeps_its_locks_when_handed_out_again(lua: Lua) -> None:
    lua("config.set", 0, "grace-period", 0)
    lua("throttle.set", 0, "tid", 1)
    put(lua, 0, "jid1")
    put(lua, 0, "jid2")
    lua("pop", 0, "queue", "w1", 1)
    [job] = lua("pop", 100, "queue", "w2", 5)  # lock lost: w2 gets it, jid2 is throttled
    assert (job["jid"], job["worker"]) == ("jid1", "w2")
    assert (locks(lua, 100), pending(lua, 100)) == (["jid1"], ["jid2"])


def test_exhausted_retries_release(lua: Lua) -> None:
    lua("config.set", 0, "grace-period", 0)
    lua("throttle.set", 0, "tid", 1)
    put(lua, 0, "jid1", "retries", 0)
    put(lua, 0, "jid2")
    lua("pop", 0, "queue", "w1", 1)
    [job] = lua("pop", 100, "queue", "w2", 5)  # jid1 fails; jid2 gets the lock
    assert job["jid"] == "jid2"
    assert lua("get", 100, "jid1")["state"] == "failed"
    assert locks(lua, 100) == ["jid2"]


def test_unlimited_throttle_lets_ten_in_per_release(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    for i in range(13):
        put(lua, 0, f"j{i}")
    lua("pop", 0, "queue", "w", 13)
    assert len(pending(lua, 0)) == 12
    lua("throttle.delete", 0, "tid")
    lua("complete", 1, "j0", "w", "queue", {})
    assert pending(lua, 1) == ["j11", "j12"]
    assert lua("queues", 1, "queue")["waiting"] == 10


def test_dependents_acquire_after_success(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    put(lua, 1, "jid1")
    put(lua, 2, "jid2", "depends", ["jid1"])
    put(lua, 3, "jid3", "depends", ["jid2"])
    for now, jid in ((4, "jid1"), (8, "jid2"), (12, "jid3")):
        lua("pop", now, "queue", "worker", 1)
        assert (locks(lua, now), throttled(lua, now)) == ([jid], [])
        lua("complete", now, jid, "worker", "queue", {})
    assert (locks(lua, 16), throttled(lua, 17)) == ([], [])


# ---- changing the maximum -------------------------------------------------------------


def test_raising_the_maximum_lets_pending_in_at_the_next_release(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    for i in (1, 2, 3):
        put(lua, i, f"jid{i}")
    lua("pop", 4, "queue", "worker", 3)
    assert throttled(lua, 6) == ["jid2", "jid3"]
    lua("throttle.set", 7, "tid", 3)
    lua("complete", 8, "jid1", "worker", "queue", {})
    assert (locks(lua, 9), pending(lua, 10), throttled(lua, 11)) == ([], [], [])
    lua("pop", 12, "queue", "worker", 2)
    assert running(lua, 13) == ["jid2", "jid3"]


def test_lowering_the_maximum_lets_running_jobs_finish(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 3)
    for i in range(1, 6):
        put(lua, i, f"jid{i}")
    lua("pop", 6, "queue", "worker", 5)
    assert (locks(lua, 7), throttled(lua, 8)) == (["jid1", "jid2", "jid3"], ["jid4", "jid5"])
    lua("throttle.set", 9, "tid", 1)
    lua("complete", 12, "jid1", "worker", "queue", {})
    lua("complete", 15, "jid2", "worker", "queue", {})
    assert (locks(lua, 16), throttled(lua, 17)) == (["jid3"], ["jid4", "jid5"])
    lua("complete", 18, "jid3", "worker", "queue", {})
    assert pending(lua, 18) == ["jid5"]
    lua("pop", 19, "queue", "worker", 2)
    assert (locks(lua, 20), throttled(lua, 21)) == (["jid4"], ["jid5"])
    lua("complete", 23, "jid4", "worker", "queue", {})
    lua("pop", 24, "queue", "worker", 1)
    assert (locks(lua, 24), throttled(lua, 25)) == (["jid5"], [])


def test_pop_never_exceeds_the_maximum(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 2)
    for i in range(20):
        put(lua, 0, f"j{i}", queue=f"q{i % 3}")
    held: list[str] = []
    for step in range(1, 60):
        for queue in ("q0", "q1", "q2"):
            held += [j["jid"] for j in lua("pop", step, queue, "w", 3)]
        assert len(locks(lua, step)) == len(held) <= 2
        if held:
            jid = held.pop(0)
            lua("complete", step, jid, "w", lua("get", step, jid)["queue"], {})
    assert lua("jobs", 100, "complete") and len(lua("jobs", 100, "complete", 0, 50)) == 20


def test_recurring_children_carry_throttles(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    lua("recur", 0, "queue", "r", "klass", {}, "interval", 10, 0, "throttles", ["tid"])
    assert lua("recur.get", 0, "r")["throttles"] == ["tid", "ql:q:queue"]
    assert [j["jid"] for j in lua("pop", 25, "queue", "w", 5)] == ["r-1"]
    assert pending(lua, 25) == ["r-2", "r-3"]


# ---- persistence --------------------------------------------------------------------


def test_settings_are_journalled(lua: Lua) -> None:
    journal = StateJournal()
    lua.engine.journal = journal
    lua("throttle.set", 0, "tid", 2)
    lua("throttle.set", 0, "gone", 2)
    lua("throttle.delete", 0, "gone")
    lua("queue.throttle.set", 0, "q", 1)
    lua("throttle.set", 0, "lapses", 4, 10)
    q = restarted(journal)
    assert call(q, "throttle.get", ["tid"], 5000) == {"id": "tid", "maximum": 2}
    assert call(q, "throttle.get", ["gone"], 5000)["maximum"] == 0
    assert call(q, "queue.throttle.get", ["q"], 5000)["maximum"] == 1
    assert call(q, "throttle.ttl", ["lapses"], 5000) == 5
    assert call(q, "throttle.get", ["lapses"], 10_000)["maximum"] == 0
    assert "qless.throttle/lapses" not in journal.state


def test_a_throttled_job_is_not_in_the_depends_state(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    put(lua, 0, "a")
    put(lua, 0, "b")
    lua("pop", 0, "queue", "w", 2)
    lua.raises("not in the depends state: throttled", "depends", 0, "b", "on", "a")
    assert lua("queues", 0, "queue")["depends"] == 0


def test_beanstalkd_delete_of_a_throttled_job(lua: Lua) -> None:
    lua("throttle.set", 0, "tid", 1)
    put(lua, 0, "a")
    put(lua, 0, "b")
    lua("pop", 0, "queue", "w", 2)
    assert lua.engine.delete(None, lua.q.jobs["b"].id, 0)
    assert (pending(lua, 0), throttled(lua, 0)) == ([], [])
