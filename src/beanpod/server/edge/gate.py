"""Admission at accept, before any byte is read: the allow-list (--allow CIDR) and the
connection limit (--max-connections). Refused connections are closed at once, counted
and audited; a unix socket's peer is identified by its uid (SO_PEERCRED)."""

from __future__ import annotations

import logging
import socket
import struct
from typing import TYPE_CHECKING, Any

from beanpod.server.edge.audit import AuditLog
from beanpod.server.edge.settings import FD_RESERVE

if TYPE_CHECKING:  # ipaddress loads only with an allow-list (--allow)
    import ipaddress

    Network = ipaddress.IPv4Network | ipaddress.IPv6Network

log = logging.getLogger("beanpod.edge")


def default_max_connections() -> int:
    """RLIMIT_NOFILE (as raised at start-up) minus a reserve for the server's own files."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(1, soft - FD_RESERVE)


def parse_networks(cidrs: tuple[str, ...]) -> list[Network]:
    """ValueError names the first entry that is not an address or CIDR."""
    if not cidrs:
        return []
    import ipaddress

    return [ipaddress.ip_network(cidr.strip(), strict=False) for cidr in cidrs]


class Gate:
    def __init__(self, allow: tuple[str, ...], max_connections: int | None, audit: AuditLog):
        self.networks = parse_networks(allow)
        self.max_connections = max_connections or default_max_connections()
        self.audit = audit
        self.open = 0
        self.refused_address = 0  # closed at accept: not on the allow-list
        self.refused_full = 0  # closed at accept: --max-connections reached

    def admit(self, transport: Any) -> bool:
        return self.admit_peer(
            transport.get_extra_info("peername"), transport.get_extra_info("socket")
        )

    def admit_peer(self, peer: Any, sock: Any) -> bool:
        """True: count the connection in (call `left()` when it closes). False: the
        caller closes it at once, before reading."""
        if self.networks and isinstance(peer, tuple) and not self.allows(peer[0]):
            self.refused_address += 1
            self._refused(peer, "address not allowed")
            return False
        if self.open >= self.max_connections:
            self.refused_full += 1
            self._refused(peer, "max-connections reached")
            return False
        self.open += 1
        if not isinstance(peer, tuple):
            _log_unix_peer(sock)
        return True

    def left(self) -> None:
        self.open -= 1

    def allows(self, host: str) -> bool:
        import ipaddress  # loaded by parse_networks already: a lookup per accept

        address = ipaddress.ip_address(host.split("%", 1)[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.networks)

    def _refused(self, peer: Any, reason: str) -> None:
        where = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer or "unix")
        log.info("refused connection from %s: %s", where, reason)
        self.audit.record("refused", peer=where, reason=reason)

    @property
    def refused(self) -> int:
        return self.refused_address + self.refused_full


def peer_uid(sock: Any) -> int | None:
    """The uid of a unix-socket peer (Linux SO_PEERCRED), or None."""
    if sock is None or sock.family != socket.AF_UNIX or not hasattr(socket, "SO_PEERCRED"):
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


def _log_unix_peer(sock: Any) -> None:
    uid = peer_uid(sock)
    if uid is not None:
        log.info("unix-socket connection from uid %d", uid)
