"""etcd v3 through its JSON gateway (`/v3/...` on every member's client port), over
aiohttp: the few calls the cluster needs (transactions, ranges, leases, a watch). Keys and
values travel base64-encoded; 64-bit integers come back as strings. A call that cannot
reach a member tries the next one; a call whose outcome is unknown raises EtcdUnknown.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp

CALL_SECONDS = 1.0  # a transaction not answered by then has an unknown outcome
READ_SECONDS = 10.0  # a range of the log carries up to PAGE batches of up to 1 MiB
DEFRAG_SECONDS = 60.0  # a member rewrites its whole database file
LEADER_LOOKUP_SECONDS = 5.0  # a writer looks for etcd's Raft leader again this often
READ_BUFFER = 8 << 20  # a watch line carries whole batches (base64): room for several
# etcd's answers that say a request was dropped or its outcome is not known, while its Raft
# leadership moves (a transfer, an election): the same request may be sent again
PASSING = ("raft proposal dropped", "leader changed", "no leader", "request timed out",
           "too many requests")  # fmt: skip


class EtcdError(Exception):
    """etcd answered with an error (or no member answered at all)."""


class EtcdUnknown(EtcdError):
    """A request may or may not have been applied (timeout, connection cut mid-call)."""


def b64(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode()


def unb64(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


def prefix_end(prefix: bytes) -> bytes:
    """The range_end covering every key that starts with `prefix`."""
    return prefix[:-1] + bytes([prefix[-1] + 1])


@dataclass(frozen=True)
class KeyValue:
    key: bytes
    value: bytes


def key_value(raw: dict[str, Any]) -> KeyValue:
    return KeyValue(unb64(raw.get("key")), unb64(raw.get("value")))


def parse_endpoints(text: str) -> list[str]:
    """ "h1:p1,h2:p2" -> base URLs."""
    return [f"http://{part.strip()}" for part in text.split(",") if part.strip()]


def refusal(url: str, error: str) -> EtcdError:
    """etcd's error answer: EtcdUnknown while its leadership moves (a retry is safe: an
    append's `version == 0` compare applies it once), EtcdError otherwise."""
    passing = any(words in error for words in PASSING)
    return (EtcdUnknown if passing else EtcdError)(f"{url}: {error}")


def _leads(status: dict[str, Any]) -> bool:
    """A member's status says it is the Raft leader (ids are 64-bit: strings in JSON)."""
    leader = status.get("leader")
    return bool(leader) and leader == status.get("header", {}).get("member_id")


