"""The checkpoint while serving: built from the log by another process while commands
keep changing jobs, then a crash; start-up from it plus the segments after it restores
what a replay of the whole log restores. Over a real process: kill -9 while one is being
written and right after, after more work on top of it, and after an idle checkpoint."""

from __future__ import annotations

import asyncio
import re
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from hypothesis import given
from hypothesis import strategies as st

from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.core.qless import Qless
from beanpod.core.qless.api import call
from beanpod.core.workq import Workq
from beanpod.durability import checkpoint
from beanpod.durability import snapshot as snapshot_payload
from beanpod.durability.wal import Durability, WalSettings
from beanpod.storage import snapshot as snapshot_file
from tests.integration.wal.test_snapshot import image
from tests.support.servers import SubprocessServer

NOW = 1_700_000_000_000
SMALL = 1 << 13  # segments small enough that the jobs span several

Op = tuple[str, int, int, int, int]


def settings(directory: Path, segment_size: int = SMALL) -> WalSettings:
    return WalSettings(directory, segment_size=segment_size, snapshot_min_jobs=1,
                       checkpoint_floor=0)  # fmt: skip


def make_engine() -> tuple[Engine, Qless]:
    engine = Engine(MoveCheck())
    Workq(engine)
    return engine, Qless(engine)


async def crash(wal: Durability) -> None:
    """Stop as kill -9 would once the records are written: no shutdown snapshot."""
    await wal.commit.aclose()  # (the fsync thread stopped before the files close)
    wal.writer.close()
    assert wal.lock is not None
    wal.lock.release()


def apply(engine: Engine, q: Qless, op: Op) -> None:
    """One command; a reserve is always ended in the same step (a reservation is not
    logged, so a job reserved at the crash would differ only in its reserve count)."""
    name, tube_at, pri, delay, n = op
    conn = engine.connect()
    tube = engine.tube("abc"[tube_at])
    engine.watch(conn, tube.name)
    ids = sorted(engine.jobs)
    job_id = ids[n % len(ids)] if ids else 0
    if name == "put":
        engine.put(conn, tube, pri, delay, 60_000, b"y" * n, NOW)
    elif name == "qless":
        call(q, "put", ["w", "q", f"j{len(ids)}-{n}", "K", "{}", 0], NOW, 100)
    elif name in ("bury", "release") and engine.jobs.get(job_id, None) is not None:
        if engine.jobs[job_id].ext is None and engine.reserve_job(conn, job_id, NOW):
            if name == "bury":
                engine.bury(conn, job_id, pri, NOW)
            else:
                engine.release(conn, job_id, pri, delay, NOW)
    elif name == "delete" and job_id and engine.jobs[job_id].ext is None:
        engine.delete(conn, job_id, NOW)
    elif name == "kick":
        engine.kick(conn, tube, 1 + n % 3, NOW)
    elif name == "pause":
        engine.pause_tube(conn, tube.name, 1000 * n, NOW)


async def checkpointed(directory: Path, before: list[Op], during: list[Op], after: list[Op],
                       segment_size: int = SMALL) -> int:  # fmt: skip
    """Run `before`, start a checkpoint and run `during` one command a loop turn while
    its builder runs, then `after`, then crash. Its size (0: none)."""
    engine, q = make_engine()
    wal = Durability(engine, settings(directory, segment_size))
    await wal.open_async(NOW)
    for op in before:
        apply(engine, q, op)
    await asyncio.sleep(0)  # flushed
    task = wal.start_checkpoint()
    for op in during:
        apply(engine, q, op)
        await asyncio.sleep(0)
    size = await task
    for op in after:
        apply(engine, q, op)
    await crash(wal)
    return size


async def restarted(directory: Path) -> dict[str, Any]:
    engine, _ = make_engine()
    wal = Durability(engine, settings(directory))
    await wal.open_async(NOW)
    state = image(engine)
    state["snapshot used"] = snapshot_file.path_of(directory).exists()  # else removed
    await crash(wal)
    return state


