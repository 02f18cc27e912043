"""TLS for the listeners (--tls-listen, --tls-cert, --tls-key, --tls-client-ca,
--tls-client-auth): one server context, TLS 1.2 or later, reloaded in place on SIGHUP
(new handshakes use the new certificate; open connections keep theirs).

The handshake runs after admission (allow-list, connection limit) through
`loop.start_tls`, so a failed handshake is seen, counted and closed. Other listeners
(the HTTP API) can share the context: `App.tls.context`."""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Any

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
    """The live context and its counters."""

    def __init__(self, settings: TlsSettings) -> None:
        self.settings = settings
        self.context = server_context(settings)
        self.handshakes = 0
        self.failed_handshakes = 0

    def reload(self) -> bool:
        """SIGHUP: load the certificate, key and CA files again into the live context.
        On failure the old ones stay in use (and the error is logged)."""
        try:
            fresh = server_context(self.settings)  # proves the files first
        except (OSError, ssl.SSLError) as exc:
            log.error("TLS reload failed, keeping the old certificate: %s", exc)
            return False
        del fresh
        _load(self.context, self.settings)
        log.warning("TLS certificate reloaded from %s", self.settings.cert)
        return True

    async def wrap(self, transport: asyncio.Transport, protocol: Any) -> asyncio.Transport | None:
        """Run the server handshake on an admitted plain transport; the TLS transport,
        or None when the handshake failed (the connection is then closed)."""
        loop = asyncio.get_running_loop()
        try:
            wrapped = await loop.start_tls(
                transport, protocol, self.context, server_side=True,
                ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S,
            )  # fmt: skip
        except (TimeoutError, OSError, ssl.SSLError, ConnectionError) as exc:
            self.failed_handshakes += 1
            log.info("TLS handshake failed: %s", exc or type(exc).__name__)
            transport.abort()
            return None
        if wrapped is None:  # pragma: no cover - the peer went away during the handshake
            self.failed_handshakes += 1
            transport.abort()
            return None
        self.handshakes += 1
        return wrapped
