"""Disk full and failing writes/fsyncs (through an injected FileIO), and a simulated power
cut: FaultIO.power_cut() reverts every byte written but not yet fsynced, which is what an
OS crash may lose; with -f 0 nothing acknowledged may be among it."""

from __future__ import annotations

import errno
import random
import time
from pathlib import Path

from tests.support.crashload import Load, Model, check_restart
from tests.support.faultio import FaultIO
from tests.support.walserver import WalServer, stats

PUT = b"put 0 0 10 3\r\nabc\r\n"


def test_disk_full_answers_out_of_memory_and_recovers(tmp_path: Path) -> None:
    io = FaultIO()
    server = WalServer(tmp_path / "wal", io, segment_size=4096).start()
    try:
        c = server.client()
        c.cmd(b"put 0 0 10 3\r\nold\r\n")
        c.cmd(b"reserve\r\n")
        io.full = True
        replies = [c.cmd(PUT) for _ in range(100)]
        assert b"OUT_OF_MEMORY\r\n" in replies
        first_oom = replies.index(b"OUT_OF_MEMORY\r\n")
        assert set(replies[first_oom:]) == {b"OUT_OF_MEMORY\r\n"}
        assert c.cmd(b"bury 1 0\r\n") in (b"BURIED\r\n", b"OUT_OF_MEMORY\r\n")
        assert c.cmd(b"peek 1\r\n").startswith(b"FOUND 1")  # reads keep working
        assert c.cmd(b"delete 1\r\n") == b"DELETED\r\n"  # space was reserved for it
        io.full = False
        assert c.cmd(PUT).startswith(b"INSERTED")
    finally:
        server.stop()
    server = WalServer(tmp_path / "wal").start()
    try:
        c = server.client()
        assert c.cmd(b"peek 1\r\n") == b"NOT_FOUND\r\n"
        assert int(stats(c, b"stats\r\n")["current-jobs-ready"]) == first_oom + 1
    finally:
        server.stop()


def test_failing_write_holds_replies_until_it_works(tmp_path: Path) -> None:
    io = FaultIO()
    server = WalServer(tmp_path / "wal", io).start()
    try:
        c, other = server.client(), server.client()
        c.cmd(PUT)
        io.write_error = OSError(errno.EIO, "injected")
        c.send(PUT)
        assert c.nothing_within(0.3)  # not acknowledged while it is not written
        assert other.cmd(b"peek 1\r\n").startswith(b"FOUND 1")  # reads keep working
        assert other.cmd(PUT) == b"OUT_OF_MEMORY\r\n"  # no new mutations meanwhile
        io.write_error = None
        assert c.reply() == b"INSERTED 2\r\n"  # retried in the background
        assert other.cmd(PUT) == b"INSERTED 4\r\n"
    finally:
        server.stop()


def test_short_writes_are_completed(tmp_path: Path) -> None:
    io = FaultIO()
    io.short = 7
    server = WalServer(tmp_path / "wal", io, fsync_ms=0).start()
    try:
        c = server.client()
        for n in range(1, 20):
            assert c.cmd(PUT) == b"INSERTED %d\r\n" % n
    finally:
        server.stop()
    server = WalServer(tmp_path / "wal").start()
    try:
        assert int(stats(server.client(), b"stats\r\n")["current-jobs-ready"]) == 19
    finally:
        server.stop()


def test_fsync_error_rewrites_and_retries_before_acknowledging(tmp_path: Path) -> None:
    io = FaultIO()
    server = WalServer(tmp_path / "wal", io, fsync_ms=0).start()
    try:
        c = server.client()
        c.cmd(PUT)
        io.fsync_errors = 2
        assert c.cmd(PUT) == b"INSERTED 2\r\n"  # after the retried fsync worked
        assert io.fsync_errors == 0
    finally:
        server.stop()


def test_power_cut_loses_nothing_acknowledged_with_fsync_always(tmp_path: Path) -> None:
    rng = random.Random(5)
    model = Model()
    wal = tmp_path / "wal"
    for n in range(5):
        io = FaultIO()
        server = WalServer(wal, io, fsync_ms=0, segment_size=65536).start()
        if n:
            check_restart(server.port, model)
        load = Load(server.port, model, seed=rng.randrange(1 << 30)).start()
        time.sleep(rng.uniform(0.1, 0.4))
        io.power_cut()
        server.stop()  # its final flush fails: the power is off
        load.stop()
    server = WalServer(wal, fsync_ms=0).start()
    try:
        check_restart(server.port, model)
        assert model.acks > 50
    finally:
        server.stop()
