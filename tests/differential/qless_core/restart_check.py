"""QLESS_CORE_WAL=1: after each qless-core test, what the server shows must be the same
after kill -9 and a restart on its write-ahead log.

The snapshot reads everything a client can read without changing anything (no pop or
peek, which may spawn recurring children): queue counts, every queue's job listings,
every job and template seen, failures, completed jobs, config, tags, tracking, workers
and the day's statistics.
"""

from __future__ import annotations

from typing import Any, Protocol

STATES = ("running", "stalled", "scheduled", "depends", "recurring", "waiting", "throttled")


class Requester(Protocol):
    def request(self, body: dict[str, Any]) -> Any: ...


def snapshot(wire: Requester, now: float) -> dict[str, Any]:
    def call(fn: str, *args: Any) -> Any:
        return wire.request({"fn": fn, "now": now, "args": list(args)})

    shown: dict[str, Any] = {"queues": call("queues"), "config": call("config.get")}
    names = [q["name"] for q in shown["queues"]]
    listed = {f"{state} {name}": call("jobs", state, name, 0, 10_000)
              for name in names for state in STATES}  # fmt: skip
    listed["complete"] = call("jobs", "complete", 0, 10_000)
    groups = call("failed")
    listed.update({f"failed {g}": call("failed", g, 0, 10_000)["jobs"] for g in groups})
    jids = sorted({jid for jids in listed.values() for jid in jids})
    shown.update(listed=listed, failed=groups, jobs=call("multiget", *jids) if jids else [])
    recurring = [jid for name in names for jid in listed[f"recurring {name}"]]
    shown["templates"] = [call("recur.get", jid) for jid in recurring]
    shown.update(tags=call("tag", "top", 0, 10_000), track=call("track"))
    shown["workers"] = call("workers")
    shown["stats"] = {name: call("stats", name, now) for name in names}
    return shown
