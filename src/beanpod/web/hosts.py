"""Host names and addresses the HTTP listener treats as this machine only. Apart from
web/auth.py so the server can check `--http` without importing aiohttp (start-up time
when the listener is off)."""

from __future__ import annotations

from ipaddress import ip_address

LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False
