"""Pub/sub channels (qless-core test_events.py, ported) and the `events` long-poll."""

from __future__ import annotations

import json
from typing import Any

from beanpod.core.qless import channels
from beanpod.core.qless.channels import BUFFER
from tests.unit.core.qless.conftest import Lua


def heard(lua: Lua, fn: str, now: float, *args: Any) -> list[dict[str, Any]]:
    """What `fn` published, as qless-core's tests show it (`ql:` channels; JSON data
    parsed, since key order is not part of the contract)."""
    cursor = lua("events", now, list(_ALL), None)["cursor"]
    lua(fn, now, *args)
    found = lua("events", now, list(_ALL), cursor, 0, 1000)["messages"]
    return [{"channel": "ql:" + m["channel"], "data": _data(m["data"])} for m in found]


_ALL = {"log", "track", "untrack", "put", "popped", "stalled", "completed", "failed",
        "canceled", "w:worker", "w:wrk"}  # fmt: skip


def _data(text: str) -> Any:
    return json.loads(text) if text.startswith("{") else text


def lock_lost(jid: str = "jid", worker: str = "worker") -> dict[str, Any]:
    return {"jid": jid, "event": "lock_lost", "worker": worker}


def test_track_and_untrack(lua: Lua) -> None:
    lua("put", 0, "w", "queue", "jid", "klass", {}, 0)
    assert heard(lua, "track", 0, "track", "jid") == [{"channel": "ql:track", "data": "jid"}]
    assert heard(lua, "track", 0, "untrack", "jid") == [{"channel": "ql:untrack", "data": "jid"}]


def test_track_canceled(lua: Lua) -> None:
    lua("put", 0, "w", "queue", "jid", "klass", {}, 0)
    lua("track", 0, "track", "jid")
    assert heard(lua, "cancel", 0, "jid") == [
        {"channel": "ql:log",
         "data": {"jid": "jid", "queue": "queue", "event": "canceled", "worker": ""}},
        {"channel": "ql:canceled", "data": "jid"},
    ]  # fmt: skip


def test_track_completed(lua: Lua) -> None:
    lua("put", 0, "w", "queue", "jid", "klass", {}, 0)
    lua("track", 0, "track", "jid")
    lua("pop", 0, "queue", "worker", 10)
    assert heard(lua, "complete", 0, "jid", "worker", "queue", {}) == [
        {"channel": "ql:completed", "data": "jid"},
        {"channel": "ql:log", "data": {"jid": "jid", "event": "completed", "queue": "queue"}},
    ]


def test_track_fail(lua: Lua) -> None:
    lua("put", 0, "w", "queue", "jid", "klass", {}, 0)
    lua("track", 0, "track", "jid")
    lua("pop", 0, "queue", "worker", 10)
    assert heard(lua, "fail", 0, "jid", "worker", "grp", "mess", {}) == [
        {"channel": "ql:log", "data": {"message": "mess", "jid": "jid", "group": "grp",
                                       "event": "failed", "worker": "worker"}},
        {"channel": "ql:failed", "data": "jid"},
    ]  # fmt: skip


def test_track_popped_and_put(lua: Lua) -> None:
    lua("put", 0, "w", "queue", "jid", "klass", {}, 0)
    lua("track", 0, "track", "jid")
    assert heard(lua, "put", 0, "w", "queue", "jid", "klass", {}, 0) == [
        {"channel": "ql:log", "data": {"jid": "jid", "event": "put", "queue": "queue"}},
        {"channel": "ql:put", "data": "jid"},
    ]
    assert heard(lua, "pop", 0, "queue", "worker", 10) == [{"channel": "ql:popped", "data": "jid"}]


def test_track_stalled(lua: Lua) -> None:
    lua("put", 0, "w", "queue", "jid", "klass", {}, 0)
    lua("track", 0, "track", "jid")
    job = lua("pop", 0, "queue", "worker", 10)[0]
    assert heard(lua, "pop", job["expires"] + 10, "queue", "worker", 10) == [
        {"channel": "ql:stalled", "data": "jid"},
        {"channel": "ql:w:worker", "data": lock_lost()},
        {"channel": "ql:log", "data": lock_lost()},
    ]


