"""The shutdown snapshot (DIR/snapshot): a start-up from it plus the segments after it
restores what a replay of the whole log restores; a damaged or outdated snapshot is set
aside and the log replayed whole; a snapshot that checks out but does not decode stops
start-up, naming the file."""

from __future__ import annotations

import asyncio
import logging
import shutil
import signal
import socket
import tempfile
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from hypothesis import given
from hypothesis import strategies as st

from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.core.workq import Workq
from beanpod.durability import progress as replay
from beanpod.durability import snapshot as snapshot_payload
from beanpod.durability.wal import Durability, WalSettings
from beanpod.storage import snapshot as snapshot_file
from beanpod.storage.recovery import CorruptLog
from tests.support.servers import SubprocessServer

NOW = 1_700_000_000_000
SMALL = 1 << 14  # segments small enough that the jobs span several


def settings(directory: Path) -> WalSettings:
    return WalSettings(directory, segment_size=SMALL, snapshot_min_jobs=1)


def image(engine: Engine) -> dict[str, Any]:
    """Everything a restart restores, in a form two engines can be compared by."""
    jobs = {j.id: (j.tube.name, j.state, j.pri, j.delay, j.ttr, j.created, j.body,
                   j.counters, j.file, j.ext.encode() if j.ext else None)
            for j in engine.jobs.values()}  # fmt: skip
    tubes = {t.name: (list(t.buried), t.pause_ms, t.pause_until, len(t.ready), len(t.delayed))
             for t in engine.tube_list}  # fmt: skip
    delayed = {j.id: j.deadline for j in engine.jobs.values() if j.state == 1}
    ready = {t.name: ([j.id for j in t.ready.in_order()], t.urgent) for t in engine.tube_list}
    counts = engine.counts
    return {"jobs": jobs, "tubes": tubes, "delayed": delayed, "next": engine.next_id,
            "ready": ready, "ledger": ledger(engine),
            "counts": (counts.ready, counts.delayed, counts.buried, counts.urgent)}  # fmt: skip


def ledger(engine: Engine) -> Any:
    """What pins each segment (jobs by id, with their sizes), while the log is open."""
    wal = engine.journal
    if not isinstance(wal, Durability):
        return None  # closed: the snapshot was written
    segments = {segment: {getattr(item, "id", item): size for item, size in items.items()}
                for segment, items in wal.ledger.segments().items()}  # fmt: skip
    return segments, wal.ledger.live_bytes


def workload(engine: Engine) -> None:
    """Jobs in every engine state, over several tubes and segments: buried in an order
    other than put order, counters, a reserved job, a paused tube, a Workq job."""
    conn = engine.connect()
    tubes = [engine.tube(name) for name in ("a", "b", "c")]
    for i in range(300):
        engine.put(conn, tubes[i % 3], 100 + i % 7, 0, 60_000, b"body-%d" % i * (i % 5), NOW)
    engine.put(conn, tubes[0], 5, 30_000, 60_000, b"later", NOW)
    engine.watch(conn, "b")
    engine.watch(conn, "c")
    for job_id in (30, 3, 17, 8, 29):  # bury out of put order
        engine.reserve_job(conn, job_id, NOW)
        engine.bury(conn, job_id, 2000 + job_id, NOW)
    engine.kick_job(conn, 8, NOW)
    for job_id in (40, 41):
        engine.reserve_job(conn, job_id, NOW)
        engine.release(conn, job_id, 7, 0, NOW)
    engine.delete(conn, 50, NOW)
    engine.reserve_job(conn, 60, NOW)  # still reserved at shutdown: comes back ready
    engine.pause_tube(conn, "c", 3_600_000, NOW)
    Workq(engine)  # registers its extension codec
    assert engine.journal is not None
    engine.journal.record_state("qless.config/heartbeat", b"90")


async def run(directory: Path, work: Any = None, close: bool = True) -> Engine:
    engine = Engine(MoveCheck())
    Workq(engine)
    wal = Durability(engine, settings(directory))
    wal.open(NOW)
    if work is not None:
        work(engine)
    if close:
        await wal.aclose()
    else:  # a crash once the records are written: no snapshot
        wal.commit.flush()
        wal.writer.close()
        assert wal.lock is not None
        wal.lock.release()
    return engine


def unreserved(engine: Engine) -> Engine:
    """The job reserved at shutdown keeps the reserve the log never recorded (as a
    migration of it would): the one difference from a replay of the whole log."""
    assert engine.jobs[60].reserves == 1
    engine.jobs[60].reserves = 0
    return engine