OP = st.tuples(
    st.sampled_from(["put", "put", "put", "qless", "bury", "release", "delete", "kick", "pause"]),
    st.integers(0, 2),  # tube
    st.sampled_from([0, 5, 1024, 2**32 - 1]),  # pri
    st.sampled_from([0, 0, 5_000]),  # delay
    st.integers(0, 60),  # body length, or which job
)


@hypothesis.settings(
    max_examples=60, deadline=None, suppress_health_check=[hypothesis.HealthCheck.filter_too_much]
)
@given(
    st.lists(OP, min_size=20, max_size=80),
    st.lists(OP, max_size=40),
    st.lists(OP, max_size=20),
    st.sampled_from([1 << 11, 1 << 16]),  # small: compaction drops segments before P
)
def test_a_checkpoint_taken_while_serving_restores_what_the_log_does(
    before: list[Op], during: list[Op], after: list[Op], segment_size: int
) -> None:
    """Jobs changed, deleted, buried, kicked and put (qless too) while a checkpoint is
    built and after it: the snapshot plus the later segments restore what the whole log
    does (jobs, bodies, counters, states, tube stats, bury and ready order, pauses, the
    compaction ledger)."""
    with tempfile.TemporaryDirectory() as tmp:
        wal_dir, copy = Path(tmp) / "wal", Path(tmp) / "copy"
        size = asyncio.run(checkpointed(wal_dir, before, during, after, segment_size))
        if not size:
            hypothesis.assume(False)  # every job was gone at P: nothing to check
        assert snapshot_file.path_of(wal_dir).exists()
        shutil.copytree(wal_dir, copy)
        snapshot_file.remove(copy)
        expected = asyncio.run(restarted(copy))
        got = asyncio.run(restarted(wal_dir))
        # compaction may have dropped every segment it covers: then it is not used
        hypothesis.assume(got["snapshot used"])
        assert got == {**expected, "snapshot used": True}


