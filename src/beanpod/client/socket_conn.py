"""The one TCP connection a shipped client keeps (qless and Workq alike): opened again by
`_connect` after a loss (the caller's backoff decides when), closed by `close`."""

from __future__ import annotations

import socket


class SocketConn:
    """A client's socket and its read buffer; a subclass speaks its protocol over them."""

    def __init__(self, address: tuple[str, int], timeout: float | None) -> None:
        self.address = address
        self.timeout = timeout
        self.sock: socket.socket | None = None
        self._buf = bytearray()

    def close(self) -> None:
        """Close the socket; a later call reconnects."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _connect(self) -> socket.socket:
        self.close()
        sock = socket.create_connection(self.address, timeout=self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buf.clear()
        self.sock = sock
        return sock
