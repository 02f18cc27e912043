"""Locks, heartbeats, retries and the grace period (qless-core test_locks)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def setup_no_grace(lua: Lua) -> None:
    lua("config.set", 0, "grace-period", 0)


def test_move_kills_lock(lua: Lua) -> None:
    setup_no_grace(lua)
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0)
    lua("pop", 1, "queue", "worker", 10)
    lua("heartbeat", 2, "jid", "worker", {})
    lua("put", 3, "worker", "other", "jid", "klass", {}, 0)
    lua.raises("waiting", "heartbeat", 4, "jid", "worker", {})


def test_lose_lock(lua: Lua) -> None:
    setup_no_grace(lua)
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0)
    job = lua("pop", 1, "queue", "worker", 10)[0]
    assert job["expires"] == 61
    assert lua("pop", 2, "queue", "worker", 10) == []
    popped = lua("pop", job["expires"] + 10, "queue", "another", 10)
    assert popped == [
        {
            "data": "{}", "dependencies": [], "dependents": [], "expires": 131, "failure": {},
            "history": [
                {"q": "queue", "what": "put", "when": 0},
                {"what": "popped", "when": 1, "worker": "worker"},
                {"what": "timed-out", "when": 71},
                {"what": "popped", "when": 71, "worker": "another"},
            ],
            "jid": "jid", "klass": "klass", "priority": 0, "queue": "queue", "remaining": 4,
            "retries": 5, "state": "running", "tags": [], "tracked": False,
            "worker": "another", "spawned_from_jid": False, "throttles": ["ql:q:queue"],
        }
    ]  # fmt: skip
    lua.raises("given out to another", "heartbeat", 1000, "jid", "worker", {})


def test_heartbeat_extends(lua: Lua) -> None:
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0)
    job = lua("pop", 1, "queue", "worker", 10)[0]
    assert lua("pop", 2, "queue", "worker", 10) == []
    assert lua("heartbeat", 3, "jid", "worker", {}) > job["expires"]


def test_heartbeat_errors_by_state(lua: Lua) -> None:
    lua.raises("does not exist", "heartbeat", 0, "jid", "worker", {})
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0)
    lua.raises("waiting", "heartbeat", 1, "jid", "worker", {})
    lua("put", 0, "worker", "queue", "b", "klass", {}, 0, "depends", ["jid"])
    lua.raises("depends", "heartbeat", 0, "b", "worker", {})
    lua("put", 0, "worker", "queue", "s", "klass", {}, 1)
    lua.raises("scheduled", "heartbeat", 0, "s", "worker", {})
    lua("pop", 2, "queue", "worker", 1)
    lua.raises("another worker", "heartbeat", 2, "jid", "another", {})
    lua("heartbeat", 2, "jid", "worker", {})
    lua("fail", 2, "jid", "worker", "foo", "bar", {})
    lua.raises("failed", "heartbeat", 2, "jid", "worker", {})


def test_heartbeat_completed(lua: Lua) -> None:
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0)
    lua("pop", 0, "queue", "worker", 10)
    lua("complete", 0, "jid", "worker", "queue", {})
    lua.raises("complete", "heartbeat", 0, "jid", "worker", {})


def test_heartbeat_updates_data(lua: Lua) -> None:
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0)
    lua("pop", 0, "queue", "worker", 10)
    lua("heartbeat", 1, "jid", "worker", {"a": 1})
    assert lua("get", 1, "jid")["data"] == '{"a":1}'


def retries_setup(lua: Lua) -> None:
    lua("config.set", 0, "grace-period", 0)
    lua("config.set", 0, "heartbeat", -10)


def test_retries_decrement(lua: Lua) -> None:
    retries_setup(lua)
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0, "retries", 5)
    lua("pop", 0, "queue", "worker", 10)
    job = lua("pop", 0, "queue", "another", 10)[0]
    assert (job["retries"], job["remaining"]) == (5, 4)


def test_move_failed_retries(lua: Lua) -> None:
    retries_setup(lua)
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0, "retries", 0)
    lua("pop", 0, "queue", "worker", 10)
    assert lua("pop", 0, "queue", "worker", 10) == []
    assert lua("get", 0, "jid")["state"] == "failed"
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0)
    assert lua("get", 0, "jid")["state"] == "waiting"


def test_reset_on_complete_next_and_on_move(lua: Lua) -> None:
    retries_setup(lua)
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0, "retries", 5)
    lua("pop", 0, "queue", "worker", 10)
    lua("pop", 0, "queue", "worker", 10)
    lua("complete", 0, "jid", "worker", "queue", {}, "next", "queue")
    assert lua("pop", 0, "queue", "worker", 10)[0]["remaining"] == 5
    lua("pop", 0, "queue", "worker", 10)
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0)
    assert lua("pop", 0, "queue", "worker", 10)[0]["remaining"] == 5


def test_grace_period(lua: Lua) -> None:
    lua("config.set", 0, "grace-period", 10)
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0)
    job = lua("pop", 1, "queue", "worker", 10)[0]
    expires = job["expires"] + 10
    assert lua("pop", expires, "queue", "another", 10) == []
    assert lua("pop", expires + 10, "queue", "another", 10) != []


def test_grace_repeated(lua: Lua) -> None:
    lua("config.set", 0, "grace-period", 10)
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0, "retries", 20)
    job = lua("pop", 0, "queue", "worker", 10)[0]
    for _ in range(10):
        expires = job["expires"] + 10
        assert lua("pop", expires, "queue", "worker", 10) == []
        job = lua("pop", expires + 10, "queue", "worker", 10)[0]
    assert job["remaining"] == 10


def test_fail_allowed_during_grace(lua: Lua) -> None:
    lua("config.set", 0, "grace-period", 10)
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0)
    job = lua("pop", 0, "queue", "worker", 10)[0]
    assert lua("pop", job["expires"] + 1, "queue", "another", 10) == []
    assert lua("fail", job["expires"] + 2, "jid", "worker", "g", "m", {}) == "jid"


def test_grace_counts_retries_stat(lua: Lua) -> None:
    lua("config.set", 0, "grace-period", 0)
    lua("put", 0, "worker", "queue", "jid", "klass", {}, 0)
    lua("pop", 0, "queue", "worker", 10)
    lua("pop", 100, "queue", "worker", 10)
    assert lua("stats", 100, "queue", 100)["retries"] == 1


def test_timeout_shows_the_job_stalled_until_handed_out(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("put", 0, "w", "q", "b", "klass", {}, 0, "priority", 5)
    lua("pop", 1, "q", "w1", 1)  # b (higher priority)
    lua("timeout", 2, "b")
    job = lua("get", 2, "b")
    # qless keeps the old owner in `worker` after a timeout
    assert (job["state"], job["expires"], job["worker"]) == ("stalled", 0, "w1")
    assert [h["what"] for h in job["history"]] == ["put", "popped", "timed-out"]
    lua.raises("not currently running: stalled", "heartbeat", 2, "b", "w1")
    lua.raises("not running", "timeout", 2, "b")
    lua.raises("does not exist", "timeout", 2, "nope")
    lua("put", 3, "w", "q", "c", "klass", {}, 0, "priority", 99)
    assert [j["jid"] for j in lua("peek", 3, "q", 3)] == ["b", "c", "a"]  # first of all
    [popped] = lua("pop", 4, "q", "w2", 1)
    assert (popped["jid"], popped["state"], popped["worker"]) == ("b", "running", "w2")
    lua("retry", 5, "b", "q", "w2")
    assert lua("get", 5, "b")["state"] == "waiting"


def test_timed_out_job_moved_is_waiting_again(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("pop", 0, "q", "w", 1)
    lua("timeout", 1, "a")
    lua("put", 2, "w", "other", "a", "klass", {}, 0)
    assert lua("get", 2, "a")["state"] == "waiting"


def test_timed_out_worker_survives_in_view_until_popped_again(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("pop", 0, "q", "w1", 1)
    lua("timeout", 1, "a")
    assert lua("get", 1, "a")["worker"] == "w1"
    assert lua("peek", 1, "q", 1)[0]["worker"] == "w1"
    [job] = lua("pop", 2, "q", "w2", 1)
    assert job["worker"] == "w2"
    lua("complete", 3, "a", "w2", "q", {})
    assert lua("get", 3, "a")["worker"] == ""
