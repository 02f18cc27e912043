"""A cluster node's checkpoint encoded and written by a forked child (durability/cluster/
forked.py): a real fork of the test process, the node's encoding and file format."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from beanpod.core.engine import Engine
from beanpod.durability import snapshot as snapshot_payload
from beanpod.durability.cluster import checkpoint, forked
from beanpod.durability.restore import Restorer
from beanpod.storage.framing import FRAME_SIZE


def engine_with(jobs: int) -> Engine:
    engine = Engine()
    conn = engine.connect()
    for n in range(jobs):
        engine.put(conn, conn.use, n, 0, 60_000, b"job %d" % n, 1000)
    return engine


def loaded(directory: Path) -> tuple[int, Restorer]:
    snap = checkpoint.read_local(directory)
    assert snap is not None
    restorer = Restorer(Engine(), FRAME_SIZE)
    steps = checkpoint.load(snap, restorer)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return int(done.value), restorer


def test_the_child_writes_the_state_at_the_fork_covering_the_seq_sent_later(
    tmp_path: Path,
) -> None:
    engine = engine_with(50)

    async def run() -> int:
        child = forked.fork(lambda: snapshot_payload.encode(engine, {}, {}), tmp_path)
        conn = engine.connect()  # the parent goes on changing its engine: not in the file
        engine.put(conn, conn.use, 0, 0, 60_000, b"after the fork", 1000)
        child.covers(41)
        return await child.result()

    size = asyncio.run(run())
    assert size == checkpoint.path_of(tmp_path).stat().st_size
    seq, restorer = loaded(tmp_path)
    assert seq == 41
    assert sorted(job.body for job in restorer.jobs.values()) == sorted(
        b"job %d" % n for n in range(50)
    )


def test_an_abandoned_checkpoint_writes_nothing(tmp_path: Path) -> None:
    async def run() -> int:
        child = forked.fork(lambda: snapshot_payload.encode(engine_with(5), {}, {}), tmp_path)
        child.abandon()
        return await child.result()

    assert asyncio.run(run()) == 0
    assert list(tmp_path.iterdir()) == []


def test_a_failing_encoding_is_reported_as_an_oserror(tmp_path: Path) -> None:
    def broken() -> list[bytes]:
        raise ValueError("no such column")

    async def run() -> int:
        child = forked.fork(broken, tmp_path)
        child.covers(3)
        return await child.result()

    with pytest.raises(OSError, match="ValueError: no such column"):
        asyncio.run(run())
    assert list(tmp_path.iterdir()) == []


def test_the_child_gives_up_before_the_rename_when_its_parent_is_gone(tmp_path: Path) -> None:
    """The parent's end of the result pipe closes when it dies or re-executes itself."""
    child = forked.fork(lambda: snapshot_payload.encode(engine_with(5), {}, {}), tmp_path)
    os.close(child.result_fd)
    child.covers(7)
    _, status = os.waitpid(child.pid, 0)
    assert os.waitstatus_to_exitcode(status) in (0, 1)
    assert checkpoint.read_local(tmp_path) is None


def test_a_stopping_node_kills_the_child_instead_of_waiting_for_it(tmp_path: Path) -> None:
    """Cancelling result() (the node stops) ends the child at once: the reaping thread
    returns, so the process's exit does not wait for a long encoding."""

    def slow_encoding() -> list[bytes]:
        time.sleep(60)
        return []

    async def run() -> None:
        child = forked.fork(slow_encoding, tmp_path)
        waiting = asyncio.ensure_future(child.result())
        await asyncio.sleep(0.2)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await asyncio.wait_for(asyncio.to_thread(_gone, child.pid), 20)  # (not in 60 s)

    asyncio.run(run())
    assert not checkpoint.path_of(tmp_path).exists()


def _gone(pid: int) -> None:
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)


def test_before_a_re_exec_the_child_is_killed_and_reaped(tmp_path: Path) -> None:
    """The node's new image would never reap it: no zombie is left behind."""

    def slow_encoding() -> list[bytes]:
        time.sleep(60)
        return []

    child = forked.fork(slow_encoding, tmp_path)
    time.sleep(0.1)
    child.end()
    with pytest.raises(ChildProcessError):  # reaped: no such child (not even a zombie)
        os.waitpid(child.pid, os.WNOHANG)
    child.end()  # twice does no harm
