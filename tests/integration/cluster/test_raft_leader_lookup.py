"""A leader's journal sends its appends to the member that leads etcd's Raft (any other
forwards each proposal to it): the client asks every member's status and starts its
calls there, and follows the Raft leadership when it moves."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench.etcd_members import EtcdMembers, move_raft_leader, raft_leader

from beanpod.durability.cluster.etcd import Etcd
from tests.integration.cluster.marks import needs_etcd

pytestmark = needs_etcd


def leader_index(members: EtcdMembers) -> int:
    return members.members.index(raft_leader(members))


async def found(members: EtcdMembers, first: int) -> int:
    etcd = Etcd([f"http://{m.client}" for m in members.members], first=first)
    try:
        await etcd.find_raft_leader()
        return etcd.current
    finally:
        await etcd.close()


def test_calls_start_with_the_raft_leader_and_follow_it(tmp_path: Path) -> None:
    members = EtcdMembers(tmp_path / "etcd").start()
    try:
        for first in range(3):  # wherever the client started
            assert asyncio.run(found(members, first)) == leader_index(members)
        move_raft_leader(raft_leader(members))
        assert asyncio.run(found(members, leader_index(members) + 1)) == leader_index(members)
    finally:
        members.stop()


def test_with_no_member_answering_the_client_stays_where_it_was() -> None:
    etcd_urls = ["http://127.0.0.1:9", "http://127.0.0.1:9"]  # nothing listens on port 9

    async def run() -> int:
        etcd = Etcd(etcd_urls, first=1)
        try:
            await etcd.find_raft_leader()
            return etcd.current
        finally:
            await etcd.close()

    assert asyncio.run(run()) == 1
