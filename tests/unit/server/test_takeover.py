"""A cluster node's takeover follows the restore as a restart does (App.after_restore):
the reservations its event log leaves open are closed, the extensions index the jobs."""

from __future__ import annotations

import asyncio
import errno
from pathlib import Path
from typing import Any, cast

import pytest

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


def test_a_takeover_on_a_full_disk_still_indexes_every_extension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The event log's write failing (ENOSPC) while the reservations are closed is told
    and the takeover goes on: Workq and qless index the jobs folded (they used to be
    skipped, so the new leader showed none of them: the fault run's full-disk takeover)."""
    config = ServerConfig(events_dir=str(tmp_path), cluster="etcd://127.0.0.1:9/t", node_id="n")
    app = App(config)
    indexed: list[str] = []

    async def take_over() -> None:
        role = ClusterRole(app, "etcd://127.0.0.1:9/t", "n")
        node = role.node
        node.restorer.feed(
            0, PutRecord(1, "q", 0, 0, 60_000, T0, 0, 0, (1, 0, 0, 0, 0), 0, b"", b"")
        )
        node.restorer.finish(T0 + 2)
        node.journal = cast(Any, object())
        assert app.events is not None
        monkeypatch.setattr(app.events, "flush", full_disk)
        monkeypatch.setattr(app.qless, "reattach", lambda now: indexed.append("qless"))
        monkeypatch.setattr(app.workq, "reattach", lambda now: indexed.append("workq"))
        role.lead()
        await node.etcd.close()

    asyncio.run(take_over())
    assert indexed == ["qless", "workq"]


def full_disk() -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_takeover_that_fails_steps_down_before_serving(tmp_path: Path) -> None:
    """A node whose takeover raises (after its journal took over) steps down: it must not
    serve half a leader, with no lease watchdog."""
    app = App(ServerConfig(cluster="etcd://127.0.0.1:9/t", node_id="n"))
    lost: list[str] = []

    async def take_over() -> None:
        role = ClusterRole(app, "etcd://127.0.0.1:9/t", "n")
        node = role.node
        node.lead, node.lost = broken_lead, lost.append
        node._catch_up = cast(Any, caught_up)  # the log: nothing past the position
        await node._take_over(7, '{"node": "n", "address": "127.0.0.1:11300"}')
        for task in node.tasks:  # the trimmer (no etcd here)
            task.cancel()
        await node.etcd.close()
        assert not node.won.is_set() and node.leader is None

    asyncio.run(take_over())
    assert lost == ["taking over failed: RuntimeError('boom')"]


def broken_lead() -> None:
    raise RuntimeError("boom")


async def caught_up() -> int:
    return 0
