"""Server configuration: what `beanpod serve` was asked to do."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_PORT = 11300
DEFAULT_ADDRESS = "127.0.0.1"  # beanstalkd binds every interface; beanpod stays private


@dataclass(frozen=True)
class ServerConfig:
    address: str = DEFAULT_ADDRESS  # host, or "unix:/path" for a UNIX socket
    port: int = DEFAULT_PORT
    max_job_size: int = 65535
    verbose: int = 0
    use_uvloop: bool = True

    @property
    def unix_path(self) -> str | None:
        return self.address[5:] if self.address.startswith("unix:") else None
