"""The qless extension command on a socket: send `{"fn", "args"}`, read the JSON reply.

qless <bytes>\\r\\n<json>\\r\\n  ->  OK <bytes>\\r\\n<json>\\r\\n | QLESS_ERROR <message>\\r\\n
"""

from __future__ import annotations

import json
import socket
from typing import Any

DEFAULT_PORT = 11300


class QlessError(Exception):
    """The server refused a call; `message` has qless's wording (match phrases such as
    "does not exist", "not currently running", "another worker")."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Connection:
    """One socket to a beanpod server. Not thread-safe: one per thread."""

    def __init__(self, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 timeout: float | None = 30) -> None:  # fmt: skip
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buf = bytearray()

    def close(self) -> None:
        self.sock.close()

    def call(self, fn: str, *args: Any) -> Any:
        """Run qless function `fn` on the server and return its JSON result."""
        body = json.dumps({"fn": fn, "args": list(args)}, separators=(",", ":")).encode()
        self.sock.sendall(b"qless %d\r\n%s\r\n" % (len(body), body))
        line = self._line()
        if line.startswith(b"OK "):
            size = int(line[3:])
            data = self._exactly(size + 2)
            return json.loads(data[:size])
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
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self._buf += chunk