def test_failed_retries(lua: Lua) -> None:
    lua("config.set", 0, "grace-period", 0)
    lua("put", 0, "w", "queue", "jid", "klass", {}, 0, "retries", 0)
    job = lua("pop", 0, "queue", "worker", 10)[0]
    assert heard(lua, "pop", job["expires"] + 10, "queue", "worker", 10) == [
        {"channel": "ql:w:worker", "data": lock_lost()},
        {"channel": "ql:log", "data": lock_lost()},
        {"channel": "ql:log", "data": {
            "message": 'Job exhausted retries in queue "queue"', "jid": "jid",
            "group": "failed-retries-queue", "event": "failed", "worker": "worker"}},
    ]  # fmt: skip
    assert lua("get", 100, "jid")["state"] == "failed"


def test_advance(lua: Lua) -> None:
    lua("put", 0, "w", "queue", "jid", "klass", {}, 0)
    lua("pop", 0, "queue", "worker", 10)
    assert heard(lua, "complete", 0, "jid", "worker", "queue", {}, "next", "queue") == [
        {"channel": "ql:log",
         "data": {"jid": "jid", "to": "queue", "event": "advanced", "queue": "queue"}},
    ]  # fmt: skip


def test_timeout(lua: Lua) -> None:
    lua("put", 0, "w", "queue", "jid", "klass", {}, 0)
    lua("pop", 0, "queue", "worker", 10)
    assert heard(lua, "timeout", 0, "jid") == [
        {"channel": "ql:w:worker", "data": lock_lost()},
        {"channel": "ql:log", "data": lock_lost()},
    ]


def test_put_and_reput(lua: Lua) -> None:
    assert heard(lua, "put", 0, "w", "queue", "jid", "klass", {}, 0) == [
        {"channel": "ql:log", "data": {"jid": "jid", "event": "put", "queue": "queue"}},
    ]
    lua("pop", 0, "queue", "worker", 10)
    assert heard(lua, "put", 0, "w", "another", "jid", "klass", {}, 10) == [
        {"channel": "ql:log", "data": {"jid": "jid", "event": "put", "queue": "another"}},
        {"channel": "ql:w:worker", "data": lock_lost()},
        {"channel": "ql:log", "data": lock_lost()},
    ]


def test_no_lock_lost_when_the_owner_moves_its_job(lua: Lua) -> None:
    lua("put", 0, "w", "queue", "jid", "klass", {}, 0)
    lua("pop", 0, "queue", "worker", 10)
    assert heard(lua, "put", 0, "worker", "another", "jid", "klass", {}, 0) == [
        {"channel": "ql:log", "data": {"jid": "jid", "event": "put", "queue": "another"}},
    ]


def test_config_set_and_unset(lua: Lua) -> None:
    assert heard(lua, "config.set", 0, "foo", "bar") == [
        {"channel": "ql:log", "data": {"option": "foo", "event": "config_set", "value": "bar"}},
    ]
    assert heard(lua, "config.unset", 0, "foo") == [
        {"channel": "ql:log", "data": {"event": "config_unset", "option": "foo"}},
    ]


def test_cancel_in_each_state(lua: Lua) -> None:
    def canceled(jid: str, queue: str = "queue", worker: str = "") -> dict[str, Any]:
        return {"jid": jid, "queue": queue, "event": "canceled", "worker": worker}

    lua("put", 0, "w", "queue", "waiting", "klass", {}, 0)
    lua("put", 0, "w", "queue", "scheduled", "klass", {}, 10)
    lua("put", 0, "w", "queue", "b", "klass", {}, 0, "depends", ["scheduled"])
    lua("put", 0, "w", "q", "running", "klass", {}, 0)
    lua("pop", 0, "q", "wrk", 10)
    for jid in ("waiting", "b", "scheduled"):
        assert heard(lua, "cancel", 0, jid) == [{"channel": "ql:log", "data": canceled(jid)}]
    assert heard(lua, "cancel", 0, "running") == [
        {"channel": "ql:log", "data": canceled("running", "q", "wrk")},
        {"channel": "ql:w:wrk", "data": canceled("running", "q", "wrk")},
    ]
    lua("put", 0, "w", "queue", "failed", "klass", {}, 0)
    lua("pop", 0, "queue", "worker", 10)
    lua("fail", 0, "failed", "worker", "group", "message", {})
    assert heard(lua, "cancel", 0, "failed") == [{"channel": "ql:log", "data": canceled("failed")}]


