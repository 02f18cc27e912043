"""`--http ADDR:PORT` parsing: `127.0.0.1:11380`, `[::1]:11380`, `:11380` (every
interface), or `off`."""

from __future__ import annotations

DEFAULT_HTTP = "127.0.0.1:11380"
LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})
OFF_WORDS = frozenset({"off", "none", "no", "false", ""})  # a listener that is not wanted


def parse_http_address(text: str) -> tuple[str, int] | None:
    """(host, port), or None for `off`; ValueError with the reason otherwise."""
    if text.strip().lower() in OFF_WORDS:
        return None
    host, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError(f"{text!r} is not ADDR:PORT (e.g. 127.0.0.1:11380) or off")
    host = host.strip("[]") or "0.0.0.0"  # ":PORT": every interface (needs a token)
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    """A loopback name or address (`[::1]` too). Here, not in web.auth, so the server can
    check --http before it loads aiohttp."""
    from ipaddress import ip_address  # here: `beanpod serve`'s early start parses --http

    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False
