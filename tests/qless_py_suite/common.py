"""qless-py's test base class, which its sdists do not ship (test/common.py upstream):
each test starts on an empty server and leaves it flushed. The server is the Redis
door at $QLESS_DOOR_URL; qless-py's client defaults to that URL instead of
localhost:6379."""

from __future__ import annotations

import os
import unittest

import qless
import redis

URL = os.environ.get("QLESS_DOOR_URL", "redis://localhost:6379")
qless.Client.__init__.__defaults__ = (URL, None)


class TestQless(unittest.TestCase):
    """Base class for qless-py's tests: `client`, and `worker` (a client named
    "worker")."""

    redis: redis.Redis

    @classmethod
    def setUpClass(cls) -> None:
        cls.redis = redis.Redis.from_url(URL)
        cls.redis.script_flush()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.redis.close()

    def setUp(self) -> None:
        assert len(self.redis.keys("*")) == 0
        self.client = qless.Client(URL)
        self.worker = qless.Client(URL)
        self.worker.worker_name = "worker"
        self.made = [self.client, self.worker]  # (some tests put a Worker in self.worker)

    def tearDown(self) -> None:
        self.redis.flushdb()
        for client in self.made:  # their sockets, now (tests/qless_clients.py says why)
            client.redis.connection_pool.disconnect()