def test_jobs_encoded_a_few_at_a_time_make_the_payload_encoded_at_once() -> None:
    """Runs that meet at a chunk boundary join (a one-value column stays one run, the
    loader's fast path), so chunking changes no byte."""
    engine, q = make_engine()
    for i in range(40):
        apply(engine, q, ("put", i // 20, 5, 0, i % 3))
    whole = snapshot_payload.Encoder(engine, [], {})
    whole.add(snapshot_payload.in_order(engine))
    chunked = snapshot_payload.Encoder(engine, [], {})
    jobs = snapshot_payload.in_order(engine)
    for at in range(0, len(jobs), 7):
        chunked.add(jobs[at : at + 7])
    assert chunked.payload() == whole.payload()
    assert [len(values) for values, _ in chunked.runs.values()] == [2, 1, 1, 1, 1, 1, 1, 1, 40]


def test_a_shutdown_during_a_checkpoint_gives_it_up_and_writes_its_own(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, int]:
        engine, q = make_engine()
        wal = Durability(engine, settings(tmp_path))
        await wal.open_async(NOW)
        for i in range(50):
            apply(engine, q, ("put", i % 3, 1, 0, i))
        await asyncio.sleep(0)
        task = wal.start_checkpoint()
        await asyncio.sleep(0)
        apply(engine, q, ("put", 0, 1, 0, 7))
        await wal.aclose()
        return await task, len(engine.jobs)

    size, jobs = asyncio.run(scenario())
    assert size == 0  # given up
    snap = snapshot_file.read(tmp_path)
    assert snap is not None and snap.last == max(snap.covered)
    snap.close()
    got = asyncio.run(restarted(tmp_path))
    assert got["counts"][0] == jobs and got["snapshot used"]


# ---- over a real process ------------------------------------------------------------

ARGS = ["--workq-port", "off", "-s", "65536", "--checkpoint-floor", "262144"]
ENV = {"BEANPOD_HTTP": "off"}


def serve(directory: Path) -> SubprocessServer:
    return SubprocessServer(["-b", str(directory), *ARGS], ENV).start(timeout=60)


def send(sock: socket.socket, data: bytes, replies: int) -> bytes:
    sock.sendall(data)
    got = b""
    while got.count(b"\r\n") < replies:
        chunk = sock.recv(1 << 16)
        assert chunk, "connection closed"
        got += chunk
    return got


def put_many(sock: socket.socket, count: int, body: bytes = b"x" * 100) -> list[int]:
    cmd = b"put 1 0 60 %d\r\n%s\r\n" % (len(body), body)
    got = send(sock, cmd * count, count)
    return [int(m) for m in re.findall(rb"INSERTED (\d+)", got)]


def wait_for(server: SubprocessServer, text: str, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while not any(text in line for line in server.log):
        assert time.monotonic() < end, f"no log line with {text!r}"
        time.sleep(0.005)


def present(port: int, ids: list[int]) -> set[int]:
    """The ids a peek finds (a FOUND reply is two lines: counted by its head)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"".join(b"peek %d\r\n" % i for i in ids))
        got = b""
        while len(re.findall(rb"FOUND \d+ \d+\r\n|NOT_FOUND\r\n", got)) < len(ids):
            chunk = sock.recv(1 << 16)
            assert chunk, "connection closed"
            got += chunk
    return {int(m) for m in re.findall(rb"FOUND (\d+) \d+\r\n", got)}


def check(directory: Path, kept: list[int], deleted: list[int]) -> SubprocessServer:
    server = serve(directory)
    try:
        assert present(server.port, kept) == set(kept)
        assert present(server.port, deleted) == set()
    except BaseException:
        server.kill()  # (a failed check must not leave the server running)
        raise
    return server


def churn(sock: socket.socket, ids: list[int]) -> tuple[list[int], list[int]]:
    """Put more, delete every third job: (kept, deleted)."""
    ids = ids + put_many(sock, 3000)
    gone = ids[::3]
    got = send(sock, b"".join(b"delete %d\r\n" % i for i in gone), len(gone))
    assert got.count(b"DELETED") == len(gone)
    return [i for i in ids if i not in set(gone)], gone


@pytest.mark.parametrize("when", ["during", "right after"])
def test_kill_9_during_or_right_after_a_checkpoint_keeps_every_job(
    tmp_path: Path, when: str
) -> None:
    server = serve(tmp_path)
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
            kept, deleted = churn(sock, [])
            marker = "WAL checkpoint started" if when == "during" else "WAL checkpoint written"
            while not any(marker in line for line in server.log):
                more, gone = churn(sock, [])
                kept, deleted = kept + more, deleted + gone
            wait_for(server, marker)
    finally:
        server.kill()
    server = check(tmp_path, kept, deleted)
    server.kill()


def test_kill_9_after_a_checkpoint_and_more_work_starts_from_it(tmp_path: Path) -> None:
    server = serve(tmp_path)
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
            kept, deleted = churn(sock, [])
            while not any("WAL checkpoint written" in line for line in server.log):
                more, gone = churn(sock, [])
                kept, deleted = kept + more, deleted + gone
                time.sleep(0.01)
            more, gone = churn(sock, kept[:1500])  # deletes of jobs in the snapshot too
            kept, deleted = kept[1500:] + more, deleted + gone
            got = send(sock, b"pause-tube default 3600\r\n", 1)
            assert got == b"PAUSED\r\n"
    finally:
        server.kill()
    server = check(tmp_path, kept, deleted)
    try:
        assert any("WAL snapshot" in line and "jobs, segments up to" in line
                   for line in server.log)  # fmt: skip
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            stats = send(sock, b"stats-tube default\r\n", 1)
            while not stats.endswith(b"\r\n\r\n") and stats.count(b"\n") < 15:
                stats += sock.recv(1 << 16)
        assert b"current-jobs-ready: %d\n" % len(kept) in stats
        assert b"pause: 3600\n" in stats
    finally:
        server.kill()


def test_an_idle_server_checkpoints_so_a_crash_restart_replays_little(tmp_path: Path) -> None:
    """Below the write trigger (a 1 GiB floor), 2 s without writes start a checkpoint of
    what was written; a kill -9 after it restarts from it."""
    args = ["-b", str(tmp_path), "--workq-port", "off", "--checkpoint-floor", str(1 << 30)]
    server = SubprocessServer(args, ENV).start(timeout=60)
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
            ids = put_many(sock, 12_000)  # above the 10,000 jobs a checkpoint needs
        wait_for(server, "WAL checkpoint written: 12000 jobs")
    finally:
        server.kill()
    server = check(tmp_path, ids[:50] + ids[-50:], [])
    try:
        assert any("WAL snapshot" in line and "12000 jobs" in line for line in server.log)
    finally:
        server.kill()


def test_no_checkpoint_starts_without_the_memory_its_builder_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(checkpoint, "memory_short", lambda: "1 MiB available")

    async def scenario() -> Durability:
        engine, q = make_engine()
        floor = WalSettings(tmp_path, segment_size=SMALL, snapshot_min_jobs=1,
                            checkpoint_floor=1)  # fmt: skip
        wal = Durability(engine, floor)
        await wal.open_async(NOW)
        for i in range(30):
            apply(engine, q, ("put", 0, 1, 0, i))
            await asyncio.sleep(0)  # a flush each: the trigger is asked each time
        await crash(wal)
        return wal

    with caplog.at_level("WARNING", "beanpod.wal"):
        wal = asyncio.run(scenario())
    assert wal.checkpoint is None and not snapshot_file.path_of(tmp_path).exists()
    said = [r.getMessage() for r in caplog.records if "checkpoint not started" in r.getMessage()]
    assert said == ["WAL checkpoint not started: 1 MiB available"]  # once, not per flush


def test_no_segment_is_dropped_while_the_builder_may_read_it(tmp_path: Path) -> None:
    """Every job deleted while a checkpoint is built: compaction keeps every segment until
    the builder is done (it may not have read a later delete of a job it folded yet), then
    drops the unpinned ones at the next flush."""

    async def scenario() -> tuple[set[int], set[int], set[int]]:
        engine, q = make_engine()
        wal = Durability(engine, settings(tmp_path, 1 << 11))
        await wal.open_async(NOW)
        for i in range(60):
            apply(engine, q, ("put", 0, 1, 0, 40 + i % 10))
        await asyncio.sleep(0)
        before = set(wal.writer.segments)
        task = wal.start_checkpoint()
        conn = engine.connect()
        for job_id in list(engine.jobs):
            engine.delete(conn, job_id, NOW)
            await asyncio.sleep(0)  # a flush (and a compaction pass) each
        assert not task.done()  # the builder takes longer than these turns
        during = set(wal.writer.segments)
        await task
        apply(engine, q, ("put", 0, 1, 0, 5))
        await asyncio.sleep(0)
        after = set(wal.writer.segments)
        await crash(wal)
        return before, during, after

    before, during, after = asyncio.run(scenario())
    assert len(before) > 3 and before <= during
    assert not before & after  # dropped once the builder was done


def test_a_builder_that_fails_is_logged_with_its_reason_and_serving_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A covered segment damaged on disk: the builder refuses, the server says why, keeps
    the old snapshot (none) and keeps serving and logging."""

    async def scenario() -> tuple[int, int]:
        engine, q = make_engine()
        wal = Durability(engine, settings(tmp_path, 1 << 11))
        await wal.open_async(NOW)
        for _ in range(40):
            apply(engine, q, ("put", 0, 1, 0, 40))
        await asyncio.sleep(0)
        first = min(tmp_path.glob("*.wal"))
        damaged = bytearray(first.read_bytes())
        damaged[28] ^= 0xFF  # the first record's type byte: its checksum fails
        first.write_bytes(bytes(damaged))
        size = await wal.start_checkpoint()
        apply(engine, q, ("put", 0, 1, 0, 5))
        await asyncio.sleep(0)
        await crash(wal)
        return size, wal.writer.records_written

    with caplog.at_level("WARNING", "beanpod.wal"):
        size, written = asyncio.run(scenario())
    assert size == 0 and not snapshot_file.path_of(tmp_path).exists()
    assert written == 41  # the 40 puts and the one after the failed checkpoint
    said = [r.getMessage() for r in caplog.records if "checkpoint not written" in r.getMessage()]
    assert len(said) == 1 and "BuildFailed: corrupt WAL segment" in said[0]
    assert "exit status 1" in said[0]
