"""`BeanpodRecorder`: qless-core's `QlessRecorder` seam, answered by beanpod.

qless-core's tests call `self.lua(command, now, *args)`; the recorder sends that as one
`qless` request over a real socket, `{"fn": command, "now": now, "args": args}`, to a
`beanpod serve --clock manual:0` (the request's `now` moves the server's clock), and
turns a `QLESS_ERROR` into the `redis.ResponseError` the tests expect from Redis.
Arguments get qless-core's recorder's transform (dicts and lists as JSON text) and the
result its decoding (a string holding JSON is decoded); where qless-core answers cjson
text, an empty array reads `{}` as cjson prints it (nothing else is translated).
`with recorder:` captures what was published meanwhile, as Redis's `psubscribe *` does,
by reading beanpod's `events` on every channel (`*`); channel names get Redis's `ql:`
prefix back.
`flush()` (the tests' tearDown) swaps the server for a fresh one.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from typing import Any

import redis

from tests.differential.qless_core.beanpod_server import HOST, BeanpodServer, ServerSupply
from tests.differential.qless_core.restart_check import snapshot

# qless-core's functions that answer cjson text; cjson prints an empty array as `{}` (a
# Lua table cannot tell), so their results are shown as cjson would print the same value.
CJSON = frozenset({"get", "multiget", "config.get", "queues", "failed", "workers", "track",
                   "tag", "stats", "peek", "pop", "recur.get"})  # fmt: skip
# Diagnosis only (QLESS_CORE_AS_CORE=1): also drop the qless fork's `throttles` and
# `throttled` fields, to see which listed tests differ in nothing else.
AS_CORE = os.environ.get("QLESS_CORE_AS_CORE") == "1"
FORK_FIELDS = ("throttles", "throttled") if AS_CORE else ()


def as_cjson(value: Any) -> Any:
    """`value` as qless-core's tests read cjson's text of it: empty arrays are `{}`."""
    if isinstance(value, list):
        return [as_cjson(v) for v in value] if value else {}
    if isinstance(value, dict):
        return {k: as_cjson(v) for k, v in value.items() if k not in FORK_FIELDS}
    return value


class Wire:
    """One connection speaking beanpod's `qless` command."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection((HOST, port), timeout=30)
        self.buf = bytearray()

    def request(self, body: dict[str, Any]) -> Any:
        data = json.dumps(body, separators=(",", ":")).encode()
        self.sock.sendall(b"qless %d\r\n%s\r\n" % (len(data), data))
        line = self._line()
        if line.startswith(b"OK "):
            size = int(line[3:])
            return json.loads(self._exactly(size + 2)[:size])
        raise redis.ResponseError(line.decode("utf-8", "replace"))

    def _line(self) -> bytes:
        while (end := self.buf.find(b"\r\n")) < 0:
            self._fill()
        line = bytes(self.buf[:end])
        del self.buf[: end + 2]
        return line

    def _exactly(self, size: int) -> bytes:
        while len(self.buf) < size:
            self._fill()
        data = bytes(self.buf[:size])
        del self.buf[:size]
        return data

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("beanpod closed the connection")
        self.buf += chunk

    def close(self) -> None:
        self.sock.close()


class BeanpodRecorder:
    """What qless-core's tests see as `self.lua`."""

    __name__ = "QlessRecorder"

    def __init__(self, supply: ServerSupply) -> None:
        self._supply = supply
        self._server: BeanpodServer | None = None
        self._wire: Wire | None = None
        self._cursor: int | None = None
        self._latest = 0.0  # the latest `now` sent: the server's clock
        self.log: list[dict[str, str]] = []

    def _connection(self) -> Wire:
        if self._wire is None:
            self._server = self._supply.take()
            self._wire = Wire(self._server.port)
        return self._wire

    def raw(self, *args: Any) -> Any:
        """Untransformed, as redis-py's script call takes them: (keys, args)."""
        argv = list(args[1]) if len(args) > 1 else []
        body: dict[str, Any] = {}
        if argv:
            body["fn"] = argv[0]
        if len(argv) > 1:
            body["now"] = argv[1]
        body["args"] = argv[2:]
        return self._connection().request(body)

    def __call__(self, *args: Any) -> Any:
        sent = [json.dumps(a) if isinstance(a, dict | list) else a for a in args]
        body: dict[str, Any] = {"fn": sent[0]} if sent else {}
        if len(sent) > 1:
            body["now"] = sent[1]
            with contextlib.suppress(TypeError, ValueError):
                self._latest = max(self._latest, float(sent[1]))  # where the clock is
        body["args"] = sent[2:]
        result = self._connection().request(body)
        if body.get("fn") in CJSON:
            return as_cjson(result)
        if isinstance(result, str):  # qless-core's functions return JSON as text
            try:
                return json.loads(result)
            except ValueError:
                return result
        return result

    def flush(self) -> None:
        try:
            if self._wire is not None and self._server is not None and self._server.wal:
                self._check_restart(self._wire, self._server)
        finally:  # the next test gets a fresh server even when the check failed
            self._drop_server()

    def _drop_server(self) -> None:
        if self._wire is not None:
            self._wire.close()
            self._wire = None
        if self._server is not None:
            self._server.stop()
            self._server = None
        self._latest = 0.0

    def _check_restart(self, wire: Wire, server: BeanpodServer) -> None:
        """QLESS_CORE_WAL=1: the same state after kill -9 and a restart on the log."""
        before = snapshot(wire, self._latest)
        wire.close()
        server.crash()
        self._server = BeanpodServer(server.wal, self._latest)
        self._wire = Wire(self._server.port)
        after = snapshot(self._wire, self._latest)
        changed = {key: (before[key], after.get(key)) for key in before
                   if after.get(key) != before[key]}  # fmt: skip
        assert not changed, f"after kill -9 and restart (before, after): {changed}"

    def __enter__(self) -> BeanpodRecorder:
        self.log = []
        self._cursor = self._connection().request({"fn": "events", "args": ["*"]})["cursor"]
        return self

    def __exit__(self, *exc: object) -> None:
        read = self._connection().request({"fn": "events", "args": ["*", self._cursor, 0, 1000]})
        self.log.extend({"channel": "ql:" + m["channel"], "data": m["data"]}
                        for m in read["messages"])  # fmt: skip
