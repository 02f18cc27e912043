"""A qless request's `now` (the client's time), and requests that used to answer
INTERNAL_ERROR: over a real socket to a real `beanpod serve`."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.servers import SubprocessServer
from tests.support.wire_client import RawClient


class Qless:
    """The `qless` command on a raw socket: the reply line and its JSON, if any."""

    def __init__(self, port: int) -> None:
        self.raw = RawClient(socket.create_connection(("127.0.0.1", port), timeout=10))

    def close(self) -> None:
        self.raw.sock.close()

    def send(self, body: bytes) -> bytes:
        return self.raw.cmd(b"qless %d\r\n%s\r\n" % (len(body), body))

    def call(self, fn: str, *args: Any, now: Any = None) -> Any:
        request: dict[str, Any] = {"fn": fn, "args": list(args)}
        if now is not None:
            request["now"] = now
        reply = self.send(json.dumps(request).encode())
        assert reply.startswith(b"OK "), reply
        return json.loads(reply.split(b"\r\n", 1)[1][:-2])

    def error(self, fn: str, *args: Any, now: Any = None) -> str:
        request: dict[str, Any] = {"fn": fn, "args": list(args)}
        if now is not None:
            request["now"] = now
        reply = self.send(json.dumps(request).encode())
        assert reply.startswith(b"QLESS_ERROR "), reply
        return reply[12:-2].decode()


@pytest.fixture
def manual() -> Iterator[Qless]:
    server = SubprocessServer(["--workq-port", "off", "--clock", "manual:0"]).start()
    client = Qless(server.port)
    try:
        yield client
    finally:
        client.close()
        server.stop()


@pytest.fixture(scope="module")
def real() -> Iterator[Qless]:
    server = SubprocessServer(["--workq-port", "off", "-z", "1000000"]).start()
    client = Qless(server.port)
    try:
        yield client
    finally:
        client.close()
        server.stop()


def test_now_moves_a_manual_clock_and_fires_what_falls_due(manual: Qless) -> None:
    manual.call("put", "w", "q", "j", "K", "{}", 10, now=0)
    assert manual.call("get", "j", now=5)["state"] == "scheduled"
    assert manual.call("pop", "q", "w", 1, now=9.5) == []
    [job] = manual.call("pop", "q", "w", 1, now="10")  # text, as qless-core clients send it
    assert job["expires"] == 70
    assert [h["when"] for h in job["history"]] == [0, 10]


def test_a_manual_clock_never_moves_backwards(manual: Qless) -> None:
    manual.call("put", "w", "q", "j", "K", "{}", 0, now=100)
    manual.call("pop", "q", "w", 1, now=100)
    assert manual.call("heartbeat", "j", "w", now=40) == 160  # at 100, not 40


def test_the_real_clock_ignores_now(real: Qless) -> None:
    real.call("put", "w", "q", "real-j", "K", "{}", 0, now=0)
    when = real.call("get", "real-j")["history"][0]["when"]
    assert when > 1_600_000_000  # the server's time, not the client's 0


@pytest.mark.parametrize("now", ['"x"', "-1", "true", "[]", "1e400", "Infinity", "NaN"])
def test_a_bad_now_is_a_malformed_request(real: Qless, now: str) -> None:
    reply = real.send(b'{"fn": "queues", "args": [], "now": %s}' % now.encode())
    assert reply.startswith(b'QLESS_ERROR malformed request: "now" must be seconds'), reply
    assert real.call("queues") is not None  # the connection carries on


def test_json_nested_100000_levels_is_malformed_not_an_internal_error(real: Qless) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    body = b'{"fn": "put", "args": ' + deep + b"}"
    assert real.send(body) == b"QLESS_ERROR malformed request: nested too deeply\r\n"
    deep_data = b'{"fn": "put", "args": ["w", "q", "deep", "K", ' + deep + b", 0]}"
    assert real.send(deep_data) == b"QLESS_ERROR malformed request: nested too deeply\r\n"
    assert real.call("get", "deep") is None


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN", "1e400"])
def test_non_finite_numbers_answer_qless_bad_argument_errors(real: Qless, number: str) -> None:
    n = number.encode()
    cases = [
        (b'["w", "q", "inf-j", "K", "{}", %s]' % n, b"put", b'Put(): Arg "delay" not a number'),
        (b'["w", "q", "inf-j", "K", "{}", 0, "priority", %s]' % n, b"put",
         b'Put(): Arg "priority" not a number'),
        (b'["w", "q", "inf-j", "K", "{}", 0, "retries", %s]' % n, b"put",
         b'Put(): Arg "retries" not a number'),
        (b'["q", "w", %s]' % n, b"pop", b'Pop(): Arg "count" not a number'),
        (b'["q", %s]' % n, b"peek", b'Peek(): Arg "count" not a number'),
        (b'["get", "t", 0, %s]' % n, b"tag", b'Tag(): Arg "count" not a number'),
    ]  # fmt: skip
    for args, fn, message in cases:
        reply = real.send(b'{"fn": "%s", "args": %s}' % (fn, args))
        assert reply.startswith(b"QLESS_ERROR " + message), reply
    assert real.call("get", "inf-j") is None  # nothing was put


def test_infinite_config_values_fall_back_to_defaults(real: Qless) -> None:
    real.send(b'{"fn": "config.set", "args": ["heartbeat", Infinity]}')
    try:
        real.call("put", "w", "cfg-q", "cfg-j", "K", "{}", 0)
        [job] = real.call("pop", "cfg-q", "w", 1)
        lock = job["expires"] - job["history"][-1]["when"]  # `when`: whole seconds
        assert 60 <= lock < 61  # the default heartbeat
    finally:
        real.call("config.unset", "heartbeat")


def test_events_on_every_channel(manual: Qless) -> None:
    cursor = manual.call("events", "*", now=0)["cursor"]
    manual.call("put", "w", "q", "j", "K", "{}", 0, now=0)
    manual.call("track", "track", "j", now=0)
    manual.call("pop", "q", "w", 1, now=0)
    manual.call("cancel", "j", now=0)
    read = manual.call("events", "*", cursor, 0, 100, now=0)
    assert [m["channel"] for m in read["messages"]] == [
        "log", "track", "popped", "log", "w:w", "canceled",
    ]  # fmt: skip
    assert read["messages"][3]["data"] == (
        '{"jid":"j","queue":"q","event":"canceled","worker":"w"}'
    )  # qless-core's key order


def test_deep_json_inside_a_string_or_a_beanstalkd_body(real: Qless) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    put = json.dumps({"fn": "put", "args": ["w", "q", "deep-s", "K", deep, 0]}).encode()
    assert real.send(put).startswith(b'QLESS_ERROR Put(): Arg "data" not JSON')
    log = json.dumps({"fn": "log", "args": ["deep-s", "m", deep]}).encode()
    assert real.send(log) == b"QLESS_ERROR Log(): Arg 'data' is not a JSON object\r\n"
    body = deep.encode()
    job_id = real.raw.cmd(b"use deep-tube\r\nput 0 0 60 %d\r\n%s\r\n" % (len(body), body), 2)
    jid = "beanstalkd:" + job_id.split(b"INSERTED ")[1].strip().decode()
    assert real.call("get", jid)["data"] == json.dumps(deep)  # a body that is no JSON


def test_a_parked_poll_on_every_channel_hears_any_publish(manual: Qless) -> None:
    cursor = manual.call("events", "*", now=0)["cursor"]
    body = json.dumps({"fn": "events", "args": ["*", cursor, 30, 10]}).encode()
    manual.raw.send(b"qless %d\r\n%s\r\n" % (len(body), body))  # parks: nothing yet
    other = Qless(manual.raw.sock.getpeername()[1])
    try:
        while b"current-waiting: 1\n" not in other.raw.cmd(b"stats\r\n"):
            pass  # until the poll is parked
        other.call("put", "w", "q", "j", "K", "{}", 0)
    finally:
        other.close()
    reply = manual.raw.reply()
    messages = json.loads(reply.split(b"\r\n", 1)[1][:-2])["messages"]
    assert [(m["channel"], json.loads(m["data"])["event"]) for m in messages] == [("log", "put")]


def _strict(reply: bytes) -> Any:
    """The reply's JSON, refusing `Infinity`/`NaN` as a non-Python client would."""

    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(reply.split(b"\r\n", 1)[1][:-2], parse_constant=refuse)


def test_non_finite_values_are_kept_as_text_so_replies_stay_json(real: Qless) -> None:
    real.send(b'{"fn": "config.set", "args": ["odd", Infinity]}')
    try:
        assert _strict(real.send(b'{"fn": "config.get", "args": ["odd"]}')) == "Infinity"
    finally:
        real.call("config.unset", "odd")
    real.call("put", "w", "q", "text-j", "K", "{}", 0)
    real.send(b'{"fn": "log", "args": ["text-j", "m", {"x": NaN, "y": 1e400}]}')
    job = _strict(real.send(b'{"fn": "get", "args": ["text-j"]}'))
    assert job["history"][-1]["x"] == "NaN" and job["history"][-1]["y"] == "1e400"
    real.call("cancel", "text-j")
