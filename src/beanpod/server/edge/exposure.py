"""Protected mode: a plain-TCP listener on an address other hosts can reach needs an
allow-list (--allow) or TLS, or an explicit --insecure-public (as Redis's protected
mode); and the listen addresses of the TLS listeners."""

from __future__ import annotations

from beanpod.server.edge.settings import EdgeSettings
from beanpod.server.startup import EXIT_USAGE, StartupError
from beanpod.web.address import loopback_v4

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES or loopback_v4(host):
        return True
    import ipaddress  # here: 127.0.0.1 and the like do without it (~1 ms of start-up)

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other hosts may resolve to us


def check_exposure(address: str, settings: EdgeSettings) -> None:
    """Refuse to start a public plain-TCP listener nobody meant to expose."""
    if address.startswith("unix:") or is_loopback(address):
        return
    if settings.allow or settings.insecure_public:
        return
    raise StartupError(
        f"refusing to listen on {address} in plain TCP",
        "other hosts could reach it with no allow-list; give --allow CIDR or "
        "--insecure-public, or keep it on loopback and add --tls-listen (docs/security.md)",
        EXIT_USAGE,
    )


def split_host_port(text: str) -> tuple[str, int]:
    """`ADDR:PORT` or `[v6]:PORT` -> (host, port); ValueError if malformed."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"{text!r} is not ADDR:PORT")
    return host.strip("[]"), int(port)
