"""Where a test server's clients connect: host and port, as greenstalk's address and as a
beanstalk:// URL (the in-process server and the beanstalkd target alike)."""

from __future__ import annotations


class Endpoint:
    host: str
    port: int

    @property
    def address(self) -> tuple[str, int]:
        return (self.host, self.port)

    @property
    def url(self) -> str:
        return f"beanstalk://{self.host}:{self.port}"
