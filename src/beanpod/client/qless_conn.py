"""The qless extension command on a socket: send `{"fn", "args"}`, read the JSON reply.

qless <bytes>\\r\\n<json>\\r\\n  ->  OK <bytes>\\r\\n<json>\\r\\n | QLESS_ERROR <message>\\r\\n
"""

from __future__ import annotations

import json
from typing import Any

from beanpod.client.reconnect import DEFAULT, Backoff
from beanpod.client.socket_conn import SocketConn

DEFAULT_PORT = 11300


class QlessError(Exception):
    """The server refused a call; `message` has qless's wording (match phrases such as
    "does not exist", "not currently running", "another worker")."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Connection(SocketConn):
    """One socket to a beanpod server. Not thread-safe: one per thread.

    A lost connection is re-opened with `backoff` (beanpod.client.reconnect) and the
    call in progress sent again: qless calls name their job and worker, so a resent
    call either repeats what already happened (a heartbeat, a put of the same jid) or
    is refused with qless's own words (a complete already done: QlessError). `host` may
    name several servers, "h1:11300,h2:11300" (a cluster's nodes): a lost connection
    (a follower closes it) moves on to the next (beanpod.client.socket_conn)."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = DEFAULT_PORT, timeout: float | None = 30,
        backoff: Backoff | None = DEFAULT,
    ) -> None:  # fmt: skip
        super().__init__(host, timeout, port)
        self.backoff = backoff
        if backoff is None:
            self._connect()
        else:
            backoff.retrying()(self._connect)

    def call(self, fn: str, *args: Any) -> Any:
        """Run qless function `fn` on the server and return its JSON result."""
        body = json.dumps({"fn": fn, "args": list(args)}, separators=(",", ":")).encode()
        data = b"qless %d\r\n%s\r\n" % (len(body), body)
        if self.backoff is None:
            return self._exchange(data)
        return self.backoff.retrying()(self._exchange, data)

    def _exchange(self, data: bytes) -> Any:
        try:
            (self.sock or self._connect()).sendall(data)
            line = self._line()
            if line.startswith(b"OK "):
                size = int(line[3:])
                return json.loads(self._exactly(size + 2)[:size])
        except OSError as exc:
            self._lost(exc)
            raise
        if line.startswith(b"QLESS_ERROR "):
            raise QlessError(line[12:].decode("utf-8", "replace"))
        raise QlessError(line.decode("ascii", "replace"))  # DRAINING, JOB_TOO_BIG, ...

    def _line(self) -> bytes:
        while (end := self._buf.find(b"\r\n")) < 0:
            self._fill()
        line = bytes(self._buf[:end])
        del self._buf[: end + 2]
        return line

    def _exactly(self, size: int) -> bytes:
        while len(self._buf) < size:
            self._fill()
        data = bytes(self._buf[:size])
        del self._buf[:size]
        return data

    def _fill(self) -> None:
        assert self.sock is not None
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self._buf += chunk
