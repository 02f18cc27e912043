"""The scripts the door knows: qless's unified script, recognised by SHA-1 or by its body
(there is no Lua interpreter here).

A body is qless's unified script when it holds the QlessAPI table and its dispatch; the
arguments of its `put` tell the two API generations apart: qless-core of 2013 (qless-py
0.11.4) takes no worker (`put(now, queue, jid, ...)`), later ones do (`put(now, me,
queue, ...)`: qless-with-throttles, the Ruby gem).
"""

from __future__ import annotations

import hashlib
import re

OLD_PUT = "core2013"  # put(now, queue, jid, klass, data, delay, ...): no worker
WORKER_PUT = "worker-put"  # put(now, me, queue, jid, ...)
# The registry's scripts, by the SHA-1 of their bodies (qless/qless-core/qless.lua of
# qless-py 0.11.4, qless/lua/qless.lua of qless-with-throttles 0.11.4).
KNOWN = {
    "e22308e0c17253ff34e753088c8e9954c52a6dae": OLD_PUT,
    "506e105128361dc90bc0ca1a33baac8ab4f2895a": WORKER_PUT,
}
_PUT = re.compile(rb"QlessAPI\.put\s*=\s*function\s*\(\s*now\s*,\s*(\w+)")


def flavour(body: bytes) -> str | None:
    """Which qless script `body` is, or None when it is not one."""
    if b"QlessAPI" not in body or b"return command(now, unpack(ARGV))" not in body:
        return None
    found = _PUT.search(body)
    if found is None:
        return None
    return OLD_PUT if found.group(1) == b"queue" else WORKER_PUT


class Scripts:
    """The loaded scripts: SHA (hex, lower case) -> flavour."""

    def __init__(self) -> None:
        self.loaded: dict[str, str] = dict(KNOWN)

    def load(self, body: bytes) -> tuple[str, str | None]:
        sha = hashlib.sha1(body, usedforsecurity=False).hexdigest()
        kind = self.loaded.get(sha) or flavour(body)
        if kind is not None:
            self.loaded[sha] = kind
        return sha, kind

    def flush(self) -> None:
        self.loaded = dict(KNOWN)
