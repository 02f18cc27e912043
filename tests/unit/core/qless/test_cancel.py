"""cancel (qless-core test_job)."""

from __future__ import annotations

import pytest

from tests.unit.core.qless.conftest import Lua


@pytest.mark.parametrize("state", ["waiting", "scheduled", "running", "failed", "depends"])
def test_cancel_in_every_state(lua: Lua, state: str) -> None:
    lua("put", 0, "w", "q", "dep", "klass", {}, 0)
    delay = 10 if state == "scheduled" else 0
    extra = ["depends", ["dep"]] if state == "depends" else []
    lua("put", 0, "w", "q", "jid", "klass", {}, delay, "priority", 9, *extra)
    if state in ("running", "failed"):
        lua("pop", 0, "q", "w", 1)
    if state == "failed":
        lua("fail", 0, "jid", "w", "g", "m", {})
    assert lua("get", 0, "jid")["state"] == state
    assert lua("cancel", 0, "jid") == ["jid"]
    assert lua("get", 0, "jid") is None
    assert lua("failed", 0) == {}


def test_cancel_respects_dependency_clique(lua: Lua) -> None:
    lua("put", 0, "w", "q", "a", "klass", {}, 0)
    lua("put", 0, "w", "q", "b", "klass", {}, 0, "depends", ["a"])
    lua.raises("is a dependency of b", "cancel", 0, "a")
    lua("cancel", 0, "b", "a")
    assert lua("get", 0, "a") is None and lua("get", 0, "b") is None


def test_cancel_leaves_complete_jobs_and_running_worker_fails(lua: Lua) -> None:
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    lua("pop", 0, "q", "w", 1)
    lua("cancel", 0, "jid")
    lua.raises("does not exist", "heartbeat", 0, "jid", "w", {})
    lua("put", 0, "w", "q", "done", "klass", {}, 0)
    lua("pop", 0, "q", "w", 1)
    lua("complete", 0, "done", "w", "q", {})
    lua("cancel", 0, "done")
    assert lua("get", 0, "done")["state"] == "complete"
