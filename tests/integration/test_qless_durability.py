"""With the write-ahead log on, qless jobs come back after a restart."""

from __future__ import annotations

from pathlib import Path

from beanpod.client.qless import Client
from tests.support.servers import InProcessServer


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
