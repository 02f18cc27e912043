"""A raw-socket beanstalkd client for tests: send bytes, read whole framed replies."""

from __future__ import annotations

import socket

_WITH_BODY = (b"OK ", b"RESERVED ", b"FOUND ")


class RawClient:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def reply(self) -> bytes:
        """One complete reply: a line, plus `<bytes>` + CRLF for OK/RESERVED/FOUND."""
        while b"\r\n" not in self.buf:
            self._fill()
        end = self.buf.index(b"\r\n") + 2
        line = self.buf[:end]
        if line.startswith(_WITH_BODY):
            end += int(line.split()[-1]) + 2
            while len(self.buf) < end:
                self._fill()
        out, self.buf = self.buf[:end], self.buf[end:]
        return out

    def cmd(self, data: bytes, replies: int = 1) -> bytes:
        self.send(data)
        return b"".join(self.reply() for _ in range(replies))

    def nothing_within(self, seconds: float) -> bool:
        """True if no reply arrives within `seconds` (a blocked reserve)."""
        self.sock.settimeout(seconds)
        try:
            self._fill()
        except TimeoutError:
            return True
        finally:
            self.sock.settimeout(10)
        return False

    def closed_by_server(self) -> bool:
        self.sock.settimeout(5)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()
