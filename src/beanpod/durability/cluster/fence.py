"""The fence on a leader's writes: its leader key still has the create revision it got
when this node won (a new leader's key has another). Every append and trim compares it,
so a deposed or paused leader writes nothing."""

from __future__ import annotations

from typing import Any, NamedTuple

from beanpod.durability.cluster.etcd import b64


class Appended(NamedTuple):
    """A fenced append's answer; on failure, what its failure branch read."""

    committed: bool
    leader_revision: int = 0  # the leader key's create revision (0: no leader key)
    entry: bool = False  # the log key exists


class Fence:
    def __init__(self, leader_key: bytes, revision: int) -> None:
        self.leader_key = leader_key
        self.revision = revision

    def leads(self) -> dict[str, Any]:
        """The compare, for etcd's JSON gateway: the leader key is still ours."""
        return {"key": b64(self.leader_key), "target": "CREATE", "create_revision": self.revision}

    def wrote(self, failed: Appended) -> bool:
        """After an earlier try of the same append had an unknown outcome, a failed retry
        means that try committed iff this node still leads and the log key exists: while
        the leader key is ours nobody else writes past the log we read at takeover."""
        return failed.leader_revision == self.revision and failed.entry
