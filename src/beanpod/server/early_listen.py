"""Listening sockets opened before the server's modules are imported.

`beanpod serve` binds its beanstalkd, Workq and HTTP ports first thing
(beanpod/cli/early.py), so a client that connects a few milliseconds after exec - as
scripts and test suites written for beanstalkd do - is accepted by the kernel and answered
once the server is up, instead of being refused; every listener accepts from that same
moment. The server claims each socket when it opens its listeners; a socket whose address
differs from the final settings is closed first, so a wrong guess never holds a port the
server needs."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
from collections.abc import Callable  # loaded with `socket`; `typing` would cost ~5 ms here
from types import FrameType

BACKLOG = 1024  # as the server's own listeners
WORKQ_SUFFIX = ".workq"  # the Workq listener of `-l unix:PATH` is PATH.workq
# role ("beanstalkd", "Workq", "HTTP") -> ((address, port) asked for, listening socket)
_opened: dict[str, tuple[tuple[str, int], socket.socket]] = {}
_signalled: set[int] = set()  # SIGUSR1 before the server had its own handler


def hold_drain_signal() -> None:
    """Once a port accepts, a supervisor may ask for drain mode (SIGUSR1) at any time: until
    the server installs its handler, the request is remembered instead of killing it."""
    signal.signal(signal.SIGUSR1, _remember)


def _remember(signum: int, frame: FrameType | None) -> None:
    _signalled.add(signum)


def drain_was_asked() -> bool:
    """SIGUSR1 came before the server's own handler (the server then drains)."""
    return signal.SIGUSR1 in _signalled


def wanted(
    address: str, port: int, workq_port: int | None, http: tuple[str, int] | None,
    redis: tuple[str, int] | None = None,
) -> dict[str, tuple[str, int]]:  # fmt: skip
    """Each listener's (address, port) by role, for these settings (None: that one is
    off): what the early start binds and what the server claims (server/ports.py)."""
    found = {"beanstalkd": (address, port)}
    if workq_port is not None:
        suffix = WORKQ_SUFFIX if address.startswith("unix:") else ""
        found["Workq"] = (address + suffix, workq_port)
    if http is not None:
        found["HTTP"] = http
    if redis is not None:
        found["Redis"] = redis
    return found


def bind(address: str, port: int, listen: bool = True) -> socket.socket:
    """A socket bound to address:port (a literal IP address, or unix:/path), listening
    unless told not to yet; OSError when it cannot be had."""
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
        if listen:
            sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def bind_early(role: str, address: str, port: int) -> None:
    """Bind now (`listen_all` then listens); on any failure do nothing, so the server's
    own attempt reports the error (or, for a default port, gives way) as usual."""
    try:
        _opened[role] = ((address, port), bind(address, port, listen=False))
    except OSError:
        return


def listen_each(sockets: dict[str, socket.socket], failed: Callable[[str, OSError], None]) -> None:
    """Listen on each bound socket, the first (beanstalkd's) last: once it accepts, so do
    all the others. One that cannot is closed and handed to `failed` with the error."""
    for role, sock in reversed(list(sockets.items())):
        try:
            sock.listen(BACKLOG)  # again, for an early one: harmless
        except OSError as exc:
            sock.close()
            failed(role, exc)


def listen_all() -> None:
    """Listen on every socket bound early (`listen_each`); one that cannot is forgotten."""
    listen_each({role: sock for role, (_where, sock) in _opened.items()}, _forget)


def _forget(role: str, exc: OSError) -> None:
    del _opened[role]


def bindable(address: str) -> bool:
    """A literal IP address or unix:/path: one socket is the whole listener (a host name
    may stand for several addresses)."""
    if address.startswith("unix:"):
        return len(address) > 5
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        socket.inet_pton(family, address)
    except OSError:
        return False
    return True


def _remove_stale_socket(path: str) -> None:
    """A socket file left by an earlier server is replaced, as asyncio does."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISSOCK(os.stat(path).st_mode):
            os.remove(path)


def claim(wanted: dict[str, tuple[str, int]]) -> dict[str, socket.socket]:
    """The early sockets whose address is the one `wanted` for their role; every other
    one is closed, before the server opens anything itself."""
    claimed = {}
    for role, (where, sock) in list(_opened.items()):
        del _opened[role]
        if wanted.get(role) == where:
            claimed[role] = sock
        else:
            sock.close()
    return claimed
