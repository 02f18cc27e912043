"""A beanpod subprocess with its HTTP listener on a free port, and a small HTTP client."""

from __future__ import annotations

import http.client
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.support.servers import SubprocessServer

HTTP_LISTENING = re.compile(r"listening on http://(\S+):(\d+) \(HTTP\)")


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class HttpServer:
    """`beanpod serve --http 127.0.0.1:0 ARGS`; `.server` is the beanstalkd side."""

    args: Sequence[str] = ()
    server: SubprocessServer = field(init=False)
    host: str = "127.0.0.1"
    port: int = 0

    def start(self) -> HttpServer:
        self.server = SubprocessServer(["--http", "127.0.0.1:0", *self.args]).start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for line in list(self.server.log):
                if m := HTTP_LISTENING.search(line):
                    self.host, self.port = m.group(1), int(m.group(2))
                    return self
            time.sleep(0.01)
        self.server.stop()
        raise RuntimeError("no HTTP listener:\n" + "".join(self.server.log))

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> Reply:  # fmt: skip
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return Reply(response.status, response.headers, response.read())
        finally:
            conn.close()

    def get(self, path: str, **headers: str) -> Reply:
        return self.request("GET", path, headers=headers)

    def stop(self) -> None:
        self.server.stop()
