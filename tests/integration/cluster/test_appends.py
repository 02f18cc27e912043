"""The leader's fenced append against a real 3-member etcd, through both transports
(gRPC with aetcd, the JSON gateway): it commits once; a retry of a committed append
fails and reads back that it was ours (`Fence.wrote`); a stale fence writes nothing;
through gRPC a member that cannot be reached leaves the outcome unknown and the next
try goes to the next member; etcd's refusal of a too-large batch is a refusal."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import pytest
from bench.etcd_members import EtcdMembers

from beanpod.durability.cluster.appends import Appends, GatewayAppends, appends_for
from beanpod.durability.cluster.etcd import Etcd, EtcdError, EtcdUnknown, b64
from beanpod.durability.cluster.fence import Fence
from beanpod.durability.cluster.grpc_appends import GrpcAppends
from tests.integration.cluster.marks import needs_etcd

pytestmark = needs_etcd
T = TypeVar("T")
TRANSPORTS = {"grpc": GrpcAppends, "gateway": GatewayAppends}


@pytest.fixture(scope="module")
def urls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    members = EtcdMembers(tmp_path_factory.mktemp("etcd")).start()
    try:
        yield [f"http://{m.client}" for m in members.members]
    finally:
        members.stop()


def with_appends(urls: list[str], transport: str,
                 use: Callable[[Etcd, Appends], Awaitable[T]]) -> T:  # fmt: skip
    async def run() -> T:
        etcd = Etcd(urls)
        appends = TRANSPORTS[transport](etcd)
        try:
            return await use(etcd, appends)
        finally:
            await appends.close()
            await etcd.close()

    return asyncio.run(run())


async def lead(etcd: Etcd, key: bytes) -> Fence:
    """Create a leader key; its create revision is the fence."""
    _, answer = await etcd.txn([], [{"request_put": {"key": b64(key), "value": b64("me")}}])
    return Fence(key, int(answer["header"]["revision"]))


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_append_commits_once_and_a_retry_reads_back_that_it_was_ours(
    urls: list[str], transport: str
) -> None:
    async def use(etcd: Etcd, appends: Appends) -> None:
        fence = await lead(etcd, f"/a-{transport}/leader".encode())
        key = f"/a-{transport}/log/0".encode()
        assert (await appends.append(fence, key, b"batch 0")).committed
        kvs, _, _ = await etcd.range(key)
        assert [kv.value for kv in kvs] == [b"batch 0"]
        again = await appends.append(fence, key, b"batch 0")
        assert not again.committed and fence.wrote(again)
        assert (again.leader_revision, again.entry) == (fence.revision, True)
        other = await appends.append(fence, f"/a-{transport}/log/1".encode(), b"1")
        assert other.committed

    with_appends(urls, transport, use)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_stale_fence_writes_nothing(urls: list[str], transport: str) -> None:
    async def use(etcd: Etcd, appends: Appends) -> None:
        mine = await lead(etcd, f"/s-{transport}/leader".encode())
        stale = Fence(mine.leader_key, mine.revision - 1)  # a deposed leader's revision
        key = f"/s-{transport}/log/0".encode()
        failed = await appends.append(stale, key, b"never")
        assert not failed.committed and not stale.wrote(failed)
        assert failed.leader_revision == mine.revision and not failed.entry
        assert (await etcd.range(key))[0] == []
        gone = Fence(f"/s-{transport}/nobody".encode(), 5)  # no leader key at all
        nobody = await appends.append(gone, key, b"never")
        assert not nobody.committed and nobody.leader_revision == 0 and not gone.wrote(nobody)

    with_appends(urls, transport, use)


def test_through_grpc_an_unreachable_member_leaves_the_outcome_unknown(urls: list[str]) -> None:
    async def use(etcd: Etcd, appends: Appends) -> bool:
        fence = await lead(etcd, b"/u/leader")
        etcd.current = 0  # the member nobody listens on
        with pytest.raises(EtcdUnknown, match=r"127\.0\.0\.1:9"):
            await appends.append(fence, b"/u/log/0", b"b")
        return (await appends.append(fence, b"/u/log/0", b"b")).committed  # the next member

    assert with_appends(["http://127.0.0.1:9", *urls], "grpc", use)


def test_through_grpc_a_batch_over_etcds_request_limit_is_refused(urls: list[str]) -> None:
    async def use(etcd: Etcd, appends: Appends) -> None:
        fence = await lead(etcd, b"/big/leader")
        with pytest.raises(EtcdError, match="request is too large") as refused:
            await appends.append(fence, b"/big/log/0", bytes(1_600_000))  # > 1.5 MiB
        assert not isinstance(refused.value, EtcdUnknown)

    with_appends(urls, "grpc", use)


def test_appends_go_through_grpc_when_its_client_is_installed() -> None:
    async def run() -> str:
        etcd = Etcd(["http://127.0.0.1:9"])
        appends = appends_for(etcd)
        await appends.close()
        await etcd.close()
        return type(appends).__name__

    assert asyncio.run(run()) == "GrpcAppends"
