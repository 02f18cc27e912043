"""EventWriter: buffering, one write per file, rotation, date folders, restarts, torn lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.analytics.reference import read_log

from beanpod.events.writer import EventWriter, file_name

T0 = 1_735_689_600_000  # 2025-01-01T00:00:00Z
HOUR = 3_600_000


def files(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.glob("date=*/*.jsonl"))


def put(writer: EventWriter, ts: int, job: int = 1) -> None:
    writer.emit_put(ts, job, "q", 1, pri=0, delay_ms=0, ttr_ms=1_000, nbytes=3)


def test_append_buffers_until_flush(tmp_path: Path) -> None:
    writer = EventWriter(tmp_path)
    writer.append({"v": 1, "ts": T0, "event": "touch", "job": 1, "queue": "q", "conn": 2})
    assert writer.pending == 1 and files(tmp_path) == []
    writer.flush()
    writer.close()
    assert files(tmp_path) == ["date=2025-01-01/events-1735689600000-000000.jsonl"]
    line = (tmp_path / files(tmp_path)[0]).read_text()
    assert line == '{"v":1,"ts":1735689600000,"event":"touch","job":1,"queue":"q","conn":2}\n'


def test_emitters_write_the_documented_fields(tmp_path: Path) -> None:
    with EventWriter(tmp_path) as writer:
        put(writer, T0)
        writer.emit_reserve(T0 + 1, 1, 'q"x', 2, worker="w")
        writer.emit_delete(T0 + 2, 1, "q", None, state="reserved")
        writer.emit(T0 + 3, "fail", 1, "q", 2, group=None, message="é", bytes=None)
        writer.emit(T0 + 4, "kick", 1, "q", 2, **{"from": "buried"})
    lines = (tmp_path / files(tmp_path)[0]).read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"v": 1, "ts": T0, "event": "put", "job": 1, "queue": "q", "conn": 1, "pri": 0,
         "delay_ms": 0, "ttr_ms": 1_000, "bytes": 3, "uuid": None},
        {"v": 1, "ts": T0 + 1, "event": "reserve", "job": 1, "queue": 'q"x', "conn": 2,
         "worker": "w"},
        {"v": 1, "ts": T0 + 2, "event": "delete", "job": 1, "queue": "q", "conn": None,
         "state": "reserved"},
        {"v": 1, "ts": T0 + 3, "event": "fail", "job": 1, "queue": "q", "conn": 2,
         "group": None, "message": "é", "bytes": None},
        {"v": 1, "ts": T0 + 4, "event": "kick", "job": 1, "queue": "q", "conn": 2,
         "from": "buried"},
    ]  # fmt: skip


def test_one_write_per_file_per_flush(tmp_path: Path, monkeypatch: object) -> None:
    writer = EventWriter(tmp_path, max_file_bytes=1 << 20)
    for n in range(100):
        put(writer, T0 + n)
    put(writer, T0 + 86_400_000)  # next day: a second file
    writes: list[int] = []
    real_open = open

    def spy_open(*args: object, **kwargs: object) -> object:
        handle = real_open(*args, **kwargs)  # type: ignore[call-overload]
        real_write = handle.write
        handle.write = lambda data: writes.append(len(data)) or real_write(data)
        return handle

    import beanpod.events.writer as module

    module.open = spy_open  # type: ignore[attr-defined]
    try:
        writer.close()
    finally:
        del module.open  # type: ignore[attr-defined]
    assert len(writes) == 2
    assert files(tmp_path)[0].startswith("date=2025-01-01/") and len(files(tmp_path)) == 2


def test_rotation_by_size(tmp_path: Path) -> None:
    with EventWriter(tmp_path, max_file_bytes=300) as writer:
        for n in range(5):
            put(writer, T0 + n, job=n)
    names = files(tmp_path)
    assert len(names) == 3  # ~140-byte lines: two per file
    sizes = [(tmp_path / n).stat().st_size for n in names]
    assert all(size <= 300 for size in sizes)
    assert [e["job"] for e in read_log(tmp_path)] == [0, 1, 2, 3, 4]


def test_rotation_at_least_hourly(tmp_path: Path) -> None:
    with EventWriter(tmp_path) as writer:
        put(writer, T0 + 1)
        put(writer, T0 + HOUR)  # less than an hour after the file's first event
        put(writer, T0 + HOUR + 1)  # an hour after it: new file
    assert files(tmp_path) == [
        "date=2025-01-01/" + file_name(T0 + 1, 0),
        "date=2025-01-01/" + file_name(T0 + HOUR + 1, 1),
    ]


def test_batch_crossing_midnight_goes_to_two_folders(tmp_path: Path) -> None:
    with EventWriter(tmp_path) as writer:
        put(writer, T0 - 1, job=1)
        put(writer, T0, job=2)
    assert files(tmp_path) == [
        "date=2024-12-31/" + file_name(T0 - 1, 0),
        "date=2025-01-01/" + file_name(T0, 1),
    ]


def test_sequence_continues_after_restart_so_name_order_is_write_order(tmp_path: Path) -> None:
    with EventWriter(tmp_path) as writer:
        put(writer, T0 + 5_000, job=1)
    with EventWriter(tmp_path) as writer:  # restart; the clock went back a little
        put(writer, T0 + 4_000, job=2)
    names = files(tmp_path)
    assert names == [
        "date=2025-01-01/" + file_name(T0 + 5_000, 0),
        "date=2025-01-01/" + file_name(T0 + 5_000, 1),
    ]


def test_reader_skips_a_torn_last_line(tmp_path: Path) -> None:
    with EventWriter(tmp_path) as writer:
        put(writer, T0, job=1)
        put(writer, T0 + 1, job=2)
    path = tmp_path / files(tmp_path)[0]
    path.write_bytes(path.read_bytes() + b'{"v":1,"ts":1735689600002,"event":"put","jo')
    assert [e["job"] for e in read_log(tmp_path)] == [1, 2]
    # a complete object missing only its final newline is an event
    path.write_bytes(
        path.read_bytes()[: -len(b'{"v":1,"ts":1735689600002,"event":"put","jo')]
        + b'{"v":1,"ts":1735689600002,"event":"evict","job":3,"queue":"q","conn":null}'
    )
    assert [e["job"] for e in read_log(tmp_path)] == [1, 2, 3]


def test_hot_emitters_write_the_same_bytes_as_the_generic_path(tmp_path: Path) -> None:
    """put/reserve/delete lines are hand-built with cached heads (per timestamp) and
    tails; they must equal `emit`'s lines byte for byte, also when `ts` changes back."""
    stamps = [T0, T0, T0 + 1, T0 + 1, T0, T0 + 2]
    with EventWriter(tmp_path / "hot") as hot, EventWriter(tmp_path / "generic") as generic:
        for job, ts in enumerate(stamps, start=1):
            hot.emit_put(ts, job, "q", job % 2 or None, 7, 0, 1_000, 3)
            generic.emit(ts, "put", job, "q", job % 2 or None, pri=7, delay_ms=0,
                         ttr_ms=1_000, bytes=3, uuid=None)  # fmt: skip
            hot.emit_reserve(ts, job, "q", 2, worker=None if job % 3 else "w")
            generic.emit(ts, "reserve", job, "q", 2, worker=None if job % 3 else "w")
            hot.emit_delete(ts, job, "q", 2, state="reserved")
            generic.emit(ts, "delete", job, "q", 2, state="reserved")
    text = {d: "".join(p.read_text() for p in sorted((tmp_path / d).glob("date=*/*.jsonl")))
            for d in ("hot", "generic")}  # fmt: skip
    assert text["hot"].count("\n") == 3 * len(stamps)
    assert text["hot"] == text["generic"]


