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
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES or loopback_v4(host):
        return True
    from ipaddress import ip_address  # here: the usual addresses do without it (~1 ms)

    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def loopback_v4(host: str) -> bool:
    """An IPv4 literal in 127.0.0.0/8, read as ipaddress reads one (four decimal octets
    up to 255, no leading zeros): the usual listen addresses are told loopback before the
    first reply without importing ipaddress. False means only "not such a literal"."""
    octets = host.split(".")
    return len(octets) == 4 and octets[0] == "127" and all(map(_octet, octets))


def _octet(text: str) -> bool:
    if text == "0":
        return True
    return text.isascii() and text.isdigit() and text[0] != "0" and int(text) <= 255
