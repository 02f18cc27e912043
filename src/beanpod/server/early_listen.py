"""Listening sockets opened before the server's modules are imported.

`beanpod serve` binds its beanstalkd port first thing (beanpod/cli/early.py), so a client
that connects a few milliseconds after exec - as scripts and test suites written for
beanstalkd do - is accepted by the kernel and answered once the server is up, instead of
being refused. The server claims the socket when it opens that listener; any socket it
does not claim is closed first, so a guess that differs from the final settings never
holds a port the server needs."""

from __future__ import annotations

import contextlib
import os
import socket
import stat

BACKLOG = 1024  # as the server's own listeners
_opened: dict[tuple[str, int], socket.socket] = {}


def listen_early(address: str, port: int) -> None:
    """Bind and listen on address:port (a literal IP address, or unix:/path) now; on any
    failure do nothing, so the server's own attempt reports the error as usual."""
    path = address[5:] if address.startswith("unix:") else None
    family = socket.AF_UNIX if path else socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if path is None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as asyncio's own listeners
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind((address, port))
        else:
            _remove_stale_socket(path)
            sock.bind(path)
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        return
    _opened[(address, port)] = sock


def _remove_stale_socket(path: str) -> None:
    """A socket file left by an earlier server is replaced, as asyncio does."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISSOCK(os.stat(path).st_mode):
            os.remove(path)


def claim(address: str, port: int) -> socket.socket | None:
    """The early socket for address:port, if one is open; every other one is closed."""
    sock = _opened.pop((address, port), None)
    while _opened:
        _opened.popitem()[1].close()
    return sock
