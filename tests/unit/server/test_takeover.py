"""A cluster node's takeover follows the restore as a restart does (App.after_restore):
the reservations its event log leaves open are closed, the extensions index the jobs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

from beanpod.durability.records import PutRecord
from beanpod.events.reservations import open_reservations
from beanpod.events.writer import MS_PER_DAY, EventWriter
from beanpod.server.app import App
from beanpod.server.cluster import ClusterRole
from beanpod.server.config import ServerConfig

T0 = 1_800_000_000_000


def test_a_takeover_closes_the_reservations_the_old_leader_left_open(tmp_path: Path) -> None:
    with EventWriter(tmp_path) as writer:  # the last leader's events: job 1 still held
        for ts, event in ((T0, "put"), (T0 + 1, "reserve")):
            writer.emit(ts, event, 1, "q", 1)
        writer.flush()
    assert open_reservations(tmp_path, {1}, MS_PER_DAY) == [1]
    config = ServerConfig(events_dir=str(tmp_path), cluster="etcd://127.0.0.1:9/t", node_id="n")
    app = App(config)

    async def take_over() -> None:
        role = ClusterRole(app, "etcd://127.0.0.1:9/t", "n")
        node = role.node  # the log folded as a follower, then placed (as _take_over does)
        node.restorer.feed(
            0, PutRecord(1, "q", 0, 0, 60_000, T0, 0, 0, (1, 0, 0, 0, 0), 0, b"", b"")
        )
        node.restorer.finish(T0 + 2)
        node.journal = cast(Any, object())  # its journal (no etcd here)
        role.lead()
        assert app.wal is node.journal and app.engine.jobs[1].state.name == "READY"
        assert app.events is not None
        app.events.close()
        await node.etcd.close()

    asyncio.run(take_over())
    assert open_reservations(tmp_path, {1}, MS_PER_DAY) == []
