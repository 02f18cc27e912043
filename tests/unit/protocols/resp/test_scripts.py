"""Scripts: qless's unified script recognised by SHA or body (the registry's qless-py
0.11.4 body, read from the installed package: its SHA is computed here), EVALSHA calls
answered in Lua's reply shapes, and errors worded as Redis words a script's error."""

from __future__ import annotations

import hashlib
import json
import pkgutil

import hiredis
import pytest

from beanpod.protocols.resp.script_registry import OLD_PUT, WORKER_PUT, flavour
from tests.unit.protocols.resp.fake import FakeSession

qless = pytest.importorskip("qless", reason="qless-py 0.11.4 is not installed")


@pytest.fixture(scope="module")
def body() -> bytes:
    data = pkgutil.get_data("qless", "qless-core/qless.lua")
    assert data is not None
    return data


def test_flavours(body: bytes) -> None:
    assert flavour(body) == OLD_PUT
    newer = body.replace(b"QlessAPI.put = function(now, queue,",
                         b"QlessAPI.put = function(now, me, queue,")  # fmt: skip
    assert flavour(newer) == WORKER_PUT
    assert flavour(b"return redis.call('get', KEYS[1])") is None


def test_noscript_then_load(body: bytes) -> None:
    s = FakeSession()
    s.door.scripts.flush()
    s.door.scripts.loaded.clear()  # as if the registry's SHAs were not known
    sha = hashlib.sha1(body).hexdigest()
    assert s.raw("EVALSHA", sha, "0", "queues", "1") == (
        b"-NOSCRIPT No matching script. Please use EVAL.\r\n"
    )
    assert s("SCRIPT", "LOAD", body) == sha.encode()
    assert s("SCRIPT", "EXISTS", sha, "0" * 40) == [1, 0]
    assert s("EVALSHA", sha, "0", "queues", "1") == b"{}"
    refused = s("SCRIPT", "LOAD", "return 1")
    assert isinstance(refused, hiredis.ReplyError) and "qless" in str(refused)


def test_the_registry_script_is_known_by_its_sha(body: bytes) -> None:
    s = FakeSession()
    sha = hashlib.sha1(body).hexdigest()
    assert s("SCRIPT", "EXISTS", sha) == [1]


def test_calls_shaped_as_lua_results(body: bytes) -> None:
    s = FakeSession()
    sha = hashlib.sha1(body).hexdigest()

    def call(*args: str) -> object:
        return s("EVALSHA", sha, "0", args[0], "1700000000.5", *args[1:])

    assert call("put", "q", "j1", "K", '{"a": 1}', "0") == b"j1"  # no worker argument
    assert call("length", "q") == 1
    popped = call("pop", "q", "w", "1")
    assert isinstance(popped, bytes)
    job = json.loads(popped)[0]
    assert job["jid"] == "j1" and job["tags"] == {} and job["dependencies"] == {}
    assert call("heartbeat", "j1", "w") == 1700000060
    assert call("config.set", "k", "v") is None
    assert call("throttle.locks", "ql:q:q") == [b"j1"]
    assert call("throttle.release", "ql:q:q", "j1") is None  # the fork's: returns nothing
    assert call("throttle.locks", "ql:q:q") == []
    assert call("config.get", "heartbeat") == 60
    assert call("complete", "j1", "w", "q", "{}") == b"complete"
    assert call("jobs", "complete") == [b"j1"]
    assert call("get", "nope") is None
    error = call("complete", "j1", "w", "q", "{}")
    assert isinstance(error, hiredis.ReplyError)
    assert str(error).startswith("ERR user_script:1: Complete(): Job j1 ")
    assert str(error).endswith(f" script: {sha}, on @user_script:1.")
    bad_now = s("EVALSHA", sha, "0", "queues", "soon")
    assert str(bad_now) == (f'ERR user_script:1: Arg "now" missing or not a number: soon '
                            f"script: {sha}, on @user_script:1.")  # fmt: skip


def test_eval_runs_a_qless_body_and_refuses_keys(body: bytes) -> None:
    s = FakeSession()
    assert s("EVAL", body, "0", "queues", "1") == b"{}"
    assert "No Keys" in str(s("EVAL", body, "1", "k", "queues", "1"))
    assert "qless" in str(s("EVAL", "return 1", "0"))
