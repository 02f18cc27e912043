"""A node that cannot take a peer's checkpoint says so (NoPeerCheckpoint, naming each
peer's failure), not that etcd is unusable: etcd answered."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import aiohttp
import pytest

from beanpod.durability.cluster import peers
from beanpod.durability.cluster.etcd import Etcd, KeyValue


class PublishedEtcd:
    """An etcd whose range of `ckpt/` holds the given checkpoints."""

    def __init__(self, published: dict[str, dict[str, Any]]) -> None:
        self.published = published
        self.session: aiohttp.ClientSession | None = None

    async def range(self, key: bytes, end: bytes | None = None) -> tuple[list[KeyValue], bool, int]:
        kvs = [KeyValue(key + node.encode(), json.dumps(info).encode())
               for node, info in self.published.items()]  # fmt: skip
        return kvs, False, 1


def fetch(published: dict[str, dict[str, Any]], directory: Path) -> str:
    async def run() -> str:
        etcd = PublishedEtcd(published)
        async with aiohttp.ClientSession() as etcd.session:
            with pytest.raises(peers.NoPeerCheckpoint) as caught:
                await peers.fetch(cast(Etcd, etcd), b"/p/", "n1", directory, 5, None)
        return str(caught.value)

    return asyncio.run(run())


def test_with_none_published_it_says_so(tmp_path: Path) -> None:
    assert fetch({}, tmp_path) == "no peer's checkpoint of log/5 or later taken: none published"


def test_each_peer_that_failed_is_named(tmp_path: Path) -> None:
    why = fetch({"n2": {"seq": 9, "http": "127.0.0.1:9"}, "n3": {"seq": 2, "http": "x:1"}},
                tmp_path)  # fmt: skip
    assert why.startswith("no peer's checkpoint of log/5 or later taken: n2: ")  # n3 is too old
    assert "n3" not in why
