"""The listeners' sockets. Each one is claimed from `beanpod serve`'s early start
(server/early_listen.py) or bound here, all at one moment, so no listener refuses a
client that another one already accepts; the protocols take them over once loaded.

A listener on its default port (Workq 9922, HTTP 11380: not named by flag, environment or
config file) gives way when that port is taken - a second server on the host started with
`-p` alone still serves beanstalkd - with one warning naming the flag that sets it. A port
named explicitly that cannot be had stays fatal (exit 3), naming that flag."""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from collections.abc import Callable

from beanpod.server import early_listen
from beanpod.server.config import ServerConfig
from beanpod.server.edge.listeners import private_umask, secure_unix_socket
from beanpod.server.startup import LISTENER_FLAGS, listener_error

log = logging.getLogger("beanpod")
BACKLOG = early_listen.BACKLOG


def wanted(config: ServerConfig) -> dict[str, tuple[str, int]]:
    """Each configured listener's (address, port), by role (early_listen.wanted: the
    early start reads the same from argv)."""
    redis = None if config.redis_port is None else (config.redis_host, config.redis_port)
    return early_listen.wanted(config.address, config.port, config.workq_port, config.http, redis)


def shown(where: tuple[str, int]) -> str:
    address, port = where
    return address if address.startswith("unix:") else f"{address}:{port}"


class ListenSockets:
    """The sockets of one server's listeners, taken once each by role."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.wanted = wanted(config)
        self.early = early_listen.claim(self.wanted)  # before binding anything here
        self.off: set[str] = set()  # default ports found taken: those listeners stay off

    def take(self, *roles: str) -> dict[str, socket.socket | None]:
        """The roles' listening sockets, accepting from one moment: each is bound, then
        all listen, the first role last. None: not configured, off (see `off`), or a host
        name (it may stand for several addresses: opened by name, as before)."""
        sockets = {role: self._bound(role) for role in roles}

        def failed(role: str, exc: OSError) -> None:
            sockets[role] = None
            self.refused(role, self.wanted[role], exc)

        early_listen.listen_each({r: s for r, s in sockets.items() if s is not None}, failed)
        return sockets

    def _bound(self, role: str) -> socket.socket | None:
        where = self.wanted.get(role)
        if where is None or role in self.off:
            return None
        sock = self.early.pop(role, None)
        if sock is None and early_listen.bindable(where[0]):
            try:
                with private_umask(self.config.edge):  # a UNIX socket: private until chmod
                    sock = early_listen.bind(*where, listen=False)
            except OSError as exc:
                self.refused(role, where, exc)
                return None
        if sock is not None and where[0].startswith("unix:"):
            secure_unix_socket(where[0][5:], self.config.edge)
        return sock

    def refused(self, role: str, where: tuple[str, int], exc: OSError) -> None:
        """A default port in use: warn and leave the listener off; anything else: fatal."""
        if role in self.config.default_ports and exc.errno == errno.EADDRINUSE:
            self.off.add(role)
            log.warning("%s listener not started: %s is in use; set %s to choose",
                        role, shown(where), LISTENER_FLAGS[role])  # fmt: skip
            return
        raise listener_error(role, shown(where), exc) from exc

    async def serve(
        self, role: str, factory: Callable[[], asyncio.Protocol], sock: socket.socket | None
    ) -> asyncio.Server | None:
        """The role's protocol on its socket (or on its address by name); None if off."""
        loop = asyncio.get_running_loop()
        if sock is not None and sock.family == socket.AF_UNIX:
            return await loop.create_unix_server(factory, sock=sock)
        if sock is not None:
            return await loop.create_server(factory, sock=sock, backlog=BACKLOG)
        if role in self.off or role not in self.wanted:
            return None
        host, port = self.wanted[role]  # a host name: every address it stands for
        try:
            return await loop.create_server(
                factory, host, port, backlog=BACKLOG, reuse_address=True
            )
        except OSError as exc:
            self.refused(role, (host, port), exc)
            return None
