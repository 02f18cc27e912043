"""`--http ADDR:PORT` parsing: `127.0.0.1:11380`, `[::1]:11380`, `:11380`, or `off`."""

from __future__ import annotations

DEFAULT_HTTP = "127.0.0.1:11380"


def parse_http_address(text: str) -> tuple[str, int] | None:
    """(host, port), or None for `off`; ValueError with the reason otherwise."""
    if text.strip().lower() in ("off", "none", "no", "false", ""):
        return None
    host, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError(f"{text!r} is not ADDR:PORT (e.g. 127.0.0.1:11380) or off")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port_text)
