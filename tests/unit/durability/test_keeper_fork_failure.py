"""A leader's checkpoint whose fork fails: the boundary future it was given (the batch
that ends at the fork) may still fail later; nobody awaits it, and asyncio must not
report its exception as never retrieved."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any, cast

import pytest

from beanpod.durability.cluster import forked, keeper
from beanpod.durability.cluster.etcd import Etcd, EtcdError
from beanpod.durability.cluster.keeper import Keeper


def test_a_failed_fork_retrieves_the_boundarys_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_fork(*args: Any) -> forked.Forked:
        raise OSError("Cannot allocate memory")

    monkeypatch.setattr(forked, "fork", no_fork)
    # (pytest's log capture would keep the warning's exception, its frame, the future)
    monkeypatch.setattr(keeper.log, "disabled", True)
    reported: list[dict[str, Any]] = []

    async def run() -> int:
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: reported.append(ctx))
        node_keeper = Keeper(cast(Etcd, None), b"/p/", "n1", None, tmp_path, every=10)
        boundary: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        node_keeper.start(lambda: [], boundary)
        boundary.set_exception(EtcdError("append of log/7 fenced out"))
        del boundary
        await asyncio.sleep(0)
        gc.collect()
        return node_keeper.tried

    assert asyncio.run(run()) == -1 + 10  # the next try comes `every` batches later
    assert reported == []