class Etcd:
    def __init__(self, endpoints: Sequence[str], first: int = 0) -> None:
        if not endpoints:
            raise ValueError("no etcd endpoint")
        self.endpoints = list(endpoints)
        self.current = first % len(self.endpoints)  # the member that answered last
        self.session = aiohttp.ClientSession(read_bufsize=READ_BUFFER)
        self.lookup_due = 0.0
        self.lookup: asyncio.Task[None] | None = None

    async def close(self) -> None:
        if self.lookup is not None:
            self.lookup.cancel()
        await self.session.close()

    async def call(self, path: str, body: dict[str, Any], idempotent: bool = True,
                   seconds: float = CALL_SECONDS) -> Any:  # fmt: skip
        """POST `body` to `path`, trying each member once, starting with the last good one.
        A non-idempotent call that may have reached a member raises EtcdUnknown."""
        timeout = aiohttp.ClientTimeout(total=seconds)
        failures = []
        for step in range(len(self.endpoints)):
            index = (self.current + step) % len(self.endpoints)
            url = self.endpoints[index] + path
            try:
                async with self.session.post(url, json=body, timeout=timeout) as resp:
                    answer = await resp.json(content_type=None)
            except aiohttp.ClientConnectorError as exc:  # never reached it: try the next
                failures.append(f"{url}: {exc}")
                continue
            except (aiohttp.ClientError, TimeoutError) as exc:
                if not idempotent:
                    self.skip(index)
                    raise EtcdUnknown(f"{url}: {exc!r}") from exc
                failures.append(f"{url}: {exc!r}")
                continue
            self.current = index
            if isinstance(answer, dict) and "error" in answer:
                raise refusal(url, str(answer.get("error")))
            return answer
        raise EtcdError("; ".join(failures) or "no etcd member answered")

    def skip(self, index: int) -> None:
        """A call to member `index` failed with its outcome unknown: a retry starts with
        the next member."""
        self.current = (index + 1) % len(self.endpoints)

    # ---- keys ----------------------------------------------------------------------------

    async def txn(
        self,
        compare: list[dict[str, Any]],
        success: list[dict[str, Any]],
        failure: list[dict[str, Any]] | None = None,
    ) -> tuple[bool, dict[str, Any]]:
        body = {"compare": compare, "success": success, "failure": failure or []}
        answer = await self.call("/v3/kv/txn", body, idempotent=False)
        return bool(answer.get("succeeded")), answer

    async def range(
        self, key: bytes, end: bytes | None = None, limit: int = 0, serializable: bool = False
    ) -> tuple[list[KeyValue], bool, int]:
        """(key-values, more, header revision)."""
        body: dict[str, Any] = {"key": b64(key), "limit": limit}
        if end is not None:
            body["range_end"] = b64(end)
        if serializable:
            body["serializable"] = True
        answer = await self.call("/v3/kv/range", body, seconds=READ_SECONDS)
        kvs = [key_value(raw) for raw in answer.get("kvs", [])]
        return kvs, bool(answer.get("more")), int(answer["header"]["revision"])

    async def put(self, key: bytes, value: bytes) -> None:
        await self.call("/v3/kv/put", {"key": b64(key), "value": b64(value)})

    # ---- maintenance ---------------------------------------------------------------------

    async def compact(self, revision: int) -> None:
        """Drop the history before `revision` (what deleted keys still took)."""
        await self.call("/v3/kv/compaction", {"revision": revision}, seconds=READ_SECONDS)

    async def defragment(self, endpoint: str) -> None:
        """Give the space compaction freed back to the file system, on this one member
        (it stops answering meanwhile: one member at a time)."""
        await self.ask(endpoint, "/v3/maintenance/defragment", DEFRAG_SECONDS)

    async def ask(self, endpoint: str, path: str, seconds: float = CALL_SECONDS) -> Any:
        """POST an empty request to `path` of this one member (no other is tried)."""
        url = endpoint + path
        try:
            async with self.session.post(
                url, json={}, timeout=aiohttp.ClientTimeout(seconds)
            ) as resp:
                answer = await resp.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise EtcdError(f"{url}: {exc!r}") from exc
        if isinstance(answer, dict) and "error" in answer:
            raise EtcdError(f"{url}: {answer.get('error')}")
        return answer

    # ---- leases --------------------------------------------------------------------------

    async def grant(self, ttl: int) -> int:
        answer = await self.call("/v3/lease/grant", {"TTL": ttl})
        return int(answer["ID"])

    async def keepalive(self, lease: int) -> int:
        """The lease's remaining TTL in seconds (0 or less: it is gone)."""
        answer = await self.call("/v3/lease/keepalive", {"ID": lease})
        return int(answer.get("result", {}).get("TTL", 0))

    async def revoke(self, lease: int) -> None:
        await self.call("/v3/lease/revoke", {"ID": lease})

    # ---- etcd's Raft leader ---------------------------------------------------------------

    def look_for_raft_leader(self) -> None:
        """Now and then, in the background, for a node that writes a lot (the leader's
        journal): calls go first to the member that leads etcd's Raft, since any other
        forwards each proposal to it, one more hop per append."""
        now = time.monotonic()
        if now >= self.lookup_due and len(self.endpoints) > 1:
            self.lookup_due = now + LEADER_LOOKUP_SECONDS
            self.lookup = asyncio.get_running_loop().create_task(self.find_raft_leader())

    async def find_raft_leader(self) -> None:
        """Start later calls with the member that says it is the Raft leader (if any does)."""
        asking = (self.ask(endpoint, "/v3/maintenance/status") for endpoint in self.endpoints)
        answers = await asyncio.gather(*asking, return_exceptions=True)
        for index, answer in enumerate(answers):
            if isinstance(answer, dict) and _leads(answer):
                self.current = index
                return

    # ---- watching ------------------------------------------------------------------------

    async def watch(self, key: bytes, end: bytes, start: int) -> AsyncIterator[list[KeyValue]]:
        """Puts under [key, end) from revision `start` on, a list per watch response."""
        body = {"create_request": {"key": b64(key), "range_end": b64(end),
                                   "start_revision": start, "filters": ["NODELETE"]}}  # fmt: skip
        url = self.endpoints[self.current] + "/v3/watch"
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=CALL_SECONDS)
        async with self.session.post(url, json=body, timeout=timeout) as resp:
            async for line in resp.content:
                if not line.strip():
                    continue
                answer = json.loads(line).get("result", {})
                if answer.get("canceled"):
                    raise EtcdError(f"watch canceled: {answer.get('cancel_reason', '')}")
                events = [key_value(e["kv"]) for e in answer.get("events", []) if "kv" in e]
                if events:
                    yield events
