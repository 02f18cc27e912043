"""The edge's small pieces: memory sizes, the allow-list, protected mode, the started-
command offsets the request timeout watches, and the memory meter."""

from __future__ import annotations

import pytest

from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.core.memory import JOB_OVERHEAD, MemoryMeter
from beanpod.protocols.beanstalkd.commands import Parser
from beanpod.protocols.workq.commands import Parser as WorkqParser
from beanpod.server.edge.audit import AuditLog
from beanpod.server.edge.exposure import check_exposure, split_host_port
from beanpod.server.edge.gate import Gate
from beanpod.server.edge.settings import EdgeSettings
from beanpod.server.edge.sizes import parse_memory, physical_memory
from beanpod.server.startup import StartupError


def test_memory_sizes() -> None:
    assert parse_memory("1048576") == 1 << 20
    assert parse_memory("512M") == parse_memory("512mb") == 512 << 20
    assert parse_memory("2g") == 2 << 30
    assert parse_memory("50%") == physical_memory() // 2
    for bad in ("0", "-1", "x", "150%", "1.5G", ""):
        with pytest.raises(ValueError):
            parse_memory(bad)


def test_allow_list_matches_cidrs_and_mapped_addresses() -> None:
    gate = Gate(("10.0.0.0/8", "2001:db8::/32", "192.168.1.7"), 10, AuditLog(None))
    assert gate.allows("10.2.3.4") and gate.allows("::ffff:10.2.3.4")
    assert gate.allows("2001:db8::1") and gate.allows("192.168.1.7")
    assert not gate.allows("192.168.1.8") and not gate.allows("127.0.0.1")
    assert not gate.allows("fe80::1%eth0")


def test_protected_mode() -> None:
    open_ = EdgeSettings()
    for address in ("127.0.0.1", "::1", "localhost", "unix:/tmp/x.sock"):
        check_exposure(address, open_)
    for address in ("0.0.0.0", "::", "10.1.2.3", "queue.example"):
        with pytest.raises(StartupError) as info:
            check_exposure(address, open_)
        assert info.value.exit_code == 2
        check_exposure(address, EdgeSettings(allow=("10.0.0.0/8",)))
        check_exposure(address, EdgeSettings(insecure_public=True))
    assert split_host_port("[::1]:11300") == ("::1", 11300)
    with pytest.raises(ValueError):
        split_host_port("11300")


def drain(p: Parser) -> int:
    count = 0
    while p.next_command() is not None:
        count += 1
    return count


def test_started_offset_is_stable_until_the_command_completes() -> None:
    p = Parser()
    assert p.started() is None
    p.feed(b"put 0 0 60 5\r\nhel")
    assert drain(p) == 0
    first = p.started()
    assert first is not None
    p.feed(b"l")
    assert drain(p) == 0 and p.started() == first
    p.feed(b"o\r\nstats\r\nput 0 0")
    assert drain(p) == 2
    later = p.started()
    assert later is not None and later != first
    p.feed(b" 60 1\r\nx\r\n")
    assert drain(p) == 1 and p.started() is None
    p.feed(b"put 0 0 60 99999999\r\nabc")  # too big: skipped, still one command
    drain(p)
    skipping = p.started()
    p.feed(b"def")
    drain(p)
    assert skipping is not None and p.started() == skipping


def test_workq_started_offset() -> None:
    p = WorkqParser()
    assert p.started() is None
    p.feed(b"inspect que")
    assert p.next_command() is None
    first = p.started()
    p.feed(b"u")
    assert p.next_command() is None and p.started() == first
    p.feed(b"es\r\n")
    assert p.next_command() is not None and p.started() is None


def test_meter_counts_bodies_and_refuses_past_the_cap() -> None:
    engine = Engine(MoveCheck())
    meter = MemoryMeter(cap=10 * (100 + JOB_OVERHEAD))
    engine.keep_meter(meter)
    conn = engine.connect()
    jobs = [engine.put(conn, engine.default_tube, 0, 0, 1000, b"x" * 100, 0) for _ in range(9)]
    assert meter.used == 9 * (100 + JOB_OVERHEAD)
    assert not meter.refuses(100)
    assert meter.refuses(101) and meter.refused == 1
    engine.put(conn, engine.default_tube, 0, 0, 1000, b"x" * 100, 0)
    assert meter.refuses(0)
    engine.delete(None, jobs[0].id, 0)
    assert meter.jobs == 9 and not meter.refuses(100)
    assert MemoryMeter(max_jobs_per_tube=2).refuses(0, tube_jobs=2)


def test_memory_view_for_metrics() -> None:
    from beanpod.core.query import memory_view

    engine = Engine(MoveCheck())
    assert memory_view(engine) is None
    engine.keep_meter(MemoryMeter(cap=1 << 20))
    engine.put(engine.connect(), engine.default_tube, 0, 0, 1000, b"abc", 0)
    view = memory_view(engine)
    assert view is not None and (view.used, view.cap) == (3 + JOB_OVERHEAD, 1 << 20)
