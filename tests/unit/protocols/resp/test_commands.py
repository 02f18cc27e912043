"""The command table: Redis's refusals (texts checked against redis-server 7.0.15), the
handshake, MULTI/EXEC, the scratch lists and pub/sub."""

from __future__ import annotations

import hiredis

from beanpod.protocols.resp.context import VERSION
from tests.unit.protocols.resp.fake import FakeSession


def test_unknown_command_and_wrong_arity_as_redis_words_them() -> None:
    s = FakeSession()
    assert s.raw("FOO", "a", "b") == (
        b"-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n"
    )
    assert s.raw("FOO") == b"-ERR unknown command 'FOO', with args beginning with: \r\n"
    assert s.raw("ZSCORE", "k") == b"-ERR wrong number of arguments for 'zscore' command\r\n"
    assert s.raw("NOPE", "x" * 200, "y") == (  # 128 bytes of arguments at most
        b"-ERR unknown command 'NOPE', with args beginning with: '" + b"x" * 128 + b"' \r\n"
    )
    assert s.raw("NOPE", "x" * 100, "y" * 100) == (
        b"-ERR unknown command 'NOPE', with args beginning with: '"
        + b"x" * 100
        + b"' '"
        + b"y" * 25
        + b"' \r\n"
    )


def test_hello_in_both_protocols() -> None:
    s = FakeSession()
    three = s("HELLO", "3")
    assert three == {b"server": b"redis", b"version": VERSION.encode(), b"proto": 3,
                     b"id": s.client_id, b"mode": b"standalone", b"role": b"master",
                     b"modules": []}  # fmt: skip
    assert s.proto == 3
    assert s("HELLO", "2")[:6] == [b"server", b"redis", b"version", VERSION.encode(),  # type: ignore[index]
                                   b"proto", 2]  # fmt: skip
    assert s.raw("HELLO", "4") == b"-NOPROTO unsupported protocol version\r\n"


def test_housekeeping() -> None:
    s = FakeSession()
    assert s.raw("PING") == b"+PONG\r\n"
    assert s.raw("PING", "hi") == b"$2\r\nhi\r\n"
    assert s.raw("SELECT", "0") == b"+OK\r\n"
    assert s.raw("SELECT", "1") == b"-ERR DB index is out of range\r\n"
    assert s.raw("CLIENT", "SETINFO", "LIB-NAME", "x") == b"+OK\r\n"
    assert s.raw("CLIENT", "MAINT_NOTIFICATIONS", "on") == (
        b"-ERR unknown subcommand 'MAINT_NOTIFICATIONS'. Try CLIENT HELP.\r\n"
    )
    assert b"redis_version:" in s.raw("INFO")  # type: ignore[operator]
    assert s.raw("AUTH", "x") is not None and s.raw("AUTH", "x").startswith(b"-ERR AUTH")  # type: ignore[union-attr]


def test_auth_when_a_password_is_configured() -> None:
    s = FakeSession()
    s.door.password = "sesame"
    assert s.raw("PING") == b"-NOAUTH Authentication required.\r\n"
    assert s.raw("HELLO", "3").startswith(b"-NOAUTH")  # type: ignore[union-attr]
    assert s.raw("HELLO", "3", "AUTH", "a") == b"-ERR Syntax error in HELLO option 'AUTH'\r\n"
    assert s.raw("AUTH", "wrong").startswith(b"-WRONGPASS")  # type: ignore[union-attr]
    assert s.raw("HELLO", "3", "AUTH", "default", "sesame").startswith(b"%7")  # type: ignore[union-attr]
    assert s.raw("PING") == b"+PONG\r\n"
    other = FakeSession(s.door)
    assert other.raw("AUTH", "default", "sesame") == b"+OK\r\n"