# ---- reading: cursor, count, missed, the ql: prefix --------------------------------------


def test_cursor_count_and_prefix(lua: Lua) -> None:
    start = lua("events", 0, "log")
    assert start == {"cursor": 0, "missed": 0, "messages": []}
    for i in range(5):
        lua("put", 0, "w", "q", f"j{i}", "klass", {}, 0)
    first = lua("events", 0, ["ql:log"], 0, 0, 2)
    assert [json.loads(m["data"])["jid"] for m in first["messages"]] == ["j0", "j1"]
    rest = lua("events", 0, "log", first["cursor"])
    assert [json.loads(m["data"])["jid"] for m in rest["messages"]] == ["j2", "j3", "j4"]
    assert lua("events", 0, "log", rest["cursor"])["messages"] == []
    assert lua("events", 0, "put", 0) == {"cursor": 5, "missed": 0, "messages": []}
    lua.raises("count", "events", 0, "log", 0, 0, 0)


def test_a_reader_far_behind_is_told_what_it_missed(lua: Lua) -> None:
    for _ in range(BUFFER + 3):
        lua("config.set", 0, "k", 1)
    found = lua("events", 0, "log", 0, 0, 1)
    assert found["missed"] == 3 and found["messages"][0]["seq"] == 4


# ---- parking: answered by a publish, a timeout, or never (disconnected) --------------------


def park(lua: Lua, now: float, wanted: list[str], timeout: float) -> tuple[Any, list[Any]]:
    conn = lua.engine.connect()
    answers: list[Any] = []
    cursor = lua.q.channels.seq
    found = channels.poll(lua.q, round(now * 1000), conn, frozenset(wanted), cursor,
                          round(timeout * 1000), 10, answers.append)  # fmt: skip
    assert found is None
    return conn, answers


def test_parked_poll_is_answered_by_a_matching_publish(lua: Lua) -> None:
    conn, answers = park(lua, 0, ["w:worker"], 30)
    assert lua.engine.counts.waiting == 1 and conn.waiter is not None
    lua("put", 1, "w", "q", "jid", "klass", {}, 0)  # only `log`: still parked
    assert answers == []
    lua("pop", 2, "q", "worker", 1)
    lua("timeout", 3, "jid")
    [answer] = answers
    assert [json.loads(m["data"]) for m in answer["messages"]] == [lock_lost()]
    assert lua.engine.counts.waiting == 0 and conn.waiter is None
    lua.q.at(100_000)  # its timer was cancelled: no second answer
    assert len(answers) == 1


def test_parked_poll_times_out_empty(lua: Lua) -> None:
    conn, answers = park(lua, 0, ["log"], 5)
    lua.q.at(4999)
    assert answers == []
    lua.q.at(5000)
    assert answers == [{"cursor": 0, "missed": 0, "messages": []}]
    assert conn.waiter is None


def test_disconnected_poll_is_never_answered(lua: Lua) -> None:
    conn, answers = park(lua, 0, ["log"], 5)
    lua.engine.disconnect(conn, 1000)
    lua("config.set", 2, "k", 1)
    lua.q.at(10_000)
    assert answers == [] and lua.q.channels.polls == {}


def test_many_readers_on_one_channel(lua: Lua) -> None:
    parked = [park(lua, 0, ["log", "put"], 30) for _ in range(3)]
    lua("config.set", 1, "k", 1)
    assert [len(answers) for _, answers in parked] == [1, 1, 1]
    assert lua.q.channels.polls == {}
