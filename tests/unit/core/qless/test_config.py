"""config (qless-core test_config)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def test_defaults_set_unset(lua: Lua) -> None:
    assert lua("config.get", 0) == {
        "application": "qless", "grace-period": 10, "heartbeat": 60, "histogram-history": 7,
        "jobs-history": 604800, "jobs-history-count": 50000, "stats-history": 30,
    }  # fmt: skip
    assert lua("config.get", 0, "foo") is None
    lua("config.set", 0, "foo", "bar")
    assert lua("config.get", 0, "foo") == "bar"
    lua("config.set", 0, "heartbeat", 100)
    assert lua("config.get", 0, "heartbeat") == 100
    lua("config.unset", 0, "heartbeat")
    assert lua("config.get", 0, "heartbeat") == 60
