"""query.held: the jobs clients hold, read from the holders (client connections, Workq
lease holders) rather than from every job; closed holders leave no entry and are not
kept for ever."""

from __future__ import annotations

import uuid

from beanpod.core import query
from beanpod.core.engine import Engine
from beanpod.core.workq import Workq
from tests.support.workq_engine import Outcomes, make


def held_ids(engine: Engine, wq: Workq, now: int) -> list[int]:
    return sorted(view.id for view in query.held(engine, now, None, wq))


def test_a_beanstalkd_client_is_a_holder_from_connect_to_disconnect() -> None:
    engine, wq = make()
    conn = engine.connect("127.0.0.1:5", 0)
    assert engine.clients == {conn.id: conn}
    job = engine.put(conn, engine.default_tube, 1, 0, 60_000, b"x", 0)
    assert engine.reserve(conn, 0, 1, Outcomes()) is job
    [view] = query.held(engine, 2, None, wq)
    assert (view.id, view.holder and view.holder.peer) == (job.id, "127.0.0.1:5")
    engine.disconnect(conn, 3)
    assert engine.clients == {} and held_ids(engine, wq, 4) == []


def test_workq_leases_outlive_their_connection_and_emptied_holders_are_swept() -> None:
    engine, wq = make()
    other = wq.connect("o", 0)
    previous, most = b"", 0
    for now in range(1, 200):  # each connection leases a job and closes holding it
        conn = wq.connect("w", now)
        wid = str(uuid.uuid4()).encode()
        wq.add(conn, wid, "q", 60_000, 600_000, b"", now)
        assert wq.lease(conn, ["q"], 0, now, Outcomes()) is not None
        wq.disconnect(conn, None, now)
        assert len(held_ids(engine, wq, now)) == (2 if previous else 1)  # both leases
        if previous:
            wq.complete(other, previous, b"ok", now)  # the lease before ends
        assert held_ids(engine, wq, now) == [wq.index[wid].id]
        previous, most = wid, max(most, len(wq.closed))
    assert most <= 20  # the closed holders whose leases ended are swept, not kept
    wq.complete(other, previous, b"ok", 300)
    wq.disconnect(other, None, 301)
    assert held_ids(engine, wq, 302) == [] and wq.open == {}
