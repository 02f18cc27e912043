"""Worker registry (qless-core test_worker)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def test_jobs_and_stalled_per_worker(lua: Lua) -> None:
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    lua("pop", 0, "q", "worker", 1)
    assert lua("workers", 0) == [{"name": "worker", "jobs": 1, "stalled": 0}]
    assert lua("workers", 0, "worker") == {"jobs": ["jid"], "stalled": []}
    assert lua("workers", 100, "worker") == {"jobs": [], "stalled": ["jid"]}
    lua("complete", 100, "jid", "worker", "q", {})
    assert lua("workers", 100, "worker") == {"jobs": [], "stalled": []}


def test_expiry_heartbeat_and_deregister(lua: Lua) -> None:
    lua("config.set", 0, "max-worker-age", 100)
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    lua("pop", 0, "q", "worker", 1)
    lua("heartbeat", 90, "jid", "worker", {})
    assert [w["name"] for w in lua("workers", 150)] == ["worker"]
    assert lua("workers", 200) == []
    lua("pop", 201, "q", "other", 1)
    lua("worker.deregister", 201, "other")
    assert lua("workers", 201) == []


def test_workers_seen_at_the_same_time_list_in_reverse_byte_order(lua: Lua) -> None:
    # as qless-core's zrevrange lists them (checked against qless.lua on Redis)
    for worker in ("another", "worker", "zed", "bob"):
        lua("pop", 0, "q", worker, 1)
    lua("pop", 1, "q", "amy", 1)
    assert [w["name"] for w in lua("workers", 1)] == ["amy", "zed", "worker", "bob", "another"]
