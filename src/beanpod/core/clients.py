"""The engine's client connections: connect and disconnect, the used tube and the watch
list, the producer and worker counts (core/ledger.py tells the engine's layers)."""

from __future__ import annotations

from beanpod.core.conn import Conn
from beanpod.core.extension_moves import ExtensionMoves
from beanpod.core.tube import Tube


class Clients(ExtensionMoves):
    # ---- connections -------------------------------------------------------------------

    def connect(self, peer: str = "", now: int = 0, dialect: str = "beanstalkd") -> Conn:
        """A client connection from `peer` (its address), opened at `now`, speaking
        `dialect` (what the console shows)."""
        conn = Conn(self.next_conn_id, self.default_tube, peer, now, dialect=dialect)
        self.next_conn_id += 1
        tube = self.default_tube
        tube.refs += 2
        tube.using += 1
        tube.watching += 1
        self.counts.conns += 1
        self.counts.total_connections += 1
        self.clients[conn.id] = conn
        return conn

    def disconnect(self, conn: Conn, now: int) -> None:
        """Forget `conn`: its reserved jobs return to ready at once (no counters change)."""
        del self.clients[conn.id]
        if conn.waiter is not None:
            self.unpark(conn.waiter)
        counts = self.counts
        counts.conns -= 1
        if conn.producer:
            counts.producers -= 1
        if conn.worker:
            counts.workers -= 1
        for job in list(conn.reserved.values()):
            self.unreserve(job)
            self.make_ready(job, now)
        conn.use.using -= 1
        self.unref(conn.use)
        for tube in conn.watch:
            tube.watching -= 1
            self.unref(tube)
        conn.watch = []

    def use(self, conn: Conn, name: str) -> Tube:
        tube = self.tube(name)
        tube.refs += 1
        tube.using += 1
        old = conn.use
        conn.use = tube
        old.using -= 1
        self.unref(old)
        return tube

    def watch(self, conn: Conn, name: str) -> int:
        tube = self.tube(name)
        if tube not in conn.watch:
            conn.watch.append(tube)
            tube.refs += 1
            tube.watching += 1
        return len(conn.watch)

    def ignore(self, conn: Conn, name: str) -> int | None:
        """Stop watching `name`; None when it is the last watched tube (NOT_IGNORED)."""
        watch = conn.watch
        for i, tube in enumerate(watch):
            if tube.name == name:
                if len(watch) < 2:
                    return None
                last = watch.pop()
                if last is not tube:
                    watch[i] = last
                tube.watching -= 1
                self.unref(tube)
                break
        return len(watch)

    def set_producer(self, conn: Conn) -> None:
        if not conn.producer:
            conn.producer = True
            self.counts.producers += 1

    def set_worker(self, conn: Conn) -> None:
        if not conn.worker:
            conn.worker = True
            self.counts.workers += 1

    def cancel_wait(self, conn: Conn) -> None:
        """Withdraw `conn`'s parked reserve without answering it."""
        if conn.waiter is not None:
            self.unpark(conn.waiter)
