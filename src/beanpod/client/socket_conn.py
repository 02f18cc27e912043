"""The one TCP connection a shipped client keeps (qless and Workq alike): opened again by
`_connect` after a loss (the caller's backoff decides when), closed by `close`.

A client may be given several addresses (a cluster's nodes, docs/cluster.md): a
`"HOST:PORT,HOST:PORT"` string or a list of `(host, port)` or `"HOST:PORT"`. A connect
tries each in turn from the one in use; a connection lost (not timed out) moves on to
the next, so a follower that refuses a command (it closes, or says it does not lead)
sends the client on to the others.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import cast

Address = tuple[str, int]
AddressSpec = Address | str | Sequence[Address | str]


def parse_addresses(spec: AddressSpec, default_port: int) -> list[Address]:
    """`spec` as a list of (host, port): "h:p,h:p", ("h", p), or a list of either; a
    bare host takes `default_port`; an IPv6 host with a port is written "[::1]:p"."""
    if isinstance(spec, str):
        items: list[Address | str] = [part.strip() for part in spec.split(",") if part.strip()]
    elif len(spec) == 2 and isinstance(spec[0], str) and isinstance(spec[1], int):
        items = [(spec[0], spec[1])]
    else:  # a list of addresses (a (host, port) pair is one, above)
        items = list(cast("Sequence[Address | str]", spec))
    found = [item if isinstance(item, tuple) else _one(item, default_port) for item in items]
    if not found:
        raise ValueError(f"no address in {spec!r}")
    return found


def _one(text: str, default_port: int) -> Address:
    if text.startswith("["):  # [v6]:port or [v6]
        host, _, rest = text[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else default_port
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        return host, int(port)
    return text, default_port  # a name, IPv4, or a bare IPv6 address


class Addresses:
    """The addresses a client may use, and which one it uses now."""

    def __init__(self, spec: AddressSpec, default_port: int) -> None:
        self.all = parse_addresses(spec, default_port)
        self.at = 0

    @property
    def current(self) -> Address:
        return self.all[self.at]

    def in_turn(self) -> list[tuple[int, Address]]:
        """Every address with its index, from the one in use."""
        count = len(self.all)
        return [((self.at + i) % count, self.all[(self.at + i) % count]) for i in range(count)]

    def move_on(self) -> None:
        """The connection to the current one was lost: the next connect starts after it."""
        self.at = (self.at + 1) % len(self.all)


class SocketConn:
    """A client's socket and its read buffer; a subclass speaks its protocol over them."""

    def __init__(self, address: AddressSpec, timeout: float | None, default_port: int) -> None:
        self.addresses = Addresses(address, default_port)
        self.timeout = timeout
        self.sock: socket.socket | None = None
        self._buf = bytearray()

    @property
    def address(self) -> Address:
        """The address connected to (or tried first next)."""
        return self.addresses.current

    def close(self) -> None:
        """Close the socket; a later call reconnects."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _lost(self, exc: OSError) -> None:
        """Drop a broken connection; unless it only timed out, move on to the next address."""
        self.close()
        if not isinstance(exc, TimeoutError):
            self.addresses.move_on()

    def _connect(self) -> socket.socket:
        """Connect to the first address that accepts, from the one in use."""
        self.close()
        error: OSError | None = None
        for index, address in self.addresses.in_turn():
            try:
                sock = socket.create_connection(address, timeout=self.timeout)
            except OSError as exc:
                error = exc
                continue
            self.addresses.at = index
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._buf.clear()
            self.sock = sock
            return sock
        assert error is not None
        raise error
