"""`--http` values and what counts as loopback."""

from __future__ import annotations

import pytest

from beanpod.web.address import parse_http_address
from beanpod.web.hosts import is_loopback


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:11380", ("127.0.0.1", 11380)),
        ("[::1]:0", ("::1", 0)),
        (":9100", ("0.0.0.0", 9100)),
        ("localhost:80", ("localhost", 80)),
        ("off", None),
        ("OFF", None),
    ],
)
def test_parse(text: str, expected: tuple[str, int] | None) -> None:
    assert parse_http_address(text) == expected


@pytest.mark.parametrize("text", ["localhost", "1.2.3.4:", "1.2.3.4:65536", "host:port"])
def test_malformed(text: str) -> None:
    with pytest.raises(ValueError, match="is not ADDR:PORT"):
        parse_http_address(text)


def test_loopback_names() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "10.0.0.1", "::", "evil.example", ""]))
