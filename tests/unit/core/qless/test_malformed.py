"""Malformed calls are refused with a QlessError and change nothing (qless-core's
`assertMalformed` lists, test_general / test_queue / test_job / test_recurring; qless-core's
leading `now` is not an argument here: the server's clock supplies it)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.core.qless.conftest import Lua

PUT = ("w", "q", "jid", "klass")
RECUR = ("q", "jid", "klass", {})

MALFORMED: list[tuple[Any, ...]] = [
    # test_general
    ("nope",),
    ("put.nope",),
    # test_queue: TestPut.test_malformed
    ("put",),
    ("put", "w"),
    ("put", "w", "q"),
    ("put", "w", "q", "jid"),
    ("put", *PUT),
    ("put", *PUT, "{]", 0),
    ("put", *PUT, "{}"),
    ("put", *PUT, "{}", "number"),
    ("put", *PUT, "{}", 1, "retries"),
    ("put", *PUT, "{}", 1, "retries", "foo"),
    ("put", *PUT, "{}", 1, "tags"),
    ("put", *PUT, "{}", 1, "tags", "{]"),
    ("put", *PUT, "{}", 1, "priority"),
    ("put", *PUT, "{}", 1, "priority", "foo"),
    ("put", *PUT, "{}", 1, "depends"),
    ("put", *PUT, "{}", 1, "depends", "{]"),
    # test_queue: TestJobs.test_malformed
    ("jobs", "complete", "foo"),
    ("jobs", "complete", 0, "foo"),
    ("jobs", "running"),
    ("jobs", "running", "q", "foo"),
    ("jobs", "running", "q", 0, "foo"),
    ("jobs", "stalled"),
    ("jobs", "stalled", "q", "foo"),
    ("jobs", "stalled", "q", 0, "foo"),
    ("jobs", "scheduled"),
    ("jobs", "scheduled", "q", "foo"),
    ("jobs", "scheduled", "q", 0, "foo"),
    ("jobs", "depends"),
    ("jobs", "depends", "q", "foo"),
    ("jobs", "depends", "q", 0, "foo"),
    ("jobs", "recurring"),
    ("jobs", "recurring", "q", "foo"),
    ("jobs", "recurring", "q", 0, "foo"),
    ("jobs", "foo", "q", 0, 25),
    # test_queue: pop / peek
    ("pop",),
    ("pop", "q"),
    ("pop", "q", "w", "foo"),
    ("peek",),
    ("peek", "q", "foo"),
    # test_job: priority, complete, fail, retry, heartbeat, log
    ("priority",),
    ("priority", "jid"),
    ("priority", "jid", "foo"),
    ("complete",),
    ("complete", "jid"),
    ("complete", "jid", "w"),
    ("complete", "jid", "w", "q", "[}"),
    ("complete", "jid", "w", "q", {}, "next"),
    ("complete", "jid", "w", "q", {}, "delay", "foo"),
    ("complete", "jid", "w", "q", {}, "next", "q2", "delay", "foo"),
    ("complete", "jid", "w", "q", {}, "next", "q2", "depends", "[}"),
    ("complete", "jid", "w", "q", {}, "color", "red"),
    ("fail",),
    ("fail", "jid"),
    ("fail", "jid", "w"),
    ("fail", "jid", "w", "group"),
    ("fail", "jid", "w", "group", "message", "[}"),
    ("retry",),
    ("retry", "jid"),
    ("retry", "jid", "q"),
    ("retry", "jid", "q", "w", "foo"),
    ("heartbeat",),
    ("heartbeat", "jid"),
    ("heartbeat", "jid", "w", "[}"),
    ("log",),
    ("log", "jid"),
    ("depends", "jid"),
    ("depends", "jid", "sideways", "x"),
    ("tag",),
    ("tag", "sideways"),
    ("tag", "get"),
    ("tag", "get", "t", "foo"),
    ("tag", "top", "foo"),
    ("track", "sideways", "jid"),
    ("track", "track"),
    ("unfail", "q", "g", "foo"),
    ("failed", "g", "foo"),
    ("config.set",),
    ("config.set", "heartbeat"),
    ("config.unset",),
    ("stats", "q"),
    ("stats", "q", "foo"),
    # test_recurring: recur
    ("recur",),
    ("recur", "q"),
    ("recur", "q", "jid"),
    ("recur", "q", "jid", "klass"),
    ("recur", *RECUR),
    ("recur", "q", "jid", "klass", "[}"),
    ("recur", *RECUR, "foo"),
    ("recur", *RECUR, "interval"),
    ("recur", *RECUR, "interval", "foo"),
    ("recur", *RECUR, "interval", 60, "foo"),
    ("recur", *RECUR, "interval", 60, 0, "tags"),
    ("recur", *RECUR, "interval", 60, 0, "tags", "[}"),
    ("recur", *RECUR, "interval", 60, 0, "priority"),
    ("recur", *RECUR, "interval", 60, 0, "priority", "foo"),
    ("recur", *RECUR, "interval", 60, 0, "retries"),
    ("recur", *RECUR, "interval", 60, 0, "retries", "foo"),
    ("recur", *RECUR, "interval", 60, 0, "backlog"),
    ("recur", *RECUR, "interval", 60, 0, "backlog", "foo"),
]

# test_recurring: recur.update of an existing template
MALFORMED_UPDATE: list[tuple[Any, ...]] = [
    ("priority",),
    ("priority", "foo"),
    ("interval",),
    ("interval", "foo"),
    ("retries",),
    ("retries", "foo"),
    ("data",),
    ("data", "[}"),
    ("klass",),
    ("queue",),
    ("backlog",),
    ("backlog", "foo"),
]


def _snapshot(lua: Lua) -> Any:
    return (
        lua("queues", 0),
        lua("get", 0, "a"),
        lua("recur.get", 0, "r"),
        lua("config.get", 0),
        lua("workers", 0),
    )


@pytest.fixture
def seeded(lua: Lua) -> Lua:
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("recur", 0, "q", "r", "klass", {}, "interval", 60, 3600)
    return lua


@pytest.mark.parametrize("call", MALFORMED, ids=lambda c: " ".join(map(str, c)))
def test_malformed_calls_are_refused(seeded: Lua, call: tuple[Any, ...]) -> None:
    before = _snapshot(seeded)
    seeded.raises(".", call[0], 0, *call[1:])
    assert _snapshot(seeded) == before


@pytest.mark.parametrize("args", MALFORMED_UPDATE, ids=lambda c: " ".join(map(str, c)))
def test_malformed_recur_updates_are_refused(seeded: Lua, args: tuple[Any, ...]) -> None:
    before = _snapshot(seeded)
    seeded.raises(".", "recur.update", 0, "r", *args)
    assert _snapshot(seeded) == before


def test_wording(lua: Lua) -> None:
    lua.raises("Unknown command nope", "nope", 0)
    lua.raises('Put\\(\\): Arg "delay" not a number', "put", 0, *PUT, "{}", "number")
    lua.raises('Put\\(\\): Arg "data" not JSON', "put", 0, *PUT, "{]", 0)
    lua.raises("Odd number of optional arguments", "put", 0, *PUT, "{}", 1, "tags")
    lua.raises('Recur\\(\\): Arg "offset" not a number', "recur", 0, *RECUR, "interval", 60, "x")
    lua.raises("Unknown type", "jobs", 0, "foo", "q", 0, 25)
