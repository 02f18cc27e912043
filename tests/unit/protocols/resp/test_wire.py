"""RESP2 and RESP3 reply encoders, and the Lua-result shapes of qless calls."""

from __future__ import annotations

from beanpod.protocols.resp import wire as w
from beanpod.protocols.resp.calls import cjson, lua, shape


def test_scalars() -> None:
    assert w.integer(-3) == b":-3\r\n"
    assert w.bulk("é") == b"$2\r\n\xc3\xa9\r\n"
    assert w.bulk(b"") == b"$0\r\n\r\n"
    assert w.error("ERR a\r\nb") == b"-ERR a  b\r\n"
    assert w.null(2) == b"$-1\r\n" and w.null(3) == b"_\r\n"
    assert w.null_array(2) == b"*-1\r\n"


def test_containers_in_both_protocols() -> None:
    pairs = [(w.bulk("a"), w.integer(1))]
    assert w.mapping(pairs, 2) == b"*2\r\n$1\r\na\r\n:1\r\n"
    assert w.mapping(pairs, 3) == b"%1\r\n$1\r\na\r\n:1\r\n"
    assert w.push([w.bulk("m")], 2) == b"*1\r\n$1\r\nm\r\n"
    assert w.push([w.bulk("m")], 3) == b">1\r\n$1\r\nm\r\n"
    assert w.encode({"k": [1, None, 2.9]}, 3) == b"%1\r\n$1\r\nk\r\n*3\r\n:1\r\n_\r\n:2\r\n"


def test_lua_conversion() -> None:
    assert lua(True) == b":1\r\n"
    assert lua(False) == b"$-1\r\n"
    assert lua(1700000060.9) == b":1700000060\r\n"  # Lua numbers are truncated
    assert lua(["a", "b"]) == b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"


def test_cjson_prints_empty_lists_as_objects() -> None:
    assert cjson({"tags": [], "n": 1.0, "x": [[]]}) == '{"tags":{},"n":1,"x":[{}]}'


def test_shapes_per_function() -> None:
    assert shape("pop", ["q", "w", 1], []) == b"$2\r\n{}\r\n"
    assert shape("config.set", ["k", "v"], True) == b"$-1\r\n"
    assert shape("get", ["nope"], None) == b"$-1\r\n"
    assert shape("get", ["nope"], None, proto=3) == b"_\r\n"  # as Redis 7 answers HELLO 3
    assert shape("config.get", [], {"a": 1}) == b'$7\r\n{"a":1}\r\n'
    assert shape("config.get", ["heartbeat"], 60) == b":60\r\n"
    assert shape("complete", [], "complete") == b"$8\r\ncomplete\r\n"
    assert shape("jobs", ["complete"], ["j1"]) == b"*1\r\n$2\r\nj1\r\n"
