"""track / untrack (qless-core test_track)."""

from __future__ import annotations

from tests.unit.core.qless.conftest import Lua


def test_track_untrack_and_expired(lua: Lua) -> None:
    lua.raises("does not exist", "track", 0, "track", "jid")
    lua("put", 0, "w", "q", "jid", "klass", {}, 0)
    lua("track", 0, "track", "jid")
    assert lua("get", 0, "jid")["tracked"] is True
    assert [j["jid"] for j in lua("track", 0)["jobs"]] == ["jid"]
    lua("cancel", 0, "jid")
    assert lua("track", 0) == {"jobs": [], "expired": ["jid"]}
    lua("put", 0, "w", "q", "k", "klass", {}, 0)
    lua("track", 0, "track", "k")
    lua("track", 0, "untrack", "k")
    assert lua("get", 0, "k")["tracked"] is False
