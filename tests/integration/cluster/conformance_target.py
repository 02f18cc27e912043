"""The differential suite's sessions through HAProxy to a three-node cluster, next to a
beanstalkd 1.12 of their own (tests/differential: the sessions, the runner, the diff).

One cluster per `-z` the sessions use (a module's worth), not one per session: a session
that wants a fresh server (job ids from 1, `stats` from zero) runs on the cluster and on
its paired beanstalkd, which have both served exactly the same sessions before it, in
the same order, and nothing else (the start-up probe is sent to both). Two conforming
servers in the same state answer the same bytes; the first such session sees both
fresh. So the fresh sessions run first, one at a time, and the shared ones after.

Stats keys a cluster answers differently, for a reason (docs/cluster.md, "The
beanstalkd conformance suite through the proxy"), are blanked on both sides, and only
those keys.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bench.cluster_nodes import Nodes
from bench.cluster_proxy import Proxy
from bench.etcd_members import EtcdMembers

from tests.differential.harness import Entry, Runner, Transcript, normalise_stats
from tests.differential.model import Session
from tests.differential.servers import HOST, Server

#: `stats` keys whose values differ on a cluster node, by design (docs/cluster.md): its
#: log is etcd's, always on (the batch seq, the records appended, a batch's size limit).
CLUSTER_STATS_KEYS = frozenset({b"binlog-current-index", b"binlog-records-written",
                                b"binlog-max-size"})  # fmt: skip
PROBE = b"list-tube-used\r\n"


def probe(port: int) -> bool:
    """One connection asking one thing: the same on both servers of a pair."""
    try:
        with socket.create_connection((HOST, port), timeout=2) as sock:
            sock.sendall(PROBE)
            return sock.recv(64) == b"USING default\r\n"
    except OSError:
        return False


@dataclass
class Pair:
    """A cluster behind HAProxy and the beanstalkd it is compared with (same -z)."""

    nodes: Nodes
    proxy: Proxy
    reference: Server
    candidate: Server

    def run(self, session: Session) -> tuple[Transcript, Transcript]:
        """The session on both servers at once."""
        out: dict[str, Transcript] = {}
        servers = {"reference": self.reference, "candidate": self.candidate}

        def work(role: str) -> None:
            out[role] = blank_cluster_keys(Runner(session, servers[role]).run())

        threads = [threading.Thread(target=work, args=(role,)) for role in servers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return out["reference"], out["candidate"]

    def stop(self) -> None:
        self.proxy.stop()
        self.nodes.stop()
        self.reference.stop()


def start_pair(etcd: EtcdMembers, workdir: Path, z: int | None) -> Pair:
    workdir.mkdir(parents=True)
    extra = ("-z", str(z)) if z is not None else ()
    nodes = Nodes(etcd.endpoints, f"conformance-{workdir.name}", workdir, extra=extra).start()
    proxy = Proxy(nodes.nodes, workdir / "haproxy.log")
    reference = Server("beanstalkd", z)
    try:
        reference.start()
        nodes.followers_agree(nodes.leader())
        time.sleep(0.5)  # HAProxy's checks (every 200 ms) have marked the followers down
        for port in (proxy.beanstalkd[1], reference.port):
            assert probe(port), f"the probe through port {port} failed: see {workdir}"
    except BaseException:
        proxy.stop()
        nodes.stop()
        reference.stop()
        raise
    candidate = Server("cluster", z, port=proxy.beanstalkd[1])
    return Pair(nodes, proxy, reference, candidate)


def blank_cluster_keys(transcript: Transcript) -> Transcript:
    mark = b"<differs on a cluster>"
    return [
        Entry(e.desc, [normalise_stats(r, CLUSTER_STATS_KEYS, mark) for r in e.replies])
        for e in transcript
    ]
