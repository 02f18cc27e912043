"""Listening sockets opened before the server's modules are imported.

`beanpod serve` binds its beanstalkd port first thing (beanpod/cli/early.py), so a client
that connects a few milliseconds after exec - as scripts and test suites written for
beanstalkd do - is accepted by the kernel and answered once the server is up, instead of
being refused. The server claims the socket when it opens that listener; any socket it
does not claim is closed first, so a guess that differs from the final settings never
holds a port the server needs."""

from __future__ import annotations

import socket

BACKLOG = 1024  # as the server's own listeners
_opened: dict[tuple[str, int], socket.socket] = {}


def listen_early(host: str, port: int) -> None:
    """Bind and listen on host:port (a literal IP address) now; on any failure do
    nothing, so the server's own attempt reports the error as usual."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        return
    _opened[(host, port)] = sock


def claim(host: str, port: int) -> socket.socket | None:
    """The early socket for host:port, if one is open; every other one is closed."""
    sock = _opened.pop((host, port), None)
    while _opened:
        _opened.popitem()[1].close()
    return sock
