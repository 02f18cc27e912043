"""With the write-ahead log on, qless jobs come back after a restart."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from beanpod.client.qless import Client, QlessError
from tests.support.servers import InProcessServer
from tests.support.walserver import WalServer


def test_qless_state_survives_restart(tmp_path: Path) -> None:
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        c.queues["q"].put("K", {"n": 1}, jid="a", tags=["t"])
        c.queues["q"].put("K", {}, jid="b", depends=["a"])
        c.queues["q"].put("K", {}, jid="f")
        c.queues["other"].put("K", {}, jid="moved")
        c.queues["other"].put("K", {}, jid="moved")  # same queue
        c.call("put", "w", "q2", "moved", "K", "{}", 0)
        c.queues["r"].recur("K", {}, interval=3600, jid="rec")
        [a] = c.queues["q"].pop()
        a.heartbeat()
        c.call("pop", "q", "w", 1)
        c.call("fail", "f", "w", "g", "m", "{}")
    srv.stop()
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        a = c.jobs["a"]
        assert a is not None and a.state == "running" and a.tags == ["t"]
        assert c.jobs["b"].state == "depends"  # type: ignore[union-attr]
        assert c.jobs["moved"].queue_name == "q2"  # type: ignore[union-attr]
        assert c.jobs.failed("g") == {"total": 1, "jobs": ["f"]}
        assert c.call("recur.get", "rec")["interval"] == 3600
        assert c.call("tag", "get", "t") == {"total": 1, "jobs": ["a"]}
        assert a.complete() == "complete"
        assert c.jobs["b"].state == "waiting"  # type: ignore[union-attr]
    srv.stop()


def test_config_overrides_and_workers_survive_restart(tmp_path: Path) -> None:
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w1") as c:
        c.call("config.set", "heartbeat", 120)
        c.call("config.set", "q-max-concurrency", 3)
        c.call("config.set", "application", "mine")
        c.call("config.unset", "application")
        c.call("config.set", "custom", {"nested": [1, "x"]})
        c.queues["q"].put("K", {}, jid="a")
        c.call("pop", "q", "w1", 1)  # w1 registered, holds a
        c.call("pop", "empty", "w2", 1)  # w2 registered by an empty pop
        c.call("pop", "empty", "gone", 1)
        c.call("worker.deregister", "gone")
        before = c.call("workers")
    srv.stop()
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w1") as c:
        config = c.call("config.get")
        assert config["heartbeat"] == 120 and config["application"] == "qless"
        assert config["q-max-concurrency"] == 3
        assert c.call("config.get", "custom") == {"nested": [1, "x"]}
        expected = [
            {"name": "w2", "jobs": 0, "stalled": 0},
            {"name": "w1", "jobs": 1, "stalled": 0},
        ]
        assert c.call("workers") == before == expected
        c.call("config.unset", "heartbeat")
    srv.stop()
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w1") as c:
        assert c.call("config.get", "heartbeat") == 60
    srv.stop()


def test_compaction_keeps_config_overrides_live(tmp_path: Path) -> None:
    srv = WalServer(tmp_path, segment_size=16384).start()
    with Client(port=srv.port, worker_name="w") as c:
        c.call("config.set", "grace-period", 3)
        raw = srv.client()
        body = b"x" * 200
        batch = b"put 0 0 10 200\r\n" + body + b"\r\n"
        for _ in range(40):  # many segments of churn: the first one must be dropped
            ids = [int(r.split()[1]) for r in raw.cmd(batch * 40, 40).split(b"\r\n") if r]
            raw.cmd(b"".join(b"delete %d\r\n" % i for i in ids), len(ids))
        deadline = time.monotonic() + 10  # the fsync thread unlinks dropped segments
        while (tmp_path / "0000000001.wal").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not (tmp_path / "0000000001.wal").exists()
    srv.stop()
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        assert c.call("config.get", "grace-period") == 3
    srv.stop()


def test_waiting_order_survives_restart(tmp_path: Path) -> None:
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        for jid in ("a", "b", "c"):
            c.queues["q"].put("K", {}, jid=jid)
        c.queues["q"].put("K", {}, jid="a")  # a waits again: last
    srv.stop()
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        c.queues["q"].put("K", {}, jid="d")  # put after the restart: after a
        assert [j.jid for j in c.queues["q"].pop(10)] == ["b", "c", "a", "d"]
    srv.stop()


class FullDisk:
    """The server's journal with no room left (the compiled journal's methods cannot be
    replaced on the instance): everything else goes to the real one."""

    def __init__(self, journal: object) -> None:
        self.journal = journal

    def room(self, nbytes: int) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.journal, name)


def test_full_disk_refuses_qless_mutations_over_the_wire(tmp_path: Path) -> None:
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    try:
        with Client(port=srv.port, worker_name="w") as c:
            c.queues["q"].put("K", {}, jid="a")
            assert srv.app is not None and srv.app.wal is not None
            srv.app.engine.journal = FullDisk(srv.app.wal)  # the disk is full
            with pytest.raises(QlessError, match="out of disk space"):
                c.queues["q"].put("K", {}, jid="b")
            with pytest.raises(QlessError, match="out of disk space"):
                c.queues["q"].pop()
            assert c.jobs["b"] is None
            assert c.call("queues", "q")["waiting"] == 1
    finally:
        srv.stop()


def test_stats_survive_restart(tmp_path: Path) -> None:
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        for jid in ("a", "b", "c"):
            c.queues["q"].put("K", {}, jid=jid)
        jobs = c.queues["q"].pop(3)
        jobs[0].complete()
        jobs[1].fail("g", "m")
        jobs[2].retry()
        before = c.queues["q"].stats()
    srv.stop()
    assert before["wait"]["count"] == 3 and before["run"]["count"] == 1
    assert (before["failed"], before["failures"]) == (1, 1)
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        assert c.queues["q"].stats() == before
        c.queues["q"].pop()
        assert c.queues["q"].stats()["wait"]["count"] == 4
    srv.stop()


def test_throttles_survive_restart(tmp_path: Path) -> None:
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        c.throttles["db"].maximum = 1
        c.queues["q"].throttle.maximum = 5
        for jid in ("a", "b", "c"):
            c.queues["q"].put("K", {}, jid=jid, throttles=["db"])
        [a] = c.queues["q"].pop(3)  # b and c are throttled, in that order
        assert (a.jid, c.throttles["db"].pending()) == ("a", ["b", "c"])
    srv.stop()
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        db = c.throttles["db"]
        assert (db.maximum, c.queues["q"].throttle.maximum) == (1, 5)
        assert (db.locks(), db.pending()) == (["a"], ["b", "c"])
        assert c.queues["q"].jobs("throttled") == ["b", "c"]
        assert c.jobs["b"].state == "throttled"  # type: ignore[union-attr]
        assert c.queues["q"].pop(3) == []  # still full
        c.jobs["a"].complete()  # type: ignore[union-attr]
        assert [j.jid for j in c.queues["q"].pop(3)] == ["b"]
        assert db.pending() == ["c"]
    srv.stop()


def test_released_lock_stays_released_after_restart(tmp_path: Path) -> None:
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        c.throttles["db"].maximum = 1
        for jid in ("a", "b"):
            c.queues["q"].put("K", {}, jid=jid, throttles=["db"])
        c.queues["q"].pop(2)
        c.throttles["db"].release("a")  # a runs on without its lock; b waits again
    srv.stop()
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        assert (c.throttles["db"].locks(), c.throttles["db"].pending()) == ([], [])
        assert c.throttles["ql:q:q"].locks() == ["a"]  # its other locks stay
        assert c.jobs["a"].state == "running"  # type: ignore[union-attr]
        assert [j.jid for j in c.queues["q"].pop(2)] == ["b"]
        assert c.throttles["db"].locks() == ["b"]
    srv.stop()


def test_timed_out_worker_survives_restart(tmp_path: Path) -> None:
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        c.queues["q"].put("K", {}, jid="a")
        c.queues["q"].pop()[0].timeout()
    srv.stop()
    srv = InProcessServer(binlog_dir=str(tmp_path)).start()
    with Client(port=srv.port, worker_name="w") as c:
        a = c.jobs["a"]
        assert (a.state, a.worker_name) == ("stalled", "w")  # type: ignore[union-attr]
    srv.stop()
