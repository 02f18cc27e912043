"""TLS for the listeners (--tls-listen, --tls-cert, --tls-key, --tls-client-ca,
--tls-client-auth): one server context, TLS 1.2 or later, reloaded in place on SIGHUP
(new handshakes use the new certificate; open connections keep theirs).

A TLS listener accepts sockets itself: admission (allow-list, connection limit) looks at
the raw socket before any byte is read, then `loop.connect_accepted_socket` runs the
handshake (the same way on asyncio and uvloop), so a failed handshake is seen, counted
and closed. Other listeners (the HTTP API) can share the context: `App.edge.tls.context`."""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections.abc import Callable
from typing import Any

from beanpod.server.edge.gate import Gate
from beanpod.server.edge.settings import TlsSettings

log = logging.getLogger("beanpod.edge")
HANDSHAKE_TIMEOUT_S = 10.0
CLIENT_AUTH = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


def server_context(settings: TlsSettings) -> ssl.SSLContext:
    """A server-side context; OSError / ssl.SSLError name an unusable file."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    _load(context, settings)
    return context


def _load(context: ssl.SSLContext, settings: TlsSettings) -> None:
    context.load_cert_chain(settings.cert, settings.key)
    if settings.client_ca is not None:
        context.load_verify_locations(settings.client_ca)
    context.verify_mode = CLIENT_AUTH[settings.client_auth]


class Tls:
    """The live context, the TLS listeners' accept loops and their counters."""

    def __init__(self, settings: TlsSettings) -> None:
        self.settings = settings
        self.context = server_context(settings)
        self.handshakes = 0
        self.failed_handshakes = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._sockets: list[socket.socket] = []

    def reload(self) -> bool:
        """SIGHUP: load the certificate, key and CA files again into the live context.
        On failure the old ones stay in use (and the error is logged)."""
        try:
            server_context(self.settings)  # proves the files first
        except (OSError, ssl.SSLError) as exc:
            log.error("TLS reload failed, keeping the old certificate: %s", exc)
            return False
        _load(self.context, self.settings)
        log.warning("TLS certificate reloaded from %s", self.settings.cert)
        return True

    def serve(self, listener: socket.socket, factory: Callable[[], Any], gate: Gate) -> None:
        """Accept on `listener` (bound, listening) until `close()`."""
        listener.setblocking(False)
        self._sockets.append(listener)
        self._spawn(self._accept(listener, factory, gate))

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for listener in self._sockets:
            listener.close()
        self._sockets.clear()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _accept(
        self, listener: socket.socket, factory: Callable[[], Any], gate: Gate
    ) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, peer = await loop.sock_accept(listener)
            except OSError as exc:  # EMFILE and friends: breathe, then accept again
                log.error("TLS listener cannot accept: %s", exc)
                await asyncio.sleep(0.1)
                continue
            if not gate.admit_peer(peer, sock):
                sock.close()  # before any byte was read
                continue
            self._spawn(self._handshake(sock, factory, gate))

    async def _handshake(self, sock: socket.socket, factory: Callable[[], Any], gate: Gate) -> None:
        made: list[Any] = []

        def session() -> Any:
            made.append(factory())
            made[0].admitted = True  # counted in by the accept loop
            return made[0]

        try:
            await asyncio.get_running_loop().connect_accepted_socket(
                session, sock, ssl=self.context, ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S
            )
        except (TimeoutError, OSError, ssl.SSLError, ConnectionError) as exc:
            self.failed_handshakes += 1
            log.info("TLS handshake failed: %s", exc or type(exc).__name__)
            sock.close()
            if made and not made[0].lost:
                made[0].connection_lost(None)  # it never started: leave the engine
            elif not made:
                gate.left()
            return
        self.handshakes += 1