def replayed_whole(directory: Path, scratch: Path) -> dict[str, Any]:
    """What a start-up without the snapshot restores (on a copy)."""
    shutil.copytree(directory, scratch)
    snapshot_file.remove(scratch)
    return image(asyncio.run(run(scratch, close=False)))


def test_a_clean_shutdown_writes_a_snapshot_that_restores_what_the_log_does(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    wal_dir = tmp_path / "wal"
    asyncio.run(run(wal_dir, workload))
    assert snapshot_file.path_of(wal_dir).exists()
    expected = replayed_whole(wal_dir, tmp_path / "copy")
    with caplog.at_level(logging.INFO, "beanpod.wal"):
        restored = asyncio.run(run(wal_dir, close=False))
    assert "WAL snapshot" in caplog.text and "300 jobs" in caplog.text
    assert image(unreserved(restored)) == expected
    assert list(restored.tubes["c"].buried) == [30, 3]  # bury order, not put order
    assert list(restored.tubes["b"].buried) == [17, 29]
    assert restored.jobs[60].state == 0 and restored.jobs[40].releases == 1


def delete_10_put_302(engine: Engine) -> None:
    """Work after the snapshot: a delete of one of its jobs and a put in a new tube."""
    conn = engine.connect()
    engine.delete(conn, 10, NOW)
    engine.put(conn, engine.tube("d"), 1, 0, 1000, b"new", NOW)


def test_records_after_the_snapshot_are_replayed_on_top_of_it(tmp_path: Path) -> None:
    wal_dir = tmp_path / "wal"
    asyncio.run(run(wal_dir, workload))

    def more(engine: Engine) -> None:
        delete_10_put_302(engine)
        engine.kick(engine.connect(), engine.tube("a"), 1, NOW)

    asyncio.run(run(wal_dir, more, close=False))  # a crash: no new snapshot
    expected = replayed_whole(wal_dir, tmp_path / "copy")
    restored = asyncio.run(run(wal_dir, close=False))
    assert image(unreserved(restored)) == expected
    assert 10 not in restored.jobs and 302 in restored.jobs


def test_the_restored_ledger_is_the_one_the_server_kept(tmp_path: Path) -> None:
    """What pins each segment after a restart (from the snapshot plus records replayed
    on top, or from the whole log) is what the server itself had recorded."""
    wal_dir = tmp_path / "wal"
    asyncio.run(run(wal_dir, workload))
    live = ledger(asyncio.run(run(wal_dir, delete_10_put_302, close=False)))
    assert live is not None and 302 in live[0][max(live[0])]
    shutil.copytree(wal_dir, tmp_path / "copy")
    assert ledger(asyncio.run(run(wal_dir, close=False))) == live

    def delete_first(engine: Engine) -> None:  # its segment's items grouped on this use
        engine.delete(engine.connect(), 1, NOW)

    after = ledger(asyncio.run(run(tmp_path / "copy", delete_first, close=False)))
    first = min(live[0])
    assert after == ({**live[0], first: {k: v for k, v in live[0][first].items() if k != 1}},
                     live[1] - live[0][first][1])  # fmt: skip
    shutil.rmtree(tmp_path / "copy")
    shutil.copytree(wal_dir, tmp_path / "copy")
    snapshot_file.remove(tmp_path / "copy")
    assert ledger(asyncio.run(run(tmp_path / "copy", close=False))) == live


def corrupt(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_damaged_snapshot_is_set_aside_and_the_log_replayed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    wal_dir = tmp_path / "wal"
    asyncio.run(run(wal_dir, workload))
    expected = replayed_whole(wal_dir, tmp_path / "copy")
    corrupt(snapshot_file.path_of(wal_dir))
    with caplog.at_level(logging.WARNING, "beanpod.wal"):
        restored = asyncio.run(run(wal_dir, close=False))
    assert "not used (checksum mismatch); replaying the whole log" in caplog.text
    assert image(restored) == expected
    assert not snapshot_file.path_of(wal_dir).exists()


def test_a_snapshot_whose_segments_were_dropped_is_not_used(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    wal_dir = tmp_path / "wal"
    asyncio.run(run(wal_dir, workload))
    covered = snapshot_file.read(wal_dir)
    assert covered is not None
    for index in covered.covered:  # as if compaction had dropped every one
        (wal_dir / f"{index:010d}.wal").unlink()
    with caplog.at_level(logging.WARNING, "beanpod.wal"):
        asyncio.run(run(wal_dir, close=False))
    assert "segments it covers were all dropped" in caplog.text


def test_a_record_after_the_covered_end_makes_it_outdated(tmp_path: Path) -> None:
    wal_dir = tmp_path / "wal"
    asyncio.run(run(wal_dir, workload))
    snap = snapshot_file.read(wal_dir)
    assert snap is not None
    last = wal_dir / f"{snap.last:010d}.wal"
    with last.open("r+b") as f:  # a record started after the end the snapshot names
        f.seek(snap.covered[snap.last])
        f.write(b"\x09\x00\x00\x00")
    reason = snapshot_file.unusable(snap, [(snap.last, last)])
    assert reason == f"segment {snap.last} no longer ends at offset {snap.covered[snap.last]}"


def test_a_snapshot_that_checks_out_but_does_not_decode_stops_start_up(tmp_path: Path) -> None:
    wal_dir = tmp_path / "wal"
    asyncio.run(run(wal_dir, workload))
    snap = snapshot_file.read(wal_dir)
    assert snap is not None
    payload = snap.data[snap.start :]
    snapshot_file.write(wal_dir, snap.covered, [payload[:-1]])  # last body cut short
    with pytest.raises(CorruptLog) as caught:
        asyncio.run(run(wal_dir, close=False))
    assert caught.value.path.name == "snapshot"


def one_tube(engine: Engine) -> None:
    """The common case: every job ready in one tube (the snapshot's columns are one run
    each but the segment's), urgent ones among them."""
    conn = engine.connect()
    for i in range(700):
        engine.put(conn, engine.default_tube, 500, 0, 60_000, b"x" * 20, NOW + i // 100)


def test_a_one_tube_snapshot_loads_in_chunks_with_progress_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    wal_dir = tmp_path / "wal"
    asyncio.run(run(wal_dir, one_tube))
    expected = replayed_whole(wal_dir, tmp_path / "copy")
    monkeypatch.setattr(snapshot_payload, "LOAD_CHUNK", 128)
    monkeypatch.setattr(replay, "EVERY_S", 0.0)  # a line at every step
    with caplog.at_level(logging.INFO, "beanpod.wal"):
        restored = asyncio.run(run(wal_dir, close=False))
    assert image(restored) == expected
    lines = [r.getMessage() for r in caplog.records if "loaded so far" in r.getMessage()]
    assert lines == [f"WAL snapshot: {n} jobs loaded so far" for n in (*range(128, 700, 128), 700)]
    assert len(restored.jobs) == restored.counts.ready == restored.counts.urgent == 700


def test_a_one_tube_snapshot_with_records_after_it_is_placed_job_by_job(tmp_path: Path) -> None:
    """Records replayed on top change the snapshot's jobs: its bulk placement and ledger
    runs are not used (a deleted job would be placed, a buried one counted ready)."""
    wal_dir = tmp_path / "wal"
    asyncio.run(run(wal_dir, one_tube))

    def more(engine: Engine) -> None:
        conn = engine.connect()
        engine.delete(conn, 5, NOW)
        engine.reserve_job(conn, 9, NOW)
        engine.bury(conn, 9, 1, NOW)
        engine.put(conn, engine.default_tube, 2000, 0, 1000, b"new", NOW)

    asyncio.run(run(wal_dir, more, close=False))  # a crash: no new snapshot
    expected = replayed_whole(wal_dir, tmp_path / "copy")
    restored = asyncio.run(run(wal_dir, close=False))
    assert image(restored) == expected
    assert restored.counts.ready == 699 and restored.counts.buried == 1 and 5 not in restored.jobs


def test_the_snapshot_load_lets_the_event_loop_run_between_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wal_dir = tmp_path / "wal"
    asyncio.run(run(wal_dir, one_tube))
    monkeypatch.setattr(snapshot_payload, "LOAD_CHUNK", 100)
    engine = Engine(MoveCheck())
    wal = Durability(engine, settings(wal_dir))

    async def steps() -> list[int]:
        seen = [wal.progress.jobs for _ in wal.opening(NOW) if wal.progress.replaying]
        wal.writer.close()
        assert wal.lock is not None
        wal.lock.release()
        return seen

    seen = asyncio.run(steps())
    assert seen[:7] == [100, 200, 300, 400, 500, 600, 700]  # /readyz: replaying meanwhile
    assert not wal.progress.replaying and len(engine.jobs) == 700


def test_few_jobs_write_no_snapshot(tmp_path: Path) -> None:
    async def small() -> None:
        engine = Engine(MoveCheck())
        wal = Durability(engine, WalSettings(tmp_path))  # default threshold: 10,000 jobs
        wal.open(NOW)
        engine.put(engine.connect(), engine.tube("a"), 1, 0, 1000, b"x", NOW)
        await wal.aclose()

    asyncio.run(small())
    assert not snapshot_file.path_of(tmp_path).exists()


def put_many(port: int, count: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"put 1 0 60 3\r\nabc\r\n" * count)
        data = b""
        while data.count(b"\r\n") < count:
            data += sock.recv(1 << 16)
        assert data.count(b"INSERTED") == count


def command(port: int, line: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(line)
        return sock.recv(1 << 16)


def test_a_real_sigterm_then_kill_9_keeps_every_job(tmp_path: Path) -> None:
    """SIGTERM writes the snapshot (10,000 jobs: the default threshold); the next start
    uses it; a delete after it survives a kill -9 (replayed on top of the snapshot)."""
    args = ["-b", str(tmp_path), "--workq-port", "off"]
    env = {"BEANPOD_HTTP": "off"}
    server = SubprocessServer(args, env).start()
    put_many(server.port, 10_000)
    server.signal(signal.SIGTERM)
    assert server.wait(60) == 0
    assert snapshot_file.path_of(tmp_path).exists()
    server = SubprocessServer(args, env).start(timeout=60)
    try:
        assert any("WAL snapshot" in line and "10000 jobs" in line for line in server.log)
        assert command(server.port, b"delete 5\r\n") == b"DELETED\r\n"
    finally:
        server.kill()
    server = SubprocessServer(args, env).start(timeout=60)
    try:
        assert command(server.port, b"peek 5\r\n") == b"NOT_FOUND\r\n"
        assert command(server.port, b"peek 6\r\n").startswith(b"FOUND 6 3\r\nabc")
        assert b"current-jobs-ready: 9999\n" in command(server.port, b"stats\r\n")
    finally:
        server.kill()


OPS = st.lists(
    st.tuples(
        st.sampled_from(["put", "put", "put", "bury", "release", "delete", "kick"]),
        st.integers(0, 2),  # tube
        st.sampled_from([0, 5, 1023, 1024, 2**32 - 1]),  # pri
        st.sampled_from([0, 0, 0, 5_000]),  # delay
        st.integers(0, 40),  # body length, or which job
    ),
    min_size=1,
    max_size=60,
)


def random_work(ops: list[tuple[str, int, int, int, int]]) -> Any:
    def work(engine: Engine) -> None:
        conn = engine.connect()
        tubes = [engine.tube(name) for name in ("a", "b", "c")]
        for name in ("a", "b", "c"):
            engine.watch(conn, name)
        for op, tube, pri, delay, n in ops:
            ids = sorted(engine.jobs)
            job_id = ids[n % len(ids)] if ids else 0
            if op == "put":
                engine.put(conn, tubes[tube], pri, delay, 60_000, b"y" * n, NOW)
            elif op in ("bury", "release") and engine.reserve_job(conn, job_id, NOW):
                if op == "bury":
                    engine.bury(conn, job_id, pri, NOW)
                else:
                    engine.release(conn, job_id, pri, delay, NOW)
            elif op == "delete" and job_id:
                engine.delete(conn, job_id, NOW)
            elif op == "kick":
                engine.kick(conn, tubes[tube], 1 + n % 3, NOW)

    return work


@hypothesis.settings(max_examples=40, deadline=None)
@given(OPS, st.sampled_from([1, 3, 64]))
def test_any_snapshot_restores_what_the_log_does(
    ops: list[tuple[str, int, int, int, int]], chunk: int
) -> None:
    """Random jobs over tubes, priorities, delays, buries, kicks and deletes: a start-up
    from the snapshot (loaded `chunk` jobs at a time) restores what a replay of the
    whole log restores, ledger and ready order included."""
    saved = snapshot_payload.LOAD_CHUNK
    snapshot_payload.LOAD_CHUNK = chunk
    try:
        with tempfile.TemporaryDirectory() as tmp:
            wal_dir = Path(tmp) / "wal"
            asyncio.run(run(wal_dir, random_work(ops)))
            if not snapshot_file.path_of(wal_dir).exists():
                return  # every job was deleted: nothing to snapshot
            expected = replayed_whole(wal_dir, Path(tmp) / "copy")
            assert image(asyncio.run(run(wal_dir, close=False))) == expected
    finally:
        snapshot_payload.LOAD_CHUNK = saved