QUEUES = ("q", "other", 'q"x')
CALLS = st.tuples(
    st.sampled_from(("put", "reserve", "delete", "append")),
    st.integers(min_value=-2, max_value=3).map(lambda d: T0 + d * HOUR // 2),  # midnight, hours
    st.sampled_from(QUEUES),
    st.sampled_from((1, 2, None)),
    st.sampled_from((None, "w")),
    st.booleans(),  # flush after this event
)


@settings(max_examples=60, deadline=None)
@given(calls=st.lists(CALLS, max_size=40), max_bytes=st.sampled_from((300, 1_000, 1 << 20)))
def test_hot_emitters_match_the_generic_path_in_every_file(
    tmp_path_factory: pytest.TempPathFactory,
    calls: list[tuple[str, int, str, int | None, str | None, bool]],
    max_bytes: int,
) -> None:
    """Any mix of hot events (cached per connection, by object identity), generic and
    appended ones, flushed at any point, across midnight and file rotations: the same
    files with the same bytes as the generic path (which keeps no caches)."""
    root = tmp_path_factory.mktemp("writers")
    hot, generic = EventWriter(root / "hot", max_bytes), EventWriter(root / "generic", max_bytes)
    for job, (kind, ts, queue, conn, worker, flush) in enumerate(calls, start=1):
        queue = "".join(queue)  # sometimes an equal string that is not the same object
        if kind == "put":
            hot.emit_put(ts, job, queue, conn, 0, 0, 1_000, 3)
            generic.emit(ts, "put", job, queue, conn, pri=0, delay_ms=0, ttr_ms=1_000,
                         bytes=3, uuid=None)  # fmt: skip
        elif kind == "reserve":
            hot.emit_reserve(ts, job, queue, conn, worker)
            generic.emit(ts, "reserve", job, queue, conn, worker=worker)
        elif kind == "delete":
            state = "reserved" if worker is None else "buried"
            hot.emit_delete(ts, job, queue, conn, state)
            generic.emit(ts, "delete", job, queue, conn, state=state)
        else:  # `ts` not leading the line: flush must not read it from there
            event = {"event": "touch", "ts": ts, "v": 1, "job": job, "queue": queue, "conn": conn}
            hot.append(event)
            generic.append(event)
        if flush:
            hot.flush()
            generic.flush()
    hot.close()
    generic.close()
    assert files(root / "hot") == files(root / "generic")
    for name in files(root / "hot"):
        assert (root / "hot" / name).read_bytes() == (root / "generic" / name).read_bytes()


def test_reserve_events_carry_the_connections_peer_address(tmp_path: Path) -> None:
    with EventWriter(tmp_path) as writer:
        writer.connection_opened(7, "10.0.0.5:40123")
        writer.emit_reserve(T0, 1, "q", 7)
        writer.emit_reserve(T0 + 1, 2, "q", 7, worker="w1")
        writer.connection_closed(7)
        writer.emit_reserve(T0 + 2, 3, "q", 8)
    events = [json.loads(line) for line in (tmp_path / files(tmp_path)[0]).read_text().splitlines()]
    assert [(e["worker"], e.get("peer")) for e in events] == [
        (None, "10.0.0.5:40123"),
        ("w1", "10.0.0.5:40123"),
        (None, None),
    ]
