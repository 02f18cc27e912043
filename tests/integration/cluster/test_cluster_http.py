"""HTTP on a cluster's nodes: GET /leader, reads everywhere, actions on the leader only
(a follower's engine only folds the leader's log)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import greenstalk
from bench.cluster_nodes import Node, Nodes

from tests.integration.cluster.marks import needs_etcd

pytestmark = needs_etcd


def post(node: Node, path: str) -> tuple[int, dict[str, object]]:
    url = f"http://{node.host}:{node.http}{path}"
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(url, data=b"{}", method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_a_follower_refuses_actions_and_names_the_leader(cluster: Nodes) -> None:
    leader = cluster.leader()
    cluster.followers_agree(leader)
    with greenstalk.Client(leader.address) as client:
        jid = client.put(b"keep me")
    follower = next(n for n in cluster.nodes if n is not leader)
    status, body = post(follower, f"/api/v1/jobs/{jid}/bury")
    assert status == 503
    assert f"{leader.host}:{leader.port}" in str(body["error"])
    with greenstalk.Client(follower.address) as client:  # stats, read-only, works
        assert follower.process is not None
        assert client.stats()["pid"] == follower.process.pid
    status, _ = post(leader, f"/api/v1/jobs/{jid}/bury")
    assert status == 200
    with greenstalk.Client(leader.address) as client:
        assert client.stats_job(jid)["state"] == "buried"


def test_each_node_logs_each_line_once(cluster: Nodes) -> None:
    """A node's log (stderr) holds each line once: one handler, on the root logger."""
    leader = cluster.leader()
    cluster.followers_agree(leader)
    cluster.stop()
    for node in cluster.nodes:
        lines = node.log.read_text().splitlines()
        assert any("listening on" in line for line in lines), lines
        assert len(lines) == len(set(lines)), lines
