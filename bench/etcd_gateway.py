"""What the cluster's trim tests and figures read from etcd, through a member's JSON
gateway (urllib: no client library): key counts, a key's value, whether an old revision
was compacted away, a key's version, each member's database size."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from typing import Any


def call(member: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST to http://MEMBER/PATH; etcd's error answers come back as they are."""
    request = urllib.request.Request(f"http://{member}{path}", json.dumps(body).encode())
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            answer: dict[str, Any] = json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        answer = json.loads(exc.read())
    return answer


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def prefix_end(prefix: str) -> str:
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def count(member: str, prefix: str) -> int:
    """Keys under `prefix` now."""
    body = {"key": b64(prefix), "range_end": b64(prefix_end(prefix)), "count_only": True}
    return int(call(member, "/v3/kv/range", body).get("count", 0))


def value(member: str, key: str) -> str | None:
    kvs = call(member, "/v3/kv/range", {"key": b64(key)}).get("kvs", [])
    return base64.b64decode(kvs[0]["value"]).decode() if kvs else None


def version(member: str, key: str) -> int:
    """How many times `key` was written since it was created (0: absent)."""
    kvs = call(member, "/v3/kv/range", {"key": b64(key)}).get("kvs", [])
    return int(kvs[0].get("version", 0)) if kvs else 0


def compacted(member: str, prefix: str, revision: int = 1) -> bool:
    """Does etcd refuse to read `prefix` as of `revision` (history dropped before it)?"""
    body = {"key": b64(prefix), "range_end": b64(prefix_end(prefix)), "revision": revision}
    return "compacted" in str(call(member, "/v3/kv/range", body).get("error", ""))


def db_size(member: str) -> int:
    """The member's database file size, bytes (`etcdctl endpoint status`'s DB SIZE)."""
    return int(call(member, "/v3/maintenance/status", {})["dbSize"])
