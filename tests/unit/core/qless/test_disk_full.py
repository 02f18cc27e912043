"""With the write-ahead log on and its disk full, qless mutations are refused before
anything changes (as beanstalkd's OUT_OF_MEMORY); reads keep working."""

from __future__ import annotations

from typing import Any

from tests.unit.core.qless.conftest import Lua


class Journal:
    """Records what it is given; `full` makes room() refuse."""

    def __init__(self) -> None:
        self.full = False
        self.records: list[tuple[str, Any]] = []
        self.asked: list[int] = []

    def room(self, nbytes: int) -> bool:
        self.asked.append(nbytes)
        return not self.full

    def record_put(self, job: Any) -> None:
        self.records.append(("put", job.id))

    def record_update(self, job: Any) -> None:
        self.records.append(("update", job.id))

    def record_delete(self, job: Any) -> None:
        self.records.append(("delete", job.id))

    def record_pause(self, tube: Any) -> None:
        self.records.append(("pause", tube.name))

    def record_state(self, key: str, value: bytes) -> None:
        self.records.append(("state", key))

    def states(self, prefix: str) -> dict[str, bytes]:
        return {}


def journal(lua: Lua) -> Journal:
    j = Journal()
    lua.engine.journal = j  # type: ignore[assignment]
    return j


def test_mutations_are_refused_when_the_disk_is_full(lua: Lua) -> None:
    j = journal(lua)
    lua("put", 0, "w", "q", "a", "k", {}, 0, "tags", ["t"])
    lua("recur", 0, "q", "r", "k", {}, "interval", 60, 0)
    j.full = True
    before = list(j.records)
    refusals = [
        ("put", "w", "q", "b", "k", {}, 0),
        ("pop", "q", "w", 1),
        ("peek", "q", 1),  # would spawn recurring children
        ("config.set", "heartbeat", 5),
        ("tag", "add", "a", "u"),
        ("cancel", "a"),
        ("priority", "a", 3),
        ("recur.update", "r", "priority", 2),
        ("pause", "q"),
    ]
    for fn, *args in refusals:
        lua.raises(r"out of disk space for the write-ahead log; nothing was changed", fn, 1,
                   *args)  # fmt: skip
    assert j.records == before
    assert lua("get", 1, "b") is None
    assert lua("get", 1, "a")["state"] == "waiting"
    assert lua("config.get", 1, "heartbeat") == 60
    assert lua("recur.get", 1, "r")["count"] == 0
    # reads still answer
    assert lua("queues", 1, "q")["waiting"] == 1
    assert lua("tag", 1, "get", "t") == {"total": 1, "jobs": ["a"]}
    assert lua("track", 1) == {"jobs": [], "expired": []}
    j.full = False
    assert [job["jid"] for job in lua("pop", 2, "q", "w", 5)] == ["a", "r-1"]


def test_the_request_size_is_part_of_the_room_asked(lua: Lua) -> None:
    from beanpod.core.qless.api import RECORD_ALLOWANCE, call

    j = journal(lua)
    call(lua.q, "put", ["w", "q", "a", "k", "{}", 0], 0, 1000)
    assert j.asked == [1000 + RECORD_ALLOWANCE]
    call(lua.q, "get", ["a"], 0, 10)
    assert j.asked == [1000 + RECORD_ALLOWANCE]  # reads ask nothing
