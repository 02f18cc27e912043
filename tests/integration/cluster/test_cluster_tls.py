"""--tls-listen and --tls-workq-listen on a cluster's nodes, over real TLS sockets: the
leader serves them as its plain listeners (replies after the etcd commit: a put over
TLS survives kill -9 of the leader); a follower's answer as its plain ones do (beanstalkd:
`stats` only, anything else closes; Workq: every command refused naming the leader)."""

from __future__ import annotations

import os
import signal
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.cluster_nodes import Node, Nodes
from bench.etcd_members import EtcdMembers, free_port

from tests.integration.cluster.marks import needs_etcd
from tests.support.certs import Certs, make_certs

pytestmark = needs_etcd


class TlsNodes(Nodes):
    certs: Certs
    tls: dict[str, tuple[int, int]]  # node id -> (beanstalkd over TLS, Workq over TLS)

    def node_options(self, node: Node) -> list[str]:
        ports = self.tls.setdefault(node.node_id, (free_port(node.host), free_port(node.host)))
        return [*super().node_options(node),
                "--tls-listen", f"{node.host}:{ports[0]}",
                "--tls-workq-listen", f"{node.host}:{ports[1]}",
                "--tls-cert", self.certs.server_cert,
                "--tls-key", self.certs.server_key]  # fmt: skip

    def connect(self, node: Node, which: int = 0) -> ssl.SSLSocket:
        """A TLS connection to one of its TLS listeners (0: beanstalkd, 1: Workq)."""
        context = ssl.create_default_context(cafile=self.certs.ca)
        raw = socket.create_connection((node.host, self.tls[node.node_id][which]), timeout=20)
        return context.wrap_socket(raw, server_hostname="localhost")  # the cert's name


@pytest.fixture
def nodes(etcd: EtcdMembers, tmp_path: Path) -> Iterator[TlsNodes]:
    cluster = TlsNodes(etcd.endpoints, f"tls-{tmp_path.name}", tmp_path)
    cluster.certs, cluster.tls = make_certs(tmp_path), {}
    cluster.start()
    yield cluster
    cluster.stop()


def ask(sock: ssl.SSLSocket, line: bytes) -> bytes:
    """Send a command, read until the reply's line ends (b"" once the server closed)."""
    sock.sendall(line)
    got = b""
    while not got.endswith(b"\r\n"):
        chunk = sock.recv(65536)
        if not chunk:
            return got
        got += chunk
    return got


def test_the_leaders_tls_listener_serves_and_its_puts_survive_a_kill(nodes: TlsNodes) -> None:
    leader = nodes.leader()
    nodes.followers_agree(leader)
    with nodes.connect(leader) as sock:
        ids = [ask(sock, b"put 0 0 60 5\r\nhello\r\n") for _ in range(20)]
    assert all(reply.startswith(b"INSERTED ") for reply in ids)
    assert leader.process is not None
    os.kill(leader.process.pid, signal.SIGKILL)
    leader.process.wait()
    new = nodes.leader(besides=leader)
    with nodes.connect(new) as sock:
        for reply in ids:
            job = reply.split()[1]
            assert ask(sock, b"peek " + job + b"\r\n") == b"FOUND " + job + b" 5\r\nhello\r\n"


def test_a_followers_tls_listeners_answer_as_its_plain_ones(nodes: TlsNodes) -> None:
    leader = nodes.leader()
    nodes.followers_agree(leader)
    follower = next(node for node in nodes.nodes if node is not leader)
    named = f"leader: {leader.node_id} at {leader.host}:{leader.workq}"  # its Workq door
    with nodes.connect(follower) as sock:
        assert b"\ncurrent-jobs-ready: 0\n" in ask_stats(sock)  # its own, read-only
        assert ask(sock, b"put 0 0 60 1\r\na\r\n") == b""  # closed, nothing put
    with nodes.connect(follower, 1) as sock:
        add = b"add 0b7c2b4e-8d4c-4a4e-9b1a-3f4e5d6c7b8a q 1000 60000 2\r\nhi\r\n"
        assert ask(sock, add) == b"-SERVER-ERROR Not the leader (%s)\r\n" % named.encode()
    with nodes.connect(leader) as sock:
        assert b"\ncurrent-jobs-ready: 0\n" in ask_stats(sock)  # neither reached it


def ask_stats(sock: ssl.SSLSocket) -> bytes:
    """The whole `stats` reply (its body may come in several records)."""
    head = ask(sock, b"stats\r\n")
    size = int(head.split(b"\r\n", 1)[0].split()[1])
    body = head.split(b"\r\n", 1)[1]
    while len(body) < size + 2:
        body += sock.recv(65536)
    return body