def test_multi_exec_with_zcard() -> None:
    s = FakeSession()
    assert s.raw("EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert s.raw("MULTI") == b"+OK\r\n"
    assert s.raw("ZCARD", "ql:q:jobs-work") == b"+QUEUED\r\n"
    assert s.raw("ZCARD", "ql:q:jobs-locks") == b"+QUEUED\r\n"
    assert s("EXEC") == [0, 0]
    assert s.raw("DISCARD") == b"-ERR DISCARD without MULTI\r\n"
    s.raw("MULTI")
    assert s.raw("MULTI") == b"-ERR MULTI calls can not be nested\r\n"
    assert s.raw("ZCARD").startswith(b"-ERR wrong number")  # type: ignore[union-attr]
    assert s.raw("EXEC") == b"-EXECABORT Transaction discarded because of previous errors.\r\n"


def test_scratch_lists_and_brpop() -> None:
    s, waiter = FakeSession(), FakeSession()
    waiter.door = s.door
    assert s("RPUSH", "foo", "a", "b") == 2
    assert s("KEYS", "*") == [b"foo"]
    assert s("BRPOP", "foo", "1") == [b"foo", b"b"]
    assert s("BRPOP", "foo", "1") == [b"foo", b"a"]
    assert s("KEYS", "*") == []
    assert waiter.raw("BRPOP", "foo", "0") is None  # parked
    assert s("RPUSH", "foo", "c") == 1
    assert waiter.answered == [b"*2\r\n$3\r\nfoo\r\n$1\r\nc\r\n"]
    assert s("LLEN", "foo") == 0


def test_brpop_inside_exec_answers_and_does_not_wait() -> None:
    s, other = FakeSession(), FakeSession()
    other.door = s.door
    assert s("MULTI") == b"OK"
    assert s("BRPOP", "empty", "0") == b"QUEUED"
    assert s.raw("EXEC") == b"*1\r\n*-1\r\n"  # a null array: nothing to pop
    assert s.conn.waiter is None  # not parked behind the transaction
    assert other("RPUSH", "empty", "v") == 1  # so nobody takes this value
    assert s.answered == [] and s("LLEN", "empty") == 1


def test_subscribe_publish_and_subscribed_mode() -> None:
    s, other = FakeSession(), FakeSession()
    other.door = s.door
    assert s("SUBSCRIBE", "ql:completed", "chan") == [b"subscribe", b"ql:completed", 1]
    assert s.raw("GET", "x").startswith(b"-ERR unknown command")  # type: ignore[union-attr]
    assert s.raw("EVALSHA", "x", "0").startswith(b"-ERR Can't execute 'evalsha'")  # type: ignore[union-attr]
    assert other("PUBLISH", "chan", "hello") == 1
    assert s.pushed == [b"*3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$5\r\nhello\r\n"]
    s.door.qless.channels.publish("completed", "jid1")  # what qless publishes
    assert s.pushed[-1] == b"*3\r\n$7\r\nmessage\r\n$12\r\nql:completed\r\n$4\r\njid1\r\n"
    reply = s.raw("UNSUBSCRIBE")
    assert reply is not None and reply.count(b"unsubscribe") == 2 and reply.endswith(b":0\r\n")
    assert other("PUBLISH", "chan", "x") == 0
    assert isinstance(s("UNSUBSCRIBE"), list)


def test_resp3_subscriptions_are_pushes() -> None:
    s = FakeSession()
    s.raw("HELLO", "3")
    assert s.raw("SUBSCRIBE", "a") == b">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
    assert s.raw("PING") == b"+PONG\r\n"  # RESP3 allows any command while subscribed
    assert isinstance(FakeSession()("ZSCORE", "ql:q:x-recur", "j"), type(None))


def test_reply_error_type() -> None:
    assert isinstance(FakeSession()("EXEC"), hiredis.ReplyError)


def test_flushdb_only_on_a_server_for_tests() -> None:
    s = FakeSession()
    s("RPUSH", "foo", "a")
    refused = s.raw("FLUSHDB")
    assert refused is not None and refused.startswith(b"-ERR FLUSHDB is refused")
    assert s("KEYS", "*") == [b"foo"]
    s.door.testing = True
    assert s.raw("FLUSHDB") == b"+OK\r\n"
    assert s("KEYS", "*") == []
