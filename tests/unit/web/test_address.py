"""`--http` values and what counts as loopback."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from beanpod.web.address import is_loopback, loopback_v4, parse_http_address


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


def _ipaddress_loopback(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        return False


@pytest.mark.parametrize(
    "text",
    ["127.0.0.1", "127.255.255.255", "127.0.0.01", "127.0.0.256", "127.0.0", "127.0.0.1.1",
     "127.0.0.-1", "127.0.0.+1", "127.0.0.1 ", "127.0.0.\u0661", "127..0.1", "0127.0.0.1",
     "127.000.0.1", "128.0.0.1", "localhost", "::1", ""],
)  # fmt: skip
def test_the_literal_shortcut_never_disagrees_with_ipaddress(text: str) -> None:
    """loopback_v4 says True only where ipaddress does (then start-up needs no ipaddress),
    and does for every 127.x.y.z literal."""
    assert not loopback_v4(text) or _ipaddress_loopback(text)
    if text.count(".") == 3 and text.startswith("127."):
        assert loopback_v4(text) == _ipaddress_loopback(text)


@given(st.lists(st.one_of(st.integers(0, 300).map(str), st.text(max_size=4)), min_size=3,
                max_size=3).map(lambda rest: ".".join(["127", *rest])))  # fmt: skip
def test_the_literal_shortcut_matches_ipaddress_on_any_127_text(text: str) -> None:
    assert loopback_v4(text) == _ipaddress_loopback(text)
